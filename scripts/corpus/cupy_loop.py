"""A CuPy job of many steps: each step an rfft/irfft pair (cuFFT), a RawKernel, an
ElementwiseKernel, a reduction and a matmul (cuBLAS) on 2^16 floats, STEPS steps
(argv[1], default 100), reading back 16 values a step; their sum is printed.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import cupy as cp

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
n = 1 << 16
scale = cp.RawKernel(r'''
extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a;
}''', "scale")
axpb = cp.ElementwiseKernel("float32 x, float32 a, float32 b", "float32 y", "y = a * x + b",
                            "axpb")
rs = cp.random.RandomState(0)
x = rs.standard_normal(n, dtype=cp.float32)
m = rs.standard_normal((128, 128), dtype=cp.float32)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

total = 0.0
with cupti_truth(truth_path):
    for i in range(steps):
        y = cp.fft.irfft(cp.fft.rfft(x), n=n)
        scale((n // 256,), (256,), (y, cp.float32(0.5), cp.int32(n)))
        z = axpb(y, cp.float32(2.0), cp.float32(1.0))
        m = cp.tanh(m @ m * 0.01)
        total += float(z[:16].sum())
    cp.cuda.Device().synchronize()
print(f"steps={steps} total={total:.3f} m={float(m.sum()):.3f}")
