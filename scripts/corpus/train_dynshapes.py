"""torch.compile(mode="reduce-overhead") over batches of three sizes in turn, as a job with
bucketed sequence lengths runs: inductor compiles the step once per size, and its cudagraph
trees record one CUDA graph per size and replay them interleaved (256, 192, 128, 256, ...),
with an eval forward pass (no_grad, its own graph) every 10 steps. An MLP (d=512, GELU,
LayerNorm), cross-entropy, AdamW (foreach), STEPS steps (argv[1], default 100).
TORCHINDUCTOR_COMPILE_THREADS=1 unless set (one process compiles: the trace stays one
process). TL_CUPTI_TRUTH=PATH profiles the whole run with torch.profiler (CUPTI)."""
import os
import sys

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
d, classes, sizes = 512, 100, (256, 192, 128)
model = torch.nn.Sequential(
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.LayerNorm(d),
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, classes)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile(mode="reduce-overhead", dynamic=False)
def fwd_bwd(x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach()


@torch.compile(mode="reduce-overhead", dynamic=False)
def evaluate(x):
    with torch.no_grad():
        return model(x).argmax(-1)


gen = torch.Generator(device="cuda").manual_seed(1)
data = {n: (torch.randn(4, n, d, device="cuda", generator=gen),
            torch.randint(0, classes, (4, n), device="cuda", generator=gen)) for n in sizes}
hits = 0


def step(i):
    global hits
    torch.compiler.cudagraph_mark_step_begin()
    n = sizes[i % len(sizes)]
    xs, ys = data[n]
    opt.zero_grad(set_to_none=True)
    loss = fwd_bwd(xs[i % 4], ys[i % 4])
    opt.step()
    if i % 10 == 9:
        torch.compiler.cudagraph_mark_step_begin()
        hits += int((evaluate(xs[0]) == ys[0]).sum())
    return loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _train import train  # noqa: E402

train(steps, step, truth_path)
