// Shared by the corpus programs (kernels/corpus_*.cu): error checks, and the ground truth
// each one writes at capture time: launch configurations as passed, and each kernel's
// parameter layout as the driver reports it (cuFuncGetParamInfo).
#pragma once
#ifndef __CUDACC_RTC__   // NVRTC compiles the kernels only: the host side is for nvcc
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(3); } } while (0)

static FILE *truth_open(int argc, char **argv) {
    FILE *f = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
    if (!f) { perror("truth"); exit(2); }
    fprintf(f, "{");
    return f;
}

// "name": {"params": [[offset, size], ...]} for a __global__ function.
static void truth_kernel(FILE *f, const char *name, const void *sym, int *first) {
    cudaFunction_t fn;
    CK(cudaGetFuncBySymbol(&fn, sym));
    fprintf(f, "%s\"%s\": {\"params\": [", *first ? "" : ", ", name);
    for (size_t i = 0;; i++) {
        size_t off, size;
        if (cuFuncGetParamInfo((CUfunction)fn, i, &off, &size) != CUDA_SUCCESS) break;
        fprintf(f, "%s[%zu, %zu]", i ? ", " : "", off, size);
    }
    fprintf(f, "]}");
    *first = 0;
}

static void truth_launch(FILE *f, const char *kernel, dim3 g, dim3 b, size_t smem, int *first) {
    fprintf(f, "%s{\"kernel\": \"%s\", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], "
            "\"shared_mem_dynamic\": %zu}", *first ? "" : ", ", kernel, g.x, g.y, g.z, b.x, b.y, b.z, smem);
    *first = 0;
}
#endif  // __CUDACC_RTC__
