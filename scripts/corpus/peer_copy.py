"""Two GPUs in one process, made to wait for each other (issue 26's multi-GPU path): GPU 0
computes, records an event; a stream of GPU 1 waits for that event (one GPU waiting for
another), copies the result from GPU 0 (a peer copy, cudaMemcpyPeerAsync through PyTorch's
.to()), computes on it, and GPU 0 then waits for GPU 1 the same way and copies it back.
Checked on the host. CUPTI (torch.profiler) is the independent truth: every kernel and
every memcpy activity with its kind (PtoP for the peer copies) and bytes.

Usage: python3 scripts/corpus/peer_copy.py [TRUTH.json]   (needs 2 GPUs)"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

truth = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
assert torch.cuda.device_count() >= 2, "needs 2 GPUs"
torch.manual_seed(0)
n = 1 << 20
x = torch.randn(n, device="cuda:0")
s0 = torch.cuda.Stream(device="cuda:0")
s1 = torch.cuda.Stream(device="cuda:1")
with cupti_truth(truth):
    for _ in range(3):
        with torch.cuda.stream(s0):
            a = x * 2.0
            done0 = torch.cuda.Event()
            done0.record(s0)
        with torch.cuda.stream(s1):
            s1.wait_event(done0)                    # GPU 1 waits for GPU 0
            b = a.to("cuda:1", non_blocking=True)   # peer copy GPU 0 -> GPU 1
            c = b + 1.0
            done1 = torch.cuda.Event()
            done1.record(s1)
        with torch.cuda.stream(s0):
            s0.wait_event(done1)                    # GPU 0 waits for GPU 1
            back = c.to("cuda:0", non_blocking=True)
    torch.cuda.synchronize("cuda:0")
    torch.cuda.synchronize("cuda:1")
ok = torch.allclose(back.cpu(), x.cpu() * 2.0 + 1.0)
print(f"peer copy: {'ok' if ok else 'WRONG'} n={n}")
sys.exit(0 if ok else 1)
