// Two streams with an event dependency: produce on s1, record e, s2 waits for e, consume
// on s2. Usage: corpus_streams [TRUTH.json]. Exit 0 when the result is right.
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only
#include "corpus_common.h"
#endif

__global__ void produce(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = i;
}
__global__ void consume(const int *a, int *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = 3 * a[i];
}

#ifndef __CUDACC_RTC__   // host side: nvcc only
int main(int argc, char **argv) {
    const int n = 1 << 20;
    int *a, *b;
    CK(cudaMalloc(&a, n * sizeof(int)));
    CK(cudaMalloc(&b, n * sizeof(int)));
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t e;
    CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    dim3 grid(n / 256), block(256);
    produce<<<grid, block, 0, s1>>>(a, n);
    CK(cudaEventRecord(e, s1));
    CK(cudaStreamWaitEvent(s2, e, 0));
    consume<<<grid, block, 0, s2>>>(a, b, n);
    CK(cudaStreamSynchronize(s2));
    int h[2];
    CK(cudaMemcpy(h, b + n - 2, sizeof h, cudaMemcpyDeviceToHost));
    int ok = h[0] == 3 * (n - 2) && h[1] == 3 * (n - 1);
    FILE *f = truth_open(argc, argv);
    int first = 1;
    fprintf(f, "\"kernels\": {");
    truth_kernel(f, "produce", (const void *)produce, &first);
    truth_kernel(f, "consume", (const void *)consume, &first);
    fprintf(f, "}, \"launches\": [");
    first = 1;
    truth_launch(f, "produce", grid, block, 0, &first);
    truth_launch(f, "consume", grid, block, 0, &first);
    fprintf(f, "], \"streams\": 2, \"events\": 1, \"args\": {\"n\": %d}, \"ok\": %s}\n", n, ok ? "true" : "false");
    fclose(f);
    printf("streams: b[n-1] = %d (%s)\n", h[1], ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
#endif
