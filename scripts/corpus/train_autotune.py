"""A training step through torch.compile(mode="max-autotune"): inductor autotunes each matmul
in-process (its Triton mm templates, persistent TMA templates among them, benchmarked against
cuBLAS), tunes its pointwise and reduction kernels by coordinate descent, then runs the step as
CUDA graphs by its cudagraph trees. train_compiled.py's MLP (3 Linear layers, d=512, GELU,
LayerNorm) with 512 classes instead of 100, so that every matmul of the step, forward and
backward, has one of three shapes (256x512x512 addmm, 256x512x512 mm, 512x256x512 mm) and the
autotuning stays short; cross-entropy, SGD with momentum, STEPS steps (argv[1], default 100),
TF32 matmuls (torch.set_float32_matmul_precision("high"), as inductor advises for max-autotune).

Every run compiles and autotunes from scratch: TORCHINDUCTOR_CACHE_DIR is a new temporary folder
unless set (no FX graph, AOTAutograd or autotune cache from an earlier run), removed at exit.
Triton's own kernel cache lives there too unless TRITON_CACHE_DIR is set: a shared
TRITON_CACHE_DIR saves later runs the Triton compiles (ptxas), not the autotuning, whose kernels
are still loaded and benchmarked in this process.

TORCHINDUCTOR_COMPILE_THREADS=1 unless set (one process compiles: the trace stays one process);
autotune_in_subproc stays off (the benchmarks run in this process).
TL_AUTOTUNE_TMA=0 leaves the persistent TMA templates out (default 1: in).

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI) and
writes every kernel's name, grid, block, registers and shared memory, counted.

Prints `steps=N loss_decreased=...` (scripts/corpus/_train.py) and the last step's loss to two
decimals: the autotuner may pick other kernels in another run, so more digits could differ."""
import atexit
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="tl-autotune-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)
import torch  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402


def _set(cfg, name, value):
    """Set an inductor option where this torch has it (names move between releases)."""
    if hasattr(cfg, name):
        setattr(cfg, name, value)
        return True
    print(f"train_autotune: this torch has no inductor option {name}", file=sys.stderr)
    return False


inductor_config.max_autotune_gemm_backends = "TRITON,ATEN"
_set(inductor_config, "autotune_in_subproc", False)
_set(inductor_config.triton, "enable_persistent_tma_matmul",
     os.environ.get("TL_AUTOTUNE_TMA", "1") == "1")
torch.set_float32_matmul_precision("high")

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
d, batch, classes = 512, 256, 512
model = torch.nn.Sequential(
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.LayerNorm(d),
    torch.nn.Linear(d, d), torch.nn.GELU(), torch.nn.Linear(d, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)


@torch.compile(mode="max-autotune")
def fwd_bwd(x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach()


gen = torch.Generator(device="cuda").manual_seed(1)
xs = torch.randn(8, batch, d, device="cuda", generator=gen)
ys = torch.randint(0, classes, (8, batch), device="cuda", generator=gen)
last = []


def step(i):
    torch.compiler.cudagraph_mark_step_begin()
    opt.zero_grad(set_to_none=True)
    loss = fwd_bwd(xs[i % 8], ys[i % 8])
    opt.step()
    last[:] = [loss]
    return loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _train import train  # noqa: E402

train(steps, step, truth_path)
print(f"loss={last[0].item():.2f}")
