// The runtime-API vadd of the well-known launch write-up: one launch, three memcpys.
// Build: nvcc -arch=sm_90 -o vadd kernels/vadd_main.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main()
{
    const int n = 1 << 20;
    size_t bytes = n * sizeof(float);
    float *ha = (float *)malloc(bytes), *hb = (float *)malloc(bytes), *hc = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) { ha[i] = 1.0f; hb[i] = 2.0f; }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, bytes)); CHECK(cudaMalloc(&b, bytes)); CHECK(cudaMalloc(&c, bytes));
    CHECK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb, bytes, cudaMemcpyHostToDevice));
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) if (hc[i] != 3.0f) { fprintf(stderr, "wrong at %d: %f\n", i, hc[i]); return 1; }
    printf("vadd ok: c[0]=%.1f n=%d\n", hc[0], n);
    return 0;
}
