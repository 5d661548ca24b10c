"""Triton on Hopper with TMA: a bf16 matmul whose operands are host-side tensor descriptors
(triton.tools.tensor_descriptor.TensorDescriptor: each a CUtensorMap passed by value, a
128-byte __grid_constant__ argument), and an elementwise kernel with scalar arguments of
three types, STEPS times each (argv[1], default 100); the matmul's result is checked
against torch's and a checksum printed.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([k, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.bfloat16))


@triton.jit
def scale_shift(x_ptr, out_ptr, n, alpha, shift, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * alpha + shift
    y = tl.where(flag != 0, tl.maximum(y, 0.0), y)
    tl.store(out_ptr + offs, y, mask=mask)


M = N = K = 512
BM, BN, BK = 128, 128, 64
torch.manual_seed(0)
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
a_desc = TensorDescriptor.from_tensor(a, [BM, BK])
b_desc = TensorDescriptor.from_tensor(b, [BK, BN])
c_desc = TensorDescriptor.from_tensor(c, [BM, BN])
x = torch.randn(1 << 16, device="cuda")
out = torch.empty_like(x)
total = 0.0
with cupti_truth(truth_path):
    for i in range(steps):
        matmul_tma[(M // BM, N // BN)](a_desc, b_desc, c_desc, K, BM=BM, BN=BN, BK=BK)
        scale_shift[(x.numel() // 1024,)](x, out, x.numel(), 0.5 + i * 1e-3, -0.25, i % 2,
                                          BLOCK=1024)
        if i % 50 == 0:
            total += float(out[:16].sum())
    torch.cuda.synchronize()
ok = torch.allclose(c.float(), (a.float() @ b.float()), atol=0.5, rtol=0.05)
print(f"steps={steps} matmul_ok={ok} total={total:.3f}")
