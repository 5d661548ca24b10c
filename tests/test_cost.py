"""`--cost` (decoders/cuda/cost.py) against a recording's own ground truth, and its memory:
a call's numbers are kept from its entry to its exit, not the call (its arguments' bytes),
and the rows are sorted into call order on disk (a 500-step job's --cost peaked at 590 MB,
now 184 MB, the decode's own included, flat from 100 to 500 steps: session 30)."""
import json
import tracemalloc

from conftest import CAPTURES
from decoders.cuda.cost import measure
from decoders.session import decode_capture
from decoders.spill import SpillList

LOOP = CAPTURES / "launch-loop-10k"


def test_launch_loop_costs_match_its_manifest(monkeypatch):
    """launch-loop-10k: 100 warm-up and 10,000 timed cuLaunchKernel of one empty kernel
    (its manifest): each call rang one doorbell that carried its one kernel QMD; the rows
    come in call order; and with runs of 512 rows on disk the whole measure stays under a
    few MB (with every call kept, 28 MB)."""
    import decoders.extsort as extsort
    truth = json.loads((LOOP / "manifest.json").read_text())["ground_truth"]
    path = str(LOOP / "capture.tlc.gz")
    model = decode_capture(path)
    monkeypatch.setattr(extsort.ExternalSort, "RUN", 512)
    tracemalloc.start()
    try:
        c = measure(path, launches=model.launches)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak
    n = truth["launches"] + truth["warmup_launches"]
    k = c["by_name"]["cuLaunchKernel"]
    assert k["calls"] == k["doorbells"] == k["kernels"] == n
    rows = c["calls"]
    assert isinstance(rows, SpillList) and len(rows) == sum(
        s["calls"] for s in c["by_name"].values())
    index = [r["index"] for r in rows]
    assert index == sorted(index)
    launches = [r for r in rows if r["call"] == "cuLaunchKernel"]
    assert all(r["doorbells"] == 1 and r["kernels"] == 1 and r["ns_inside"] > 0
               for r in launches)
    # the kernel QMDs the decode attributed to each call are the ones counted for it
    attributed = {}
    for launch in model.launches:
        s = launch.summary
        if s["kernel"] and s.get("api_call"):
            attributed[s["api_call"]["index"]] = attributed.get(s["api_call"]["index"], 0) + 1
    assert {r["index"]: r["kernels"] for r in rows if r["kernels"]} == attributed
