"""A whole training step captured as one CUDA graph and replayed (PyTorch's "whole-network
capture"): an MLP (4 Linear layers, d=512, GELU, bf16 autocast), cross-entropy,
AdamW(capturable=True); warm-up on a side stream, one torch.cuda.graph capture, then
STEPS replays (argv[1], default 100) on fresh inputs copied into the static tensors.
A long job whose launches come almost all from graph replays.

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]: scripts/record.py real) profiles the whole run with torch.profiler (CUPTI) and writes every
kernel's name, grid, block, registers and shared memory, counted, with graph-node counts."""
import os
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
d, batch, classes = 512, 256, 100
model = torch.nn.Sequential(
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, d), torch.nn.GELU(),
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, classes)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
static_x = torch.randn(batch, d, device="cuda")
static_y = torch.randint(0, classes, (batch,), device="cuda")


def step():
    opt.zero_grad(set_to_none=False)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(static_x).float(), static_y)
    loss.backward()
    opt.step()
    return loss


gen = torch.Generator(device="cuda").manual_seed(1)
xs = torch.randn(8, batch, d, device="cuda", generator=gen)
ys = torch.randint(0, classes, (8, batch), device="cuda", generator=gen)
graph = torch.cuda.CUDAGraph()
static_loss = None


def capture():
    global static_loss
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):           # warm-up outside the capture, as torch requires
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        static_loss = step()


def replay(i):
    static_x.copy_(xs[i % 8])
    static_y.copy_(ys[i % 8])
    graph.replay()
    return static_loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _train import train  # noqa: E402

train(steps, replay, truth_path, setup=capture)
