"""PyTorch CUDA graph with conditional nodes (issue 25): torch.cuda.CUDAGraph's own IF and
WHILE nodes, whose bodies PyTorch fills by stream capture into the node's body graph
(begin_capture_to_if_node / begin_capture_to_while_loop_node), as torch.cond and
while_loop do when captured. The graph: x * 2 into `doubled` under IF(pred); a WHILE of
`count < 4` whose body adds 1 to count and sets the condition again; then doubled + 1.
Replayed 4 times with pred True, False, True, False (set between replays).

Truth (first argument, JSON): per replay the predicate, `doubled[0]` (6 when the IF body ran,
else what it held), `count` (4: the WHILE ran 4 trips), and every kernel from CUPTI."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import torch  # noqa: E402

import _truth  # noqa: E402

PREDS = (True, False, True, False)
TRIPS = 4


def main():
    g = torch.cuda.CUDAGraph()
    have = {n: hasattr(g, n) for n in ("begin_capture_to_if_node",
                                         "begin_capture_to_while_loop_node",
                                         "end_capture_to_conditional_node")}
    truth = {"torch": torch.__version__, "api": have, "replays": []}
    if not all(have.values()):
        _truth.write(truth)
        print(f"torch_cond_graph: torch {torch.__version__} has no conditional capture")
        return 0
    dev = "cuda"
    x = torch.full((4096,), 3.0, device=dev)
    doubled = torch.zeros_like(x)
    pred = torch.ones((), dtype=torch.bool, device=dev)
    count = torch.zeros((), dtype=torch.int32, device=dev)
    go = torch.ones((), dtype=torch.bool, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):      # warm up outside capture (allocations, kernels loaded)
        torch.mul(x, 2.0, out=doubled)
        count.add_(1)
        torch.lt(count, TRIPS, out=go)
        out = doubled + 1.0
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        g.begin_capture_to_if_node(pred)
        torch.mul(x, 2.0, out=doubled)
        g.end_capture_to_conditional_node()
        count.zero_()
        go.fill_(True)
        handle = g.begin_capture_to_while_loop_node(go)
        count.add_(1)
        torch.lt(count, TRIPS, out=go)
        torch.cuda.CUDAGraph.set_conditional_handle(handle, go)
        g.end_capture_to_conditional_node()
        out = doubled + 1.0
    torch.cuda.synchronize()
    with _truth.CuptiKernels() as k:
        for p in PREDS:
            doubled.fill_(-1.0)
            pred.fill_(p)
            g.replay()
            torch.cuda.synchronize()
            truth["replays"].append({"pred": p, "doubled0": float(doubled[0]),
                                     "count": int(count), "out0": float(out[0])})
    truth["cupti"] = k.to_json()
    _truth.write(truth)
    print("torch_cond_graph: " + " ".join(
        f"pred={r['pred']}:doubled={r['doubled0']:g},count={r['count']},out={r['out0']:g}"
        for r in truth["replays"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
