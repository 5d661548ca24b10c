// Copy-engine work: memcpy H2D, D2D, D2H (pageable and pinned) and memset, checked.
// Usage: corpus_memcpy [TRUTH.json]. Exit 0 when every byte is right.
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only
#include "corpus_common.h"
#include <string.h>
#endif

#ifndef __CUDACC_RTC__   // host side: nvcc only
int main(int argc, char **argv) {
    const size_t n = 1 << 20;   // bytes
    unsigned char *src = (unsigned char *)malloc(n), *dst = (unsigned char *)malloc(n), *pinned;
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 31 + 7);
    CK(cudaMallocHost(&pinned, n));
    unsigned char *d1, *d2;
    CK(cudaMalloc(&d1, n));
    CK(cudaMalloc(&d2, n));
    CK(cudaMemcpy(d1, src, n, cudaMemcpyHostToDevice));          // H2D pageable
    CK(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice));         // D2D
    CK(cudaMemcpy(dst, d2, n, cudaMemcpyDeviceToHost));          // D2H pageable
    int ok = memcmp(src, dst, n) == 0;
    CK(cudaMemset(d1, 0x5A, n));                                  // memset
    CK(cudaMemcpyAsync(pinned, d1, n, cudaMemcpyDeviceToHost, 0)); // D2H pinned, async
    CK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i++) ok &= pinned[i] == 0x5A;
    FILE *f = truth_open(argc, argv);
    fprintf(f, "\"bytes\": %zu, \"operations\": [\"memcpy H2D\", \"memcpy D2D\", \"memcpy D2H\", "
            "\"memset 0x5A\", \"memcpyAsync D2H pinned\"], \"ok\": %s}\n", n, ok ? "true" : "false");
    fclose(f);
    printf("memcpy: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
#endif
