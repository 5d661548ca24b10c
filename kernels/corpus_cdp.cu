// CUDA dynamic parallelism: `parent` (launched from the host, 4 blocks of 32 threads) has
// thread 0 of each block launch `child` from the GPU (CDP2: a device-side launch into a
// fire-and-forget stream), 4 child grids in all; the host checks their sum. Usage:
// corpus_cdp [TRUTH.json]; built with nvcc -rdc=true -lcudadevrt. Exit 0 when right.
#include "corpus_common.h"

__global__ void child(int *out, int base) {
    atomicAdd(out, base + (int)threadIdx.x);
}
__global__ void parent(int *out) {
    if (threadIdx.x == 0)
        child<<<1, 64, 0, cudaStreamFireAndForget>>>(out, 100 * (int)blockIdx.x);
}

int main(int argc, char **argv) {
    int *out;
    CK(cudaMalloc(&out, sizeof(int)));
    CK(cudaMemset(out, 0, sizeof(int)));
    dim3 grid(4), block(32);
    parent<<<grid, block>>>(out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int got = 0;
    CK(cudaMemcpy(&got, out, sizeof(int), cudaMemcpyDeviceToHost));
    int want = 0;
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 64; t++) want += 100 * b + t;
    FILE *f = truth_open(argc, argv);
    int first = 1;
    fprintf(f, "\"kernels\": {");
    truth_kernel(f, "parent", (const void *)parent, &first);
    truth_kernel(f, "child", (const void *)child, &first);
    fprintf(f, "}, \"launches\": [");
    first = 1;
    truth_launch(f, "parent", grid, block, 0, &first);
    fprintf(f, "], \"device_launches\": [");
    first = 1;
    for (int b = 0; b < 4; b++)
        truth_launch(f, "child", dim3(1), dim3(64), 0, &first);
    fprintf(f, "], \"sum\": %d, \"ok\": %s}\n", got, got == want ? "true" : "false");
    fclose(f);
    printf("cdp sum %d want %d\n", got, want);
    return got == want ? 0 : 1;
}
