/*
 * Kernels for the launch-shape corpus (issue 6).
 *
 * Invariants:
 *  - Every kernel is extern "C", so its cubin symbol is its C name and the host side
 *    finds it with cuModuleGetFunction without demangling.
 *  - No #include: the file builds unchanged with nvcc and with NVRTC (which has no
 *    host headers); scripts/build_cubin_fixtures.sh checks both.
 *  - Each kernel writes what it saw to `out`, so a capture's manifest can hold the
 *    ground truth (grid, block, cluster, arguments) that the decoders are checked against.
 *  - sm_90-only features (clusters) are behind __CUDA_ARCH__ >= 900, so the same file
 *    also builds for sm_80/sm_89 fixtures.
 */

/* 1D: out[i] = i for every thread of the grid (the simplest launch). */
extern "C" __global__ void tl_1d(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i;
}

/*
 * 2D/3D grid and block: each thread writes its block and thread coordinates, so every
 * one of blockIdx.{x,y,z}, threadIdx.{x,y,z}, blockDim.* and gridDim.* is read.
 * __launch_bounds__(1024) is the hardware limit anyway; it makes ptxas record
 * EIATTR_MAX_THREADS, which the cubin decoder reports. The small indexed array lands in
 * local memory, so the cubin has a non-zero frame size for the decoder to find.
 */
extern "C" __global__ void __launch_bounds__(1024) tl_grid3d(unsigned *out)
{
    unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    unsigned i = block * per_block + thread;
    unsigned coord[16];
    /* Written at a run-time index, so ptxas keeps the array in local memory. */
    for (unsigned k = 0; k < 16; k++)
        coord[(thread + k) & 15] = k * per_block;
    coord[thread & 15] = threadIdx.x | (threadIdx.y << 10) | (threadIdx.z << 20);
    out[2 * i] = blockIdx.x | (blockIdx.y << 16);
    out[2 * i + 1] = blockIdx.z | (coord[(thread * 7) & 15] << 16);
}

/*
 * Dynamic shared memory: `nwords` 32-bit words given at launch (sharedMemBytes); above
 * 48 KiB the host must first raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
 * A small static array as well, so the cubin has a .nv.shared.tl_dynsmem section.
 */
extern "C" __global__ void tl_dynsmem(unsigned *out, unsigned nwords)
{
    extern __shared__ unsigned tl_dyn[];
    __shared__ unsigned tl_static[64];
    for (unsigned w = threadIdx.x; w < nwords; w += blockDim.x)
        tl_dyn[w] = w * 2654435761u;
    if (threadIdx.x < 64)
        tl_static[threadIdx.x] = threadIdx.x;
    __syncthreads();
    unsigned sum = tl_static[threadIdx.x & 63];
    for (unsigned w = threadIdx.x; w < nwords; w += blockDim.x)
        sum += tl_dyn[nwords - 1 - w];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/* Cluster special registers (PTX ISA 7.8, sm_90); zero on older targets. */
__device__ static unsigned tl_cluster_ctarank(void)
{
    unsigned v = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v));
#endif
    return v;
}

__device__ static unsigned tl_cluster_nctarank(void)
{
    unsigned v = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v));
#endif
    return v;
}

__device__ static unsigned tl_clusterid_x(void)
{
    unsigned v = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v));
#endif
    return v;
}

/*
 * Cluster kernel: no __cluster_dims__, the cluster shape is chosen at launch with
 * cuLaunchKernelEx (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION). Thread 0 of each block
 * writes (cluster id, rank in cluster, cluster size).
 */
extern "C" __global__ void tl_cluster(unsigned *out)
{
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        out[3 * b] = tl_clusterid_x();
        out[3 * b + 1] = tl_cluster_ctarank();
        out[3 * b + 2] = tl_cluster_nctarank();
    }
}

/*
 * The same with a compile-time cluster shape (2,1,1), so ptxas records the required
 * cluster dimensions in .nv.info for the decoder (sm_90 and newer only).
 */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
extern "C" __global__ void __cluster_dims__(2, 1, 1) tl_cluster_fixed(unsigned *out)
{
    if (threadIdx.x == 0)
        out[blockIdx.x] = tl_cluster_ctarank() | (tl_cluster_nctarank() << 16);
}
#endif

/*
 * A struct passed by value, mixed types. C layout (LP64, natural alignment):
 * c @0, s @2, i @4, ll @8, f @16, d @24, tail @32..34; size 40, alignment 8.
 * tests/test_cubin.py checks the cubin's parameter offsets against this layout.
 */
struct tl_mixed {
    char c;
    short s;
    int i;
    long long ll;
    float f;
    double d;
    unsigned char tail[3];
};

/*
 * Arguments: (int, double, pointer, struct by value). Parameter offsets: 0, 8, 16, 24;
 * 64 bytes of parameters. Thread 0 of block 0 writes every value it received to `out`
 * (which is also the pointer argument), one 64-bit slot each:
 * [0] i, [1] bits of d, [2] out itself, [3] s.c, [4] s.s, [5] s.i, [6] s.ll,
 * [7] bits of s.f, [8] bits of s.d, [9] s.tail[0] | tail[1] << 8 | tail[2] << 16.
 */
extern "C" __global__ void tl_args(int i, double d, unsigned long long *out, struct tl_mixed s)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    out[0] = (unsigned long long)(long long)i;
    out[1] = (unsigned long long)__double_as_longlong(d);
    out[2] = (unsigned long long)out;
    out[3] = (unsigned long long)(long long)s.c;
    out[4] = (unsigned long long)(long long)s.s;
    out[5] = (unsigned long long)(long long)s.i;
    out[6] = (unsigned long long)s.ll;
    out[7] = (unsigned long long)__float_as_uint(s.f);
    out[8] = (unsigned long long)__double_as_longlong(s.d);
    out[9] = (unsigned long long)s.tail[0] | ((unsigned long long)s.tail[1] << 8) |
             ((unsigned long long)s.tail[2] << 16);
}

/* Empty: the launch-overhead benchmark launches this and nothing else. */
extern "C" __global__ void tl_empty(void)
{
}
