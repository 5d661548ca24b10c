"""CuPy: a RawKernel launched with a known grid, block and arguments, a built-in elementwise
operation, a reduction and an ElementwiseKernel."""
import cupy as cp

import _truth

src = r'''
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''
saxpy = cp.RawKernel(src, "saxpy")
n = 1 << 18
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, dtype=cp.float32)
grid, block = ((n + 255) // 256,), (256,)
saxpy(grid, block, (cp.float32(2.0), x, y, cp.int32(n)))
z = x * 3 + y                      # built-in elementwise
s = z.sum()                        # reduction
sq = cp.ElementwiseKernel("float32 a", "float32 b", "b = a * a", "square_k")(x[:1024])
cp.cuda.Device().synchronize()
_truth.write({"launches": [{"kernel": "saxpy", "grid": [grid[0], 1, 1], "block": [256, 1, 1],
                            "args": {"a": 2.0, "x": x.data.ptr, "y": y.data.ptr, "n": n}}]})
print(f"cupy y[10]={float(y[10]):.1f} s={float(s):.1f} sq[3]={float(sq[3]):.1f}")
