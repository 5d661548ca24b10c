"""A small CNN training job (cuDNN convolutions forward and backward, batch norm, pooling,
cuBLAS for the classifier): 3 conv blocks on 32x32 synthetic images, batch 64, SGD with
momentum and channels_last, STEPS steps (argv[1], default 100).

TL_CUPTI_TRUTH=PATH (or PATH as argv[2]) profiles the whole run with torch.profiler (CUPTI)
and writes every kernel's name, grid, block, registers and shared memory, counted."""
import os
import sys

import torch
from torch import nn

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("TL_CUPTI_TRUTH")
torch.manual_seed(0)
torch.backends.cudnn.benchmark = False
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(128, 10)).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
gen = torch.Generator(device="cuda").manual_seed(1)
xs = torch.randn(4, 64, 3, 32, 32, device="cuda", generator=gen)
ys = torch.randint(0, 10, (4, 64), device="cuda", generator=gen)



def step(i):
    opt.zero_grad(set_to_none=True)
    x = xs[i % 4].contiguous(memory_format=torch.channels_last)
    loss = nn.functional.cross_entropy(model(x), ys[i % 4])
    loss.backward()
    opt.step()
    return loss


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _train import train  # noqa: E402

train(steps, step, truth_path)
