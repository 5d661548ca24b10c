"""CuPy's own CUDA graphs: a RawKernel and in-place elementwise kernels captured on a
non-blocking stream (Stream.begin_capture / end_capture), the graph replayed STEPS times
(argv[1], default 100) with a host function queued on the stream every 10th replay
(Stream.launch_host_func) and the result read back every 50th; a checksum printed.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import cupy as cp

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

n = 1 << 16
saxpy = cp.RawKernel(r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}''', "saxpy")
x = cp.linspace(-1, 1, n, dtype=cp.float32)
y = cp.zeros(n, dtype=cp.float32)
stream = cp.cuda.Stream(non_blocking=True)
calls = []


def host(arg):
    calls.append(arg)


def body():
    saxpy((n // 256,), (256,), (cp.float32(0.5), x, y, cp.int32(n)))
    cp.tanh(y, out=y)
    cp.multiply(y, 0.99, out=y)


with stream:
    body()                      # compile and load everything outside the capture
    stream.synchronize()
    y.fill(0)
    stream.begin_capture()
    body()
    body()
    graph = stream.end_capture()
total = 0.0
with cupti_truth(truth_path):
    for i in range(steps):
        graph.launch(stream)
        if i % 10 == 0:
            stream.launch_host_func(host, i)
        if i % 50 == 0:
            stream.synchronize()
            total += float(y[:16].sum())
    stream.synchronize()
print(f"steps={steps} host_calls={len(calls)} total={total:.4f}")
