"""A small transformer training job (issue 24's scaling run): two nn.TransformerEncoderLayer
(d=256, 4 heads, bf16 autocast, scaled_dot_product_attention inside), AdamW(fused=True),
batch 16x128 of synthetic tokens, STEPS steps (argv[1], default 100).

Each step is an NVTX range named "step" (torch.cuda.nvtx), so capture windows can pick
steps by name. TL_PROFILE_STEPS=A:B calls cudaProfilerStart before step A and
cudaProfilerStop after step B-1. TL_CUPTI_TRUTH=PATH profiles the whole run with
torch.profiler (CUPTI) and writes every kernel's name, grid, block, registers and shared
memory, counted, as independent ground truth. TL_KEEP_LOSSES=1 keeps every step's loss
tensor on the GPU (a job that logs losses without .item(): its live allocations grow with
its steps; with PYTORCH_NO_CUDA_MEMORY_CACHING=1 each tensor is a cuMemAlloc of its own).
TL_SDPA=cudnn (or flash, efficient, math; several comma-separated) runs the attention on
those scaled_dot_product_attention backends only: cudnn is cuDNN's fused attention
(torch.nn.attention.sdpa_kernel)."""
import os
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
window = os.environ.get("TL_PROFILE_STEPS")
a, b = (int(x) for x in window.split(":")) if window else (-1, -1)
truth_path = os.environ.get("TL_CUPTI_TRUTH")
kept = [] if os.environ.get("TL_KEEP_LOSSES") == "1" else None

torch.manual_seed(0)
d, heads, batch, seq = 256, 4, 16, 128
model = torch.nn.Sequential(
    torch.nn.Embedding(1000, d),
    torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, batch_first=True,
                                         dropout=0.0), num_layers=2, enable_nested_tensor=False),
    torch.nn.Linear(d, 1000)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
x = torch.randint(0, 1000, (batch, seq), device="cuda")
y = torch.roll(x, 1, dims=1)


def _sdpa(names):
    """The sdpa_kernel context for TL_SDPA's backends, or a context that does nothing."""
    import contextlib
    if not names:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    pick = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
    return sdpa_kernel([pick[n.strip()] for n in names.split(",")])


sdpa = os.environ.get("TL_SDPA", "")


def step():
    with _sdpa(sdpa):
        return _step()


def _step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out.float().view(-1, 1000), y.view(-1))
    loss.backward()
    opt.step()
    return loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

first = None
with cupti_truth(truth_path):
    for i in range(steps):
        if i == a:
            torch.cuda.cudart().cudaProfilerStart()
        with torch.cuda.nvtx.range("step"):
            loss = step()
        if kept is not None:
            kept.append(loss.detach())
        if i == b - 1:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
        if first is None:
            first = loss.item()
    torch.cuda.synchronize()
last = loss.item()
print(f"steps={steps} loss_decreased={last < first}" +
      (f" losses_kept={len(kept)}" if kept is not None else ""))
