"""A third job of library paths the rest of the corpus does not take (session 37), STEPS
steps (argv[1], default 20), each step:

- CuPy's libraries: cuRAND (cupy.random), cuSPARSE (a CSR matrix times a vector and a
  sparse-dense product), CUB (cupy.sort, cupy.cumsum), a ReductionKernel, and a RawKernel
  with 80 KB of dynamic shared memory (past the 48 KB default: cudaFuncSetAttribute first);
- PyTorch's sorting and selection kernels (torch.sort, topk, unique, nonzero: CUB radix
  sort and scans, with a device-to-host sync), multinomial sampling, index_add_ (atomics),
  embedding_bag, a 3D convolution, and a bf16 linear layer;
- a CUDA graph captured across two streams (a fork and a join inside the capture),
  replayed every step.

What each step computed is printed (the same natively and traced). TL_CUPTI_TRUTH=PATH (or
PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI) and writes every
kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import cupy
import cupyx.scipy.sparse as sparse
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")

SMEM = 80 * 1024
BIG_SMEM = cupy.RawKernel(r'''
extern "C" __global__ void big_smem_sum(const float *x, float *out, int n) {
    extern __shared__ float buf[];             // 80 KB: 20,480 floats
    const int per = 20480;
    for (int i = threadIdx.x; i < per; i += blockDim.x)
        buf[i] = (blockIdx.x * per + i < n) ? x[blockIdx.x * per + i] : 0.0f;
    __syncthreads();
    float s = 0.0f;
    for (int i = threadIdx.x; i < per; i += blockDim.x) s += buf[i];
    atomicAdd(out, s);
}''', "big_smem_sum")
BIG_SMEM.max_dynamic_shared_size_bytes = SMEM
SUMSQ = cupy.ReductionKernel("T x", "T y", "x * x", "a + b", "y = a", "0", "sumsq")

dev = torch.device("cuda")
torch.manual_seed(0)
cupy.random.seed(0)
rs = cupy.random.RandomState(1)
emb = torch.nn.EmbeddingBag(1000, 64, mode="sum").to(dev)
conv = torch.nn.Conv3d(4, 8, 3, padding=1).to(dev)
lin = torch.nn.Linear(256, 256).to(dev, torch.bfloat16)

# a graph whose capture forks onto a second stream and joins back
gx = torch.randn(1024, device=dev)
side = torch.cuda.Stream()
warm = torch.cuda.Stream()
warm.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warm):
    (gx * 2).sum()
torch.cuda.current_stream().wait_stream(warm)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    a = gx * 3.0
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        b = torch.sin(gx)
    c = torch.cos(gx)
    torch.cuda.current_stream().wait_stream(side)
    gy = a + b + c

with cupti_truth(truth_path):
    rows = []
    for step in range(steps):
        # CuPy: cuRAND, cuSPARSE, CUB, a reduction, 80 KB of dynamic shared memory
        x = rs.standard_normal(1 << 16, dtype=cupy.float32)
        m = sparse.random(512, 512, density=0.02, format="csr", dtype=cupy.float32,
                          random_state=step)
        v = cupy.arange(512, dtype=cupy.float32) / 512
        spmv = float((m @ v).sum())
        spmm = float((m @ cupy.ones((512, 8), dtype=cupy.float32)).sum())
        srt = cupy.sort(x)
        csum = float(cupy.cumsum(x)[-1])
        sq = float(SUMSQ(x))
        out = cupy.zeros(1, dtype=cupy.float32)
        BIG_SMEM((4,), (256,), (x, out, cupy.int32(x.size)), shared_mem=SMEM)
        big = float(out[0])
        # PyTorch: sorting, selection, sampling, atomics, embedding bags, conv3d, bf16
        t = torch.randn(4096, device=dev)
        vals, _ = torch.sort(t)
        top = torch.topk(t, 16).values.sum().item()
        uniq = torch.unique(torch.randint(0, 100, (2048,), device=dev)).numel()
        nz = torch.nonzero(t > 1.0).shape[0]
        samp = torch.multinomial(torch.softmax(t[:256], 0), 32, replacement=True).sum().item()
        acc = torch.zeros(64, device=dev).index_add_(0, torch.arange(4096, device=dev) % 64, t)
        bag = emb(torch.randint(0, 1000, (256,), device=dev),
                  torch.arange(0, 256, 8, device=dev)).sum().item()
        vol = conv(torch.randn(2, 4, 8, 16, 16, device=dev)).mean().item()
        lo = lin(torch.randn(64, 256, device=dev, dtype=torch.bfloat16)).float().mean().item()
        gx.copy_(t[:1024])
        graph.replay()
        rows.append((round(spmv, 2), round(spmm, 2), round(float(srt[0] - srt[-1]), 3),
                     round(csum, 2), round(sq, 1), round(big, 1), round(vals[-1].item(), 3),
                     round(top, 3), uniq, nz, samp, round(acc.sum().item(), 2), round(bag, 2),
                     round(vol, 4), round(lo, 3), round(gy.sum().item(), 2)))
    torch.cuda.synchronize()
    cupy.cuda.runtime.deviceSynchronize()
print(f"steps={steps} first={rows[0]} last={rows[-1]}")
