"""PyTorch through the CUDA libraries under it, each a few times (the corpus for kernels
that libraries load and launch themselves): cuDNN (conv2d forward and backward, with
benchmark off so the choice is deterministic), cuBLAS/cuBLASLt (bf16 and fp32 matmul,
batched bmm), cuFFT (torch.fft.rfft and irfft of 2 sizes), CUB (sort, cumsum), cuSOLVER
(a Cholesky factorisation) and cuSPARSE (a CSR sparse x dense matmul), then a check of
each result on the host. CUPTI (torch.profiler) is the independent truth: every kernel's
name, grid, block, registers and shared memory.

Usage: python3 scripts/corpus/torch_libs.py [TRUTH.json]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

truth = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
torch.backends.cudnn.benchmark = False
torch.manual_seed(0)
dev = "cuda"
x = torch.randn(8, 16, 32, 32, device=dev, requires_grad=True)
conv = torch.nn.Conv2d(16, 32, 3, padding=1).to(dev)
a, b = torch.randn(256, 512, device=dev), torch.randn(512, 128, device=dev)
ab, bb = a.bfloat16(), b.bfloat16()
ba, bb3 = torch.randn(4, 64, 96, device=dev), torch.randn(4, 96, 32, device=dev)
sig = [torch.randn(n, device=dev) for n in (1024, 3000)]
keys = torch.randn(100000, device=dev)
m = torch.randn(64, 64, device=dev)
spd = m @ m.T + 64 * torch.eye(64, device=dev)
dense = torch.randn(200, 300, device=dev)
dense[dense.abs() < 1.0] = 0
sp = dense.to_sparse_csr()
rhs = torch.randn(300, 40, device=dev)
ok = []
with cupti_truth(truth):
    for _ in range(2):
        y = conv(x)
        y.sum().backward()
        c = a @ b
        cb = ab @ bb
        cbm = torch.bmm(ba, bb3)
        spec = [torch.fft.rfft(s) for s in sig]
        back = [torch.fft.irfft(f, n=s.numel()) for f, s in zip(spec, sig)]
        srt, _ = torch.sort(keys)
        cs = torch.cumsum(keys, 0)
        chol = torch.linalg.cholesky(spd)
        spm = sp @ rhs
    torch.cuda.synchronize()
ok.append(torch.allclose(c.cpu(), a.cpu() @ b.cpu(), rtol=1e-3, atol=1e-3))
ok.append(torch.allclose(cb.float().cpu(), ab.float().cpu() @ bb.float().cpu(), rtol=3e-2, atol=3e-1))
ok.append(torch.allclose(cbm.cpu(), torch.bmm(ba.cpu(), bb3.cpu()), rtol=1e-3, atol=1e-3))
ok.append(all(torch.allclose(r.cpu(), s.cpu(), atol=1e-4) for r, s in zip(back, sig)))
ok.append(bool((srt[1:] >= srt[:-1]).all()))
ok.append(torch.allclose(cs.cpu(), torch.cumsum(keys.cpu(), 0), rtol=1e-3, atol=1e-2))
ok.append(torch.allclose((chol @ chol.T).cpu(), spd.cpu(), rtol=1e-3, atol=1e-2))
ok.append(torch.allclose(spm.cpu(), dense.cpu() @ rhs.cpu(), rtol=1e-3, atol=1e-3))
ok.append(x.grad is not None and bool(torch.isfinite(x.grad).all()))
print(f"torch libs: {'ok' if all(ok) else 'WRONG ' + str(ok)} conv={tuple(y.shape)} "
      f"fft={[tuple(s.shape) for s in spec]}")
sys.exit(0 if all(ok) else 1)
