"""A job of launch paths the rest of the corpus does not take, STEPS steps (argv[1],
default 20), each step:

- a kernel the driver compiles from PTX: nvcc --ptx once, the .ptx loaded by path
  (cupy.RawModule(path=...): cuModuleLoad of PTX text, the driver's JIT);
- a cooperative kernel with a grid-wide sync (cupy.RawKernel enable_cooperative_groups:
  cuLaunchCooperativeKernel);
- a kernel on managed memory (cudaMallocManaged through a CuPy pool), read on the host;
- PyTorch in the same process and context: nonzero, unique and masked_select (each waits
  for the GPU mid-step), index_add_, scatter_reduce and topk.

The sums of every step's results are printed (the same natively and traced).
TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import subprocess
import sys
import tempfile

import cupy as cp
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")

PTX_SRC = r'''
extern "C" __global__ void saxpy_ptx(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}'''
COOP_SRC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void coop_sum(const float *x, float *partial, float *out, int n) {
    cg::grid_group g = cg::this_grid();
    float s = 0.f;
    for (int i = g.thread_rank(); i < n; i += g.size()) s += x[i];
    atomicAdd(&partial[blockIdx.x], s);
    g.sync();
    if (g.thread_rank() == 0) {
        float t = 0.f;
        for (int b = 0; b < gridDim.x; b++) t += partial[b];
        *out = t;
    }
}'''
MANAGED_SRC = r'''
extern "C" __global__ void square_managed(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
}'''

work = tempfile.mkdtemp(prefix="heldout-mix-")
src = os.path.join(work, "saxpy.cu")
with open(src, "w") as f:
    f.write(PTX_SRC)
ptx = os.path.join(work, "saxpy.ptx")
subprocess.run(["nvcc", "--ptx", "-arch=compute_90", "-o", ptx, src], check=True)
saxpy = cp.RawModule(path=ptx).get_function("saxpy_ptx")
coop = cp.RawKernel(COOP_SRC, "coop_sum", enable_cooperative_groups=True)
square = cp.RawKernel(MANAGED_SRC, "square_managed")
managed_pool = cp.cuda.MemoryPool(cp.cuda.malloc_managed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

n = 1 << 16
rs = cp.random.RandomState(0)
torch.manual_seed(0)
dev = torch.device("cuda")
totals = []
with cupti_truth(truth_path):
    for step in range(steps):
        x = rs.standard_normal(n, dtype=cp.float32)
        y = cp.ones(n, dtype=cp.float32)
        saxpy((n // 256,), (256,), (cp.float32(0.5), x, y, cp.int32(n)))
        partial = cp.zeros(32, dtype=cp.float32)
        out = cp.zeros(1, dtype=cp.float32)
        coop((32,), (128,), (y, partial, out, cp.int32(n)))
        with cp.cuda.using_allocator(managed_pool.malloc):
            m = cp.arange(4096, dtype=cp.float32) / 4096
        square((16,), (256,), (m, cp.int32(4096)))
        cp.cuda.Device().synchronize()
        host_m = float(m[:64].get().sum())
        t = torch.randn(8192, device=dev)
        idx = torch.randint(0, 512, (8192,), device=dev)
        nz = torch.nonzero(t > 1.5).numel()
        uq = torch.unique(idx).numel()
        ms = torch.masked_select(t, t < -1.5).sum().item()
        acc = torch.zeros(512, device=dev).index_add_(0, idx, t)
        red = torch.zeros(512, device=dev).scatter_reduce(0, idx, t, reduce="amax",
                                                          include_self=False)
        top = torch.topk(acc, 8).values.sum().item()
        # (atomics add in no fixed order: the float sums that use them are rounded coarsely)
        totals.append((round(float(out.get()[0])), round(host_m, 4), nz, uq, round(ms, 3),
                       round(top), round(red.sum().item(), 3)))
    torch.cuda.synchronize()
print(f"steps={steps} first={totals[0]} last={totals[-1]}")
