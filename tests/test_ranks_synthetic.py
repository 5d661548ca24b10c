"""A synthetic-2rank capture (tests/synthetic_ranks.py: captures/runtime-vadd's records
written once per rank, with PROCESS_ENV records) through the whole decoder: both ranks named
with their GPU in the report, the JSON and one timeline; each rank's kernel verified with its
own calls; and nothing of one rank attributed to the other, though their handles and
pointers are the same numbers (as two real processes' may be)."""
import io
import json
from collections import Counter

import pytest

from decoders.ranks import processes_meta
from decoders.session import decode_capture
from decoders.timeline import CHANNEL_PID, timeline
from synthetic_ranks import SHIFT_NS, build
from tracer.report import render_json, render_text

LABELS = ["rank 0 (GPU 0, 0000:00:06.0) pid 890", "rank 1 (GPU 0, 0000:00:06.0) pid 1890"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    p = tmp_path_factory.mktemp("ranks") / "synthetic-2rank.tlc.gz"
    p.write_bytes(build())
    m = decode_capture(p)
    assert m.problems == []
    return m


def test_ranks_and_gpus(model):
    procs = processes_meta(model)
    assert [(p["pid"], p["rank"], p["local_rank"], p["world_size"]) for p in procs] == \
        [(890, 0, 0, 2), (1890, 1, 1, 2)]
    for p in procs:
        (g,) = p["gpus"]
        assert (g["index"], g["pci_bus_id"], g["channels"]) == (0, "0000:00:06.0", 20)
        assert g["uuid"].startswith("GPU-")


def test_each_rank_verified_against_its_own_calls(model):
    kernels = [l for l in model.launches if l.kernel]
    assert [l.pid for l in kernels] == [890, 1890]
    for launch in kernels:
        a = launch.summary["attribution"]
        assert a["verified"] is True and a["kernel"]["name"].startswith("vadd")
        own = {c["index"] for c in model.api_calls if c["pid"] == launch.pid}
        assert a["api_call"]["index"] in own
        assert a["kernel"]["image_call"] in own
        for arg in a["args"][:3]:                 # the three device pointers
            assert arg["points_to"]["call_index"] in own, arg


def test_text_report_block_per_rank(model):
    out = io.StringIO()
    render_text(model, out)
    block = out.getvalue().split("ranks (2 of 2 process(es) on a GPU)\n", 1)[1].split("\n\n")[0]
    lines = block.splitlines()
    assert [l for l in lines if l.startswith("  rank")] == [
        f"  {LABELS[0]}, local rank 0, world size 2", f"  {LABELS[1]}, local rank 1, world size 2"]
    assert lines.count("           1  vadd") == 2


def test_json_carries_ranks_and_pids(model):
    out = io.StringIO()
    render_json(model, out)
    doc = json.loads(out.getvalue())
    assert [(p["rank"], p["env"]["WORLD_SIZE"]) for p in doc["meta"]["processes"]] == \
        [(0, "2"), (1, "2")]
    assert Counter(l["pid"] for l in doc["launches"]) == Counter({890: 2, 1890: 2})
    for key in ("ioctls", "submissions", "api_calls", "mmaps"):
        assert {x["pid"] for x in doc[key]} == {890, 1890}, key


def test_one_timeline_holds_both_ranks(model):
    from test_timeline import validate_trace
    doc = json.loads(json.dumps(timeline(model)))
    assert validate_trace(doc) == []
    ev = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    assert names == {890: LABELS[0], 1890: LABELS[1]}
    sort = {e["pid"]: e["args"]["sort_index"] for e in ev if e["name"] == "process_sort_index"}
    assert sort == {890: 0, 1890: 1}
    subs = [e for e in ev if e.get("cat") == "submission"]
    assert {e["pid"] for e in subs} == {890, 1890} and CHANNEL_PID not in {e["pid"] for e in ev}
    tracks = {(e["pid"], e["tid"]) for e in subs}
    named = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    for t in tracks:
        assert named[t].startswith("channel token ") and named[t].endswith(", GPU 0)")
    assert Counter(p for p, _ in tracks) == Counter(
        s["pid"] for s in {(x["pid"], x["token"]): x for x in model.submissions}.values())
    # one clock: rank 1's records are rank 0's, 1 ms later, and so are its events
    first = {pid: min(e["ts"] for e in subs if e["pid"] == pid) for pid in (890, 1890)}
    assert first[1890] - first[890] == pytest.approx(SHIFT_NS / 1000)
