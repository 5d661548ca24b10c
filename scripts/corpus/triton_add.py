"""A plain @triton.jit vector add, launched three times; the truth is the launch grid,
num_warps and the tensors' device addresses, known to the program."""
import torch
import triton
import triton.language as tl

import _truth


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


n = 100_000
x = torch.arange(n, device="cuda", dtype=torch.float32)
y = torch.full((n,), 2.0, device="cuda")
out = torch.empty_like(x)
launches = []
for block in (1024, 1024, 256):
    grid = (triton.cdiv(n, block),)
    add_kernel[grid](x, y, out, n, BLOCK=block, num_warps=4)
    launches.append({"kernel": "add_kernel", "grid": [grid[0], 1, 1], "block": [128, 1, 1],
                     "args": {"x_ptr": x.data_ptr(), "y_ptr": y.data_ptr(),
                              "out_ptr": out.data_ptr(), "n": n}})
torch.cuda.synchronize()
_truth.write({"launches": launches, "triton": triton.__version__})
print(f"triton out[-1]={out[-1].item():.1f} ok={bool(torch.equal(out, x + 2))}")
