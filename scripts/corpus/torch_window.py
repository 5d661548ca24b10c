"""A small PyTorch training loop for capture windows (issue 24): a TransformerEncoderLayer
(or an MLP) under bf16 autocast, AdamW, STEPS steps, each inside torch.cuda.nvtx.range("step"),
with cudaProfilerStart/Stop (torch.cuda.profiler.start/stop) around steps A..B-1.

    torch_window.py TRUTH.json [--steps 12] [--span 5:8] [--model transformer|mlp] [--cupti]

Run under trace-launch, each step begins with a POINT mark numbered by the step
(tracelaunch_mark, when the shim is loaded), so a whole capture splits into steps; with
--capture-range=cudaProfilerApi, --capture-range=nvtx --nvtx-range step --range-skip A
--range-count B-A, or --launch-range over the same launches, each window holds steps A..B-1.
scripts/record_windows.sh records all four; tests/test_window_real.py compares them.

--cupti (the native run only): the ground truth from CUPTI, through torch.profiler with
ProfilerActivity.CUDA over the same steps: per step, every kernel's name, grid and block in
launch order (matched to its step by the launch's correlation id). Prints the losses, so a
traced run's output can be compared with the native one.
"""
import argparse
import ctypes
import json
import os
import sys
import tempfile

import torch

import _truth

ap = argparse.ArgumentParser()
ap.add_argument("truth", nargs="?", default="-")
ap.add_argument("--steps", type=int, default=int(os.environ.get("TORCH_WINDOW_STEPS", 12)))
ap.add_argument("--span", default=os.environ.get("TORCH_WINDOW_SPAN", "5:8"),
                help="A:B: cudaProfilerStart before step A, cudaProfilerStop after step B-1")
ap.add_argument("--model", choices=["transformer", "mlp"], default="transformer")
ap.add_argument("--cupti", action="store_true", help="ground truth from torch.profiler (CUPTI)")
args = ap.parse_args()
first, last = (int(x) for x in args.span.split(":"))
assert 0 <= first < last <= args.steps, args.span

try:        # the shim's cooperative marks, when the program runs under trace-launch
    mark = ctypes.CDLL(None).tracelaunch_mark
    mark.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
except AttributeError:
    mark = None
MARK_POINT = 3

torch.manual_seed(0)
dev = "cuda"
if args.model == "transformer":
    model = torch.nn.Sequential(
        torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, dropout=0.0,
                                         batch_first=True),
        torch.nn.Flatten(), torch.nn.Linear(32 * 256, 10)).to(dev)
    x = torch.randn(64, 32, 256, device=dev)
else:
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 10)).to(dev)
    x = torch.randn(256, 512, device=dev)
y = torch.randint(0, 10, (x.shape[0],), device=dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss_fn = torch.nn.CrossEntropyLoss()


def step(i):
    with torch.cuda.nvtx.range("step"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return loss.detach()


def run(annotate=None):
    losses = []
    for i in range(args.steps):
        if mark is not None:
            mark(MARK_POINT, i, b"step")
        if i == first:
            torch.cuda.profiler.start()         # cudaProfilerStart -> cuProfilerStart
        if annotate is not None:
            with annotate(f"step{i}"):
                losses.append(step(i))
        else:
            losses.append(step(i))
        if i == last - 1:
            torch.cuda.profiler.stop()
    torch.cuda.synchronize()
    return [round(float(v), 4) for v in torch.stack(losses).float().cpu()]


truth = {"steps": args.steps, "span": [first, last], "model": args.model,
         "torch": torch.__version__, "device": torch.cuda.get_device_name()}
if args.cupti:
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        losses = run(record_function)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    # step annotations (CPU), launch calls (CPU, by correlation id), kernels (GPU)
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"][4:])) for e in events
                   if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("step")
                   and e["name"][4:].isdigit())
    launched = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    per_step = {str(i): [] for i in range(args.steps)}
    for e in events:
        if e.get("cat") != "kernel":
            continue
        a = e.get("args", {})
        t = launched.get(a.get("correlation"))
        owner = next((i for t0, t1, i in steps if t is not None and t0 <= t <= t1), None)
        if owner is not None:
            per_step[str(owner)].append((t, {"name": e["name"], "grid": a.get("grid"),
                                             "block": a.get("block")}))
    truth["cupti"] = {k: [k2 for _, k2 in sorted(v, key=lambda p: p[0])] for k, v in per_step.items()}
else:
    losses = run()
truth["losses"] = losses
_truth.write(truth)
print("losses", losses)
sys.stdout.flush()
