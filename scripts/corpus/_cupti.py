"""CUPTI as an independent oracle for the corpus programs: torch.profiler with
ProfilerActivity.CUDA records every kernel, memcpy and memset the process ran (CuPy, JAX and
Triton work too: CUPTI sees the whole process), and its Chrome trace gives each kernel's
name, grid, block, registers, shared memory and graph node. Nothing here reads the shim's
records.

    with cupti_truth(path):
        run_the_workload()
"""
import contextlib
import json
import os
import tempfile
from collections import Counter


def _kernel_key(ev):
    a = ev.get("args", {})
    return (ev.get("name"), tuple(a.get("grid") or ()), tuple(a.get("block") or ()),
            a.get("registers per thread"), a.get("shared memory"))


def summarize(trace):
    """Counted (name, grid, block, registers, shared memory) kernel configurations, with the
    graph-node ids CUPTI gave, and the memcpy/memset activities by kind."""
    kernels, copies, graph = Counter(), Counter(), Counter()
    for ev in trace.get("traceEvents", []):
        cat = ev.get("cat")
        if cat == "kernel":
            key = _kernel_key(ev)
            kernels[json.dumps(key)] += 1
            if ev.get("args", {}).get("graph node id"):
                graph[json.dumps(key)] += 1
        elif cat in ("gpu_memcpy", "gpu_memset"):
            copies[f"{cat}:{ev.get('name')}"] += 1
    configs = [dict(zip(("name", "grid", "block", "registers", "shared_memory"), json.loads(k)),
                    count=n, in_graph=graph.get(k, 0)) for k, n in sorted(kernels.items())]
    return {"source": "torch.profiler ProfilerActivity.CUDA (CUPTI activity records)",
            "kernel_launches": sum(kernels.values()), "kernel_configs": configs,
            "copies_memsets": dict(sorted(copies.items()))}


@contextlib.contextmanager
def cupti_truth(path):
    """Profile the body with CUPTI and write summarize() of it to path (a no-op when path is
    None)."""
    if not path:
        yield
        return
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        yield
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        with open(tmp) as f:
            trace = json.load(f)
    finally:
        os.unlink(tmp)
    with open(path, "w") as f:
        json.dump(summarize(trace), f, indent=1, sort_keys=True)
