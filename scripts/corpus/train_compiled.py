"""A training step through torch.compile(mode="reduce-overhead"): inductor's Triton kernels
and cuBLAS, run as CUDA graphs by its cudagraph trees (TL_COMPILE_MODE=default: inductor
without graphs). An MLP (3 Linear layers, d=512,
GELU, LayerNorm), cross-entropy, SGD with momentum, STEPS steps (argv[1], default 100).
TORCHINDUCTOR_COMPILE_THREADS=1 unless set (one process compiles: the trace stays one process).

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]: scripts/record.py real) profiles the whole run with torch.profiler (CUPTI) and writes every
kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
d, batch, classes = 512, 256, 100
model = torch.nn.Sequential(
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.LayerNorm(d),
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)


@torch.compile(mode=os.environ.get("TL_COMPILE_MODE", "reduce-overhead"))
def fwd_bwd(x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach()


gen = torch.Generator(device="cuda").manual_seed(1)
xs = torch.randn(8, batch, d, device="cuda", generator=gen)
ys = torch.randint(0, classes, (8, batch), device="cuda", generator=gen)


def step(i):
    if "TL_COMPILE_MODE" not in os.environ:
        torch.compiler.cudagraph_mark_step_begin()
    opt.zero_grad(set_to_none=True)
    loss = fwd_bwd(xs[i % 8], ys[i % 8])
    opt.step()
    return loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _train import train  # noqa: E402

train(steps, step, truth_path)
