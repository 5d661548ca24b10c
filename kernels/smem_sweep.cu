/*
 * Kernels for the shared-memory allocation sweep (issue 16): how the driver turns a
 * launch's static and dynamic shared memory into the QMD's SHARED_MEMORY_SIZE and SM
 * configuration fields on the H100. scripts/corpus/smem_sweep.py launches them.
 *
 * Invariants: extern "C" names (found without demangling); no #include (NVRTC); every
 * kernel touches its shared memory and writes a result, so ptxas keeps the arrays.
 */
extern "C" __global__ void sm_dyn(unsigned *out, unsigned nwords)
{
    extern __shared__ unsigned sm_dyn_buf[];
    if (threadIdx.x < nwords)
        sm_dyn_buf[threadIdx.x] = threadIdx.x + blockIdx.x;
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = nwords ? sm_dyn_buf[nwords - 1 < blockDim.x ? nwords - 1 : 0] : 0u;
}

#define TL_STATIC(N)                                                                  \
    extern "C" __global__ void sm_static_##N(unsigned *out, unsigned nwords)          \
    {                                                                                 \
        __shared__ unsigned char buf[N];                                              \
        extern __shared__ unsigned dyn[];                                             \
        buf[threadIdx.x % (N)] = (unsigned char)(threadIdx.x + blockIdx.x);           \
        if (threadIdx.x < nwords)                                                     \
            dyn[threadIdx.x] = threadIdx.x;                                           \
        __syncthreads();                                                              \
        if (threadIdx.x == 0)                                                         \
            out[blockIdx.x] = buf[(blockIdx.x * 7u) % (N)] + (nwords ? dyn[0] : 0u);  \
    }
TL_STATIC(4)
TL_STATIC(1000)
TL_STATIC(1024)
TL_STATIC(1068)
TL_STATIC(4096)
TL_STATIC(8720)
TL_STATIC(33800)
TL_STATIC(49152)

/* A cluster launch with dynamic shared memory (cuLaunchKernelEx, cluster attribute). */
extern "C" __global__ void sm_cluster(unsigned *out, unsigned nwords)
{
    extern __shared__ unsigned sm_cl_buf[];
    if (threadIdx.x < nwords)
        sm_cl_buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = nwords ? sm_cl_buf[0] + 1u : 1u;
}
