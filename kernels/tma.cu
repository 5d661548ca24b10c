/*
 * Kernels that take Hopper TMA descriptors (CUtensorMap, 128 bytes, 64-byte aligned) by
 * value as __grid_constant__ parameters, as CUTLASS, FlashAttention-3 and Triton's TMA
 * kernels do. tma_tile copies one 2D box of 32-bit elements from global memory into shared
 * memory with the tensor memory accelerator (cp.async.bulk.tensor, completion counted on an
 * mbarrier), then writes it out row after row: its output says the map was used as made.
 * tma_prefetch takes two maps and prefetches both (prefetch.tensormap).
 * Invariants: extern "C" names; no #include (NVRTC); sm_90 or newer.
 */
struct __align__(64) TmaDesc { unsigned long long opaque[16]; };

#define TILE_X 64
#define TILE_Y 32

extern "C" __global__ void tma_tile(const __grid_constant__ TmaDesc map, float *out, int x0, int y0)
{
    __shared__ __align__(128) float tile[TILE_Y * TILE_X];
    __shared__ __align__(8) unsigned long long bar;
    unsigned bar_a = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned tile_a = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_a));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(bar_a), "r"(TILE_Y * TILE_X * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(tile_a), "l"(&map), "r"(x0), "r"(y0), "r"(bar_a) : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;"
                     " selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar_a) : "memory");
    for (int i = threadIdx.x; i < TILE_Y * TILE_X; i += blockDim.x)
        out[i] = tile[i];
}

extern "C" __global__ void tma_prefetch(const __grid_constant__ TmaDesc a,
                                        const __grid_constant__ TmaDesc b, int *flag)
{
    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];" :: "l"(&a) : "memory");
        asm volatile("prefetch.tensormap [%0];" :: "l"(&b) : "memory");
        flag[blockIdx.x] = 1;
    }
}
