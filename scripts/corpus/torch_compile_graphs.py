"""torch.compile(mode="reduce-overhead") of a small MLP's training step: inductor's Triton
kernels, replayed from CUDA graphs (cudagraph trees) after the warm-up steps, next to an
eager reference run of the same steps. CUPTI (torch.profiler) is the independent truth:
every kernel's name, grid, block, registers, shared memory and graph node id.

Usage: python3 scripts/corpus/torch_compile_graphs.py [TRUTH.json]"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
truth = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
STEPS = 8
torch.manual_seed(0)


def make():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 10)).cuda()


x = torch.randn(64, 128, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")


def run(model, step):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(STEPS):
        # a new step: cudagraph trees may reuse the last replay's outputs (and without this
        # mark, backward reads outputs the next replay overwrote)
        torch.compiler.cudagraph_mark_step_begin()
        opt.zero_grad(set_to_none=False)
        loss = step(model, x, y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def step(model, x, y):
    return nn.functional.cross_entropy(model(x), y)


eager = run(make(), step)
compiled_step = torch.compile(step, mode="reduce-overhead")
with cupti_truth(truth):
    graphs = run(make(), compiled_step)
    torch.cuda.synchronize()
close = all(abs(a - b) < 1e-3 for a, b in zip(eager, graphs))
print(f"compile reduce-overhead: steps={STEPS} matches_eager={close} last={graphs[-1]:.3f}")
sys.exit(0 if close else 1)
