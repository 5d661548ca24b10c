"""CuPy through cuBLAS, cuSOLVER, cuRAND and CUB (the corpus for library kernels CuPy loads
itself): a float32 and a float64 matmul, a batched matmul, a Cholesky solve, an SVD, a
cuRAND normal draw, a sort and a sum, twice each, then a check on the host. CUPTI
(torch.profiler) is the independent truth: every kernel the process ran.

Usage: python3 scripts/corpus/cupy_linalg.py [TRUTH.json]"""
import os
import sys

import cupy as cp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

truth = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
rs = np.random.RandomState(0)
a32, b32 = cp.asarray(rs.randn(200, 300).astype(np.float32)), cp.asarray(rs.randn(300, 50).astype(np.float32))
a64 = cp.asarray(rs.randn(128, 128))
ba, bb = cp.asarray(rs.randn(4, 32, 48).astype(np.float32)), cp.asarray(rs.randn(4, 48, 16).astype(np.float32))
m = cp.asarray(rs.randn(64, 64))
spd = m @ m.T + 64 * cp.eye(64)
rhs = cp.asarray(rs.randn(64, 3))
keys = cp.asarray(rs.randn(50000).astype(np.float32))
gen = cp.random.RandomState(seed=1)
with cupti_truth(truth):
    for _ in range(2):
        c32 = a32 @ b32
        c64 = a64 @ a64.T
        cb = cp.matmul(ba, bb)
        sol = cp.linalg.solve(spd, rhs)
        s = cp.linalg.svd(m, compute_uv=False)
        r = gen.standard_normal(10000, dtype=cp.float32)
        srt = cp.sort(keys)
        tot = keys.sum()
    cp.cuda.Device().synchronize()
ok = [np.allclose(c32.get(), a32.get() @ b32.get(), rtol=1e-3, atol=1e-3),
      np.allclose(c64.get(), a64.get() @ a64.get().T),
      np.allclose(cb.get(), np.matmul(ba.get(), bb.get()), rtol=1e-3, atol=1e-3),
      np.allclose(spd.get() @ sol.get(), rhs.get(), atol=1e-6),
      np.allclose(s.get(), np.linalg.svd(m.get(), compute_uv=False)),
      abs(float(r.mean())) < 0.1, bool((srt[1:] >= srt[:-1]).all()),
      abs(float(tot) - float(keys.get().astype(np.float64).sum())) < 1e-1]
print(f"cupy linalg: {'ok' if all(ok) else 'WRONG ' + str(ok)}")
sys.exit(0 if all(ok) else 1)
