"""Attention trained through cuDNN's fused attention: a causal self-attention block
(qkv and output projections, bf16) whose scaled_dot_product_attention is pinned to
SDPBackend.CUDNN_ATTENTION (kernels cuDNN builds at run time), forward and backward,
AdamW, STEPS steps (argv[1], default 100); the loss before and after is printed.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

torch.manual_seed(0)
B, T, H, D = 8, 256, 8, 64
qkv = torch.nn.Linear(H * D, 3 * H * D).cuda().bfloat16()
proj = torch.nn.Linear(H * D, H * D).cuda().bfloat16()
opt = torch.optim.AdamW(list(qkv.parameters()) + list(proj.parameters()), lr=1e-3)
x = torch.randn(B, T, H * D, device="cuda", dtype=torch.bfloat16)
target = torch.randn(B, T, H * D, device="cuda", dtype=torch.bfloat16)


def step():
    q, k, v = qkv(x).view(B, T, 3, H, D).permute(2, 0, 3, 1, 4)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    loss = F.mse_loss(proj(o.transpose(1, 2).reshape(B, T, H * D)).float(), target.float())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


first = float(step())
with cupti_truth(truth_path):
    for _ in range(steps):
        loss = step()
    torch.cuda.synchronize()
print(f"steps={steps} loss_decreased={float(loss) < first}")
