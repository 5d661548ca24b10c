/*
 * Kernels for the launch-path corpus (issue 16): graph kernel nodes changed between
 * replays, launches with `extra`, cooperative launches and library kernels.
 * Invariants: extern "C" names; no #include (NVRTC); each kernel's effect is checkable.
 */
extern "C" __global__ void gn_scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] * a;
}

extern "C" __global__ void gn_offset(float *x, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] + b;
}

/* Mixed argument sizes, so `extra` buffers and constant bank 0 offsets are not all 8-byte. */
struct gn_pair { int k; double v; };
extern "C" __global__ void gn_mixed(float *x, char c, struct gn_pair p, short s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = x[i] + (float)c + (float)p.k + (float)p.v + (float)s;
}
