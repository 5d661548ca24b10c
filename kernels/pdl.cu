/*
 * Kernels for programmatic dependent launch (PDL, Hopper): a producer that lets its
 * dependent start early (griddepcontrol.launch_dependents) and a consumer that waits for
 * the producer's memory before reading it (griddepcontrol.wait). Libraries on sm_90
 * (cuBLASLt, FlashAttention-3, TensorRT-LLM) launch this way.
 * Invariants: extern "C" names; no #include (NVRTC); each kernel's effect is checkable.
 */
extern "C" __global__ void pdl_produce(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = v + (float)(i & 1023);
    asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void pdl_consume(const float *x, float *y, float a, int n)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}
