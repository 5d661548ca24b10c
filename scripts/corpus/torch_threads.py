"""PyTorch from several host threads at once, each on its own CUDA stream: 4 threads, each
running ITERS steps of matmul (cuBLAS), GELU, a row sum and an in-place add, while the others
launch too, so API calls and doorbells of different threads and channels interleave. The
truth: every kernel from CUPTI (torch.profiler), and each thread's result, compared between
native and traced runs.

usage: torch_threads.py [TRUTH.json]"""
import os
import sys
import threading

import torch

sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402

THREADS = 4
ITERS = 25


def work(k, out):
    s = torch.cuda.Stream()
    g = torch.Generator(device="cuda").manual_seed(k)
    with torch.cuda.stream(s):
        a = torch.randn(192, 256, device="cuda", generator=g)
        w = torch.randn(256, 256, device="cuda", generator=g) / 16
        for _ in range(ITERS):
            a = torch.nn.functional.gelu(a @ w)
            a.add_(a.sum(dim=1, keepdim=True) * 1e-3)
            a = a / (a.abs().amax() + 1)
    s.synchronize()
    out[k] = round(float(a.double().sum().item()), 3)


def main():
    torch.zeros(1, device="cuda")       # the context before the threads start
    results = {}
    with _truth.CuptiKernels() as k:
        threads = [threading.Thread(target=work, args=(i, results)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        torch.cuda.synchronize()
    _truth.write({"threads": THREADS, "iters": ITERS, "results": results,
                  "cupti": k.to_json()})
    print("torch_threads: " + " ".join(f"{i}={results[i]}" for i in sorted(results)))
    return 0 if len(results) == THREADS else 1     # a thread that raised left no result


if __name__ == "__main__":
    sys.exit(main())
