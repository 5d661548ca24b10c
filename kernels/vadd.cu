// The built-in launch: c[i] = a[i] + b[i]. extern "C" keeps the symbol unmangled so the
// driver API finds it by name after NVRTC compiles this file at run time.
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
