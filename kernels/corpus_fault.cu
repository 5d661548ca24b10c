// A kernel that stores to an illegal address: the launch itself succeeds, the
// synchronize reports cudaErrorIllegalAddress (700). Usage: corpus_fault [TRUTH.json].
// Exit 0 when the fault was reported as expected.
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only
#include "corpus_common.h"
#endif

__global__ void store_to(int *p, int v) { p[threadIdx.x] = v; }

#ifndef __CUDACC_RTC__   // host side: nvcc only
int main(int argc, char **argv) {
    int *bad = (int *)0x10;   // never mapped on the GPU
    // The ground truth first: after the fault the context is unusable.
    FILE *f = truth_open(argc, argv);
    int first = 1;
    fprintf(f, "\"kernels\": {");
    truth_kernel(f, "store_to", (const void *)store_to, &first);
    fprintf(f, "}, \"launches\": [");
    first = 1;
    truth_launch(f, "store_to", dim3(1), dim3(32), 0, &first);
    store_to<<<1, 32>>>(bad, 42);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    fprintf(f, "], \"args\": {\"p\": 16, \"v\": 42}, \"launch_error\": %d, \"sync_error\": %d, "
            "\"sync_error_name\": \"%s\"}\n", (int)launch, (int)sync, cudaGetErrorName(sync));
    fclose(f);
    printf("fault: launch %s, synchronize %s\n", cudaGetErrorName(launch), cudaGetErrorName(sync));
    return launch == cudaSuccess && sync == cudaErrorIllegalAddress ? 0 : 1;
}
#endif
