"""Inference from several host threads for a long run, as a server does: 3 threads (TL_THREADS), each with
its own CUDA stream and its own copy of a small MLP in bf16, each running ITERS batches
(argv[1], default 100 per thread) of forward passes with torch.inference_mode, recording an
event per batch that a fourth stream waits on before it sums the results (cross-stream event
waits). API calls, doorbells and channels of the threads interleave for the whole run.
TL_CUPTI_TRUTH=PATH profiles the whole run with torch.profiler (CUPTI) as outside truth."""
import os
import sys
import threading

import torch

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100
truth_path = os.environ.get("TL_CUPTI_TRUTH")
THREADS = int(os.environ.get("TL_THREADS", "3"))     # how many serving threads

torch.manual_seed(0)
models = [torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                              torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 256)
                              ).cuda().to(torch.bfloat16).eval() for _ in range(THREADS)]
inputs = [torch.randn(64, 512, device="cuda", dtype=torch.bfloat16) for _ in range(THREADS)]
torch.cuda.synchronize()
totals = [None] * THREADS
barrier = threading.Barrier(THREADS)


def serve(k):
    s = torch.cuda.Stream()
    gather = torch.cuda.Stream()
    acc = torch.zeros(256, device="cuda", dtype=torch.float32)
    barrier.wait()
    with torch.inference_mode():
        for i in range(iters):
            with torch.cuda.stream(s):
                out = models[k](inputs[k] * (1 + i % 7))
                done = torch.cuda.Event()
                done.record(s)
            with torch.cuda.stream(gather):
                gather.wait_event(done)
                acc += out.float().sum(0)
        gather.synchronize()
    totals[k] = acc


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

with cupti_truth(truth_path):
    threads = [threading.Thread(target=serve, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
print(f"iters={iters} " + " ".join(f"{float(t.sum()):.4e}" for t in totals))
