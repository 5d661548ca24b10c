"""A training job fed the way real ones are: a DataLoader with 2 forked worker processes and
pinned memory (its pin-memory thread), batches copied to the GPU with non_blocking=True, the
caching allocator on expandable segments (cuMemCreate/cuMemMap virtual memory instead of
cuMemAlloc), cuDNN autotuning its convolutions (cudnn.benchmark: every candidate kernel runs
in the first step), and fp16 autocast with a GradScaler. A small CNN on 64x64 synthetic
images, batch 32, STEPS steps (argv[1], default 100), one NVTX range "step" each.

The workers fork after CUDA is up in the parent and never touch the GPU; the loss comparison
of native and traced runs checks the program's result is unchanged.
TL_CUPTI_TRUTH=PATH profiles the whole run with torch.profiler (CUPTI) as outside truth."""
import os
import sys

# before torch reads it: the allocator maps its segments through the driver's VMM API
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch  # noqa: E402
from torch import nn  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = os.environ.get("TL_CUPTI_TRUTH")
BATCH = 32


class Synthetic(torch.utils.data.Dataset):
    """Deterministic images and labels made on the CPU in the worker (seeded per item)."""

    def __len__(self):
        return steps * BATCH

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 64, 64, generator=g), int(torch.randint(0, 10, (1,), generator=g))


torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(128, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
scaler = torch.amp.GradScaler("cuda")
loader = torch.utils.data.DataLoader(Synthetic(), batch_size=BATCH, num_workers=2,
                                     pin_memory=True, multiprocessing_context="fork")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

first = loss = None
with cupti_truth(truth_path):
    for i, (x, y) in enumerate(loader):
        with torch.cuda.nvtx.range("step"):
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        if first is None:
            first = loss.item()
    torch.cuda.synchronize()
print(f"steps={steps} loss_decreased={loss.item() < first}")
