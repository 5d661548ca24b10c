"""A PyTorch CUDA graph of elementwise kernels and a reduction, captured once and replayed
three times with new inputs. The truth is the graph's own kernel nodes, read back through
the driver's graph API (torch's raw_cuda_graph), and each replay's expected result."""
import torch

import _truth

static_x = torch.zeros(1 << 16, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):           # warm-up outside the capture, as torch requires
    for _ in range(2):
        y = torch.relu(static_x * 2.0 + 1.0)
        out = y.sum()
torch.cuda.current_stream().wait_stream(side)
try:
    g = torch.cuda.CUDAGraph(keep_graph=True)
except TypeError:
    g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = torch.relu(static_x * 2.0 + 1.0)
    z = torch.sigmoid(y) - 0.5
    out = y.sum() + z.mean()
truth = {"replays": 3}
try:
    g.instantiate() if hasattr(g, "instantiate") else None
    truth["graph_nodes"] = _truth.graph_nodes(g.raw_cuda_graph())
except Exception as exc:
    truth["graph_nodes_error"] = f"{type(exc).__name__}: {exc}"
results = []
for k in range(truth["replays"]):
    static_x.copy_(torch.full((1 << 16,), float(k), device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    results.append(round(out.item(), 2))
truth["results"] = results
_truth.write(truth)
print("replays", results)
