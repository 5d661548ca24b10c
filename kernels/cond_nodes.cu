// Kernels for graphs with CONDITIONAL nodes (scripts/corpus/cond_nodes.py, issue 25):
// IF, WHILE and SWITCH bodies that count their own runs, and the kernels that set a
// node's condition from the GPU. cudaGraphSetConditional is a device-runtime builtin: it
// needs no linking with cudadevrt, so NVRTC compiles this file as it is.
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(
    cudaGraphConditionalHandle handle, unsigned int value);

// One body's kernel: hits[slot] counts how many times it ran (read back as truth).
extern "C" __global__ void cn_count(int *hits, int slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&hits[slot], 1);
}

// Sets the condition of `handle` to `value` (a SWITCH's body index, an IF's choice).
extern "C" __global__ void cn_set(cudaGraphConditionalHandle handle, unsigned int value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, value);
}

// *left = trips before a WHILE node starts.
extern "C" __global__ void cn_reset(int *left, int trips) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *left = trips;
}

// The end of a WHILE body: one trip done; the loop goes on while trips are left.
extern "C" __global__ void cn_loop(cudaGraphConditionalHandle handle, int *left) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int now = atomicSub(left, 1) - 1;
        cudaGraphSetConditional(handle, now > 0 ? 1u : 0u);
    }
}
