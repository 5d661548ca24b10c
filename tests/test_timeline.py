"""`trace-decode timeline` (decoders/timeline.py): a validator for the Trace Event Format
(the rules Chrome's trace viewer and Perfetto's JSON importer apply) run on the timeline
of every capture in captures/, truth checks against the manifests, and the API-call hook
on a synthetic model."""
import json
import math
from collections import Counter, defaultdict
from functools import lru_cache
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from conftest import ALL, CAPTURES, capture_file, manifest
from decoders.session import decode_capture
from decoders.timeline import CHANNEL_PID, PID_MAX_LIMIT, ioctl_event_name, timeline
from tracer.cli import trace_decode

EPS = 0.002          # µs: ts/dur are rounded to ns (3 decimals)
REQUIRED = {"X": ("name", "ph", "ts", "dur", "pid", "tid"),
            "i": ("name", "ph", "ts", "s", "pid", "tid"),
            "M": ("name", "ph", "pid", "args")}
METADATA = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
            "thread_sort_index": "sort_index"}


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def validate_trace(doc):
    """Problems (strings) of a Trace Event Format JSON object; [] when it is well formed."""
    bad = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["top level: an object with a traceEvents array"]
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        bad.append(f"displayTimeUnit {doc['displayTimeUnit']!r} is not ms or ns")
    tracks = defaultdict(list)
    named = set()
    used = set()
    for n, e in enumerate(doc["traceEvents"]):
        where = f"event {n}"
        ph = e.get("ph")
        if ph not in REQUIRED:
            bad.append(f"{where}: ph {ph!r} is not one this file should use (X, i, M)")
            continue
        for key in REQUIRED[ph]:
            if key not in e:
                bad.append(f"{where}: ph {ph} without {key!r}")
        if not isinstance(e.get("name"), str) or not e.get("name"):
            bad.append(f"{where}: name must be a non-empty string")
        if not _int(e.get("pid")) or not _int(e.get("tid", 0)):
            bad.append(f"{where}: pid/tid must be ints")
            continue
        if "args" in e:
            if not isinstance(e["args"], dict):
                bad.append(f"{where}: args must be an object")
            try:
                json.dumps(e["args"], allow_nan=False)
            except (TypeError, ValueError) as exc:
                bad.append(f"{where}: args not JSON-serialisable: {exc}")
        if ph == "M":
            key = METADATA.get(e["name"])
            if key is None:
                bad.append(f"{where}: unknown metadata event {e['name']!r}")
            elif key == "name" and not isinstance(e["args"].get("name"), str):
                bad.append(f"{where}: {e['name']} needs args.name (string)")
            elif key == "sort_index" and not _int(e["args"].get("sort_index")):
                bad.append(f"{where}: {e['name']} needs args.sort_index (int)")
            if e["name"] == "process_name":
                named.add((e["pid"], None))
            if e["name"] == "thread_name":
                named.add((e["pid"], e["tid"]))
            continue
        if not _number(e.get("ts")) or e["ts"] < 0:
            bad.append(f"{where}: ts must be a number >= 0, not {e.get('ts')!r}")
            continue
        used.add((e["pid"], e["tid"]))
        if ph == "X":
            if not _number(e.get("dur")) or e["dur"] < 0:
                bad.append(f"{where}: dur must be a number >= 0, not {e.get('dur')!r}")
                continue
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], n))
        if ph == "i" and e.get("s") not in ("t", "p", "g"):
            bad.append(f"{where}: instant scope {e.get('s')!r} is not t, p or g")
    for (pid, tid), rows in tracks.items():
        rows.sort(key=lambda r: (r[0], -r[1]))
        stack = []
        for start, end, n in rows:
            while stack and stack[-1][0] <= start + EPS:
                stack.pop()
            if stack and end > stack[-1][0] + EPS:
                bad.append(f"event {n} ({pid}/{tid}, {start}..{end}) overlaps event "
                           f"{stack[-1][1]} without nesting")
            stack.append((end, n))
    for pid, tid in used:
        if (pid, None) not in named:
            bad.append(f"pid {pid} has no process_name")
        if (pid, tid) not in named:
            bad.append(f"{pid}/{tid} has no thread_name")
    return bad


@lru_cache(maxsize=None)
def model(name):
    return decode_capture(str(capture_file(name)))


@pytest.mark.parametrize("name", ALL)
def test_timeline_is_valid_trace_event_json(name):
    m = model(name)
    doc = json.loads(json.dumps(timeline(m), allow_nan=False))
    problems = validate_trace(doc)
    assert problems == [], "\n".join(problems[:20])
    events = doc["traceEvents"]
    s = manifest(name)["summary"]
    cats = Counter((e["ph"], e.get("cat")) for e in events)
    assert cats[("X", "ioctl")] == s["by_type"]["IOCTL"]
    assert cats[("X", "submission")] == cats[("i", "doorbell")] == s["by_type"].get("SUBMISSION", 0)
    # one channel track per (pid, token): under the synthetic process, or under its own
    # process when the capture has ranks (docs/timeline.md, issue 26)
    tokens = {(x["pid"], x["token"]) for x in m.submissions}
    channel_tracks = {(e["pid"], e["tid"]) for e in events if e.get("cat") == "submission"}
    assert len(channel_tracks) == len(tokens)
    real = {e["pid"] for e in events if e["ph"] != "M" and e["pid"] != CHANNEL_PID}
    assert real == set(s["pids"]) and max(real) <= PID_MAX_LIMIT < CHANNEL_PID
    # relative to the capture start: the earliest event is within the run, not at 10^10 µs
    assert doc["otherData"]["t_origin_ns"] == m.header["t_start_ns"]
    assert min(e["ts"] for e in events if "ts" in e) < 60e6
    # no event moved to an overflow track: the recorder never overlaps calls of a thread
    assert not any("moved" in e.get("args", {}) for e in events)


def test_builtin_vadd_launch_on_its_channel():
    """The marked vadd launch (manifest grid 4096, block 256) is the one submission between
    the marks, on its channel track, named from its cuLaunchKernel call and attributed
    kernel, inside the mark's X event."""
    from decoders.session import marked_submissions
    truth = manifest("builtin-vadd")["ground_truth"]
    (_, subs), = marked_submissions(model("builtin-vadd"))
    rec, = [x["index"] for x in subs]
    events = timeline(model("builtin-vadd"))["traceEvents"]
    sub = next(e for e in events if e.get("cat") == "submission" and e["args"]["record_index"] == rec)
    assert sub["pid"] == CHANNEL_PID
    kernels = [l for l in sub["args"]["launches"] if l["kernel"]]
    assert [(l["grid"], l["block"]) for l in kernels] == [(truth["grid"], truth["block"])]
    assert sub["args"]["kernel_name"] == f"cuLaunchKernel {truth['kernel']}"
    assert sub["name"] == f"cuLaunchKernel {truth['kernel']} grid 4096x1x1"
    for key in ("token", "channel", "class", "gp_put", "entries", "bytes"):
        assert key in sub["args"]
    mark = next(e for e in events if e.get("cat") == "mark")
    assert mark["ph"] == "X" and mark["ts"] <= sub["ts"] <= mark["ts"] + mark["dur"]
    bell = next(e for e in events if e.get("cat") == "doorbell" and e["args"]["record_index"] == rec)
    assert bell["ts"] == sub["ts"] and bell["pid"] == manifest("builtin-vadd")["summary"]["pids"][0]


def test_ioctl_event_names():
    assert ioctl_event_name({"summary": "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION on "
                                        "0x1: x=1"}) == "RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION"
    assert ioctl_event_name({"summary": "RM_ALLOC NV01_ROOT_CLIENT 0xc1d00025 under 0x0"}) == \
        "RM_ALLOC NV01_ROOT_CLIENT"
    assert ioctl_event_name({"summary": "UVM_INITIALIZE: rmStatus=NV_OK"}) == "UVM_INITIALIZE"
    assert ioctl_event_name({"summary": "", "escape": "NV_ESC_CARD_INFO"}) == "NV_ESC_CARD_INFO"


def _synthetic():
    """synthetic: a model with two threads, API calls around ioctls and a doorbell, one call
    with bytes and an object in its args, one that overlaps without nesting."""
    t0 = 1_000_000_000
    ioctl = dict(index=1, pid=100, tid=100, fd=3, path="/dev/nvidiactl", request=0xC020462A,
                 escape="NV_ESC_RM_CONTROL", ret=0, errno=0, t_start=t0 + 2_000, t_end=t0 + 3_000,
                 complete=True, summary="RM_CONTROL NV2080_CTRL_CMD_GPU_GET_INFO_V2 on 0x1")
    sub = dict(index=2, pid=100, tid=100, t=t0 + 4_000, token=0xA, hClient=1, channel=0x5C00001C,
               **{"class": 0xC86F}, gp_put_prev=1, gp_put=2, gp_entries=1024, flags=1,
               gpfifo_va=0, doorbell_addr=0, rip=0, lost=0, entries=[{"raw": 5}],
               segments=[{"va": 0x1000, "size": 16, "flags": 1, "hex": b"\0" * 16}])
    launch = SimpleNamespace(record_index=2, summary={
        "kernel": True, "grid": [7, 1, 1], "block": [32, 1, 1], "cluster": None,
        "qmd_address": 0x2000, "qmd_version": "V04_00", "source": "SEND_PCAS_A"})
    api_calls = [
        {"pid": 100, "tid": 100, "name": "cuLaunchKernel", "t_start": t0 + 1_000,
         "t_end": t0 + 5_000, "args": {"kernel": "synthetic_kernel", "grid": (7, 1, 1),
                                       "raw": b"\x01\x02", "stream": object()}},
        {"pid": 100, "tid": 101, "name": "cuMemAlloc_v2", "t_start": t0 + 1_500,
         "t_end": t0 + 2_500, "args": {}},
        {"pid": 100, "tid": 100, "name": "cuCtxSynchronize", "t_start": t0 + 4_500,
         "t_end": t0 + 9_000, "args": {}},      # overlaps cuLaunchKernel without nesting
    ]
    return SimpleNamespace(path="synthetic-api", meta={"gpu": "synthetic"},
                           header={"t_start_ns": t0}, processes={100: {"exe": "/bin/synthetic",
                                                                      "cmdline": ["synthetic"]}},
                           ioctls=[ioctl], submissions=[sub], launches=[launch], marks=[],
                           api_calls=api_calls)


def test_api_calls_become_thread_events():
    doc = json.loads(json.dumps(timeline(_synthetic())))
    assert validate_trace(doc) == []
    api = {e["name"]: e for e in doc["traceEvents"] if e.get("cat") == "api"}
    launch = api["cuLaunchKernel"]
    assert (launch["pid"], launch["tid"], launch["ts"], launch["dur"]) == (100, 100, 1.0, 4.0)
    assert launch["args"] == {"kernel": "synthetic_kernel", "grid": [7, 1, 1], "raw": "0102",
                              "stream": launch["args"]["stream"]}
    assert isinstance(launch["args"]["stream"], str)
    assert api["cuMemAlloc_v2"]["tid"] == 101
    # the overlapping call went to the thread's overflow track, named, not dropped
    sync = api["cuCtxSynchronize"]
    assert sync["tid"] != 100 and "moved" in sync["args"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
             if e["name"] == "thread_name"}
    assert names[(100, sync["tid"])] == "main thread (overlapping)"
    assert names[(100, 101)] == "thread 101"
    # the submission takes its kernel name from the API call around its doorbell
    sub = next(e for e in doc["traceEvents"] if e.get("cat") == "submission")
    assert sub["name"] == "synthetic_kernel grid 7x1x1"
    ioctl = next(e for e in doc["traceEvents"] if e.get("cat") == "ioctl")
    assert ioctl["name"] == "RM_CONTROL NV2080_CTRL_CMD_GPU_GET_INFO_V2"
    assert launch["ts"] <= ioctl["ts"] and ioctl["ts"] + ioctl["dur"] <= launch["ts"] + launch["dur"]


def test_model_without_api_calls_attribute():
    m = _synthetic()
    del m.api_calls
    doc = timeline(m)
    assert not any(e.get("cat") == "api" for e in doc["traceEvents"])
    assert validate_trace(json.loads(json.dumps(doc))) == []


@pytest.mark.parametrize("damage,message", [
    ({"ph": "X", "name": "a", "ts": 1, "pid": 1, "tid": 1}, "without 'dur'"),
    ({"ph": "X", "name": "a", "ts": -1, "dur": 1, "pid": 1, "tid": 1}, "ts must be"),
    ({"ph": "i", "name": "a", "ts": 1, "s": "x", "pid": 1, "tid": 1}, "instant scope"),
    ({"ph": "X", "name": 5, "ts": 1, "dur": 1, "pid": 1, "tid": 1}, "name must be"),
    ({"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": "1", "tid": 1}, "pid/tid"),
    ({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {}}, "needs args.name"),
])
def test_validator_catches_synthetic_damage(damage, message):
    good = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}}]
    assert any(message in p for p in validate_trace({"traceEvents": good + [damage]}))


def test_validator_catches_bad_nesting():
    meta = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}}]
    x = [{"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
         {"ph": "X", "name": "b", "ts": 5, "dur": 10, "pid": 1, "tid": 1}]
    assert any("without nesting" in p for p in validate_trace({"traceEvents": meta + x}))
    x[1]["dur"] = 5
    assert validate_trace({"traceEvents": meta + x}) == []


def test_cli_writes_file(capture_files, tmp_path):
    out = tmp_path / "trace.json"
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    res = runner.invoke(trace_decode, ["timeline", str(capture_files["runtime-vadd"]), "-o",
                                       str(out)])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(out.read_text())
    assert validate_trace(doc) == [] and doc["displayTimeUnit"] == "ns"
    res = runner.invoke(trace_decode, ["timeline", str(tmp_path / "synthetic-missing.tlc")])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


def _first_around_by_scan(points, spans):
    """The definition _first_around replaces: for each point, the first span in order that
    holds it on its thread (what the timeline asked of every API call at every doorbell)."""
    found = {}
    for k, (t, pid, tid) in enumerate(points):
        for n, (p, th, start, end) in enumerate(spans):
            if p == pid and th == tid and start <= t <= end:
                found[k] = n
                break
    return found


def test_first_around_is_the_first_span_in_order_that_holds_the_point():
    """The timeline names each doorbell after the API call around it on its thread in one
    sweep per thread (decoders/timeline.py _first_around; the scan it replaces was
    quadratic: 21 s of launch-loop-10k's timeline, 69 s of a 100-step training job's).
    Synthetic spans, nested, overlapping, empty and reversed, on a few threads, against the
    scan it replaces."""
    import random

    from decoders.timeline import _first_around
    rng = random.Random(29)
    for _ in range(300):
        threads = [(rng.randrange(3), rng.randrange(3)) for _ in range(rng.randrange(1, 4))]
        spans = []
        for _ in range(rng.randrange(0, 40)):
            start = rng.randrange(100)
            spans.append((*rng.choice(threads), start, start + rng.randrange(-3, 30)))
        points = [(rng.randrange(-5, 140), *rng.choice(threads + [(9, 9)]))
                  for _ in range(rng.randrange(0, 40))]
        assert _first_around(points, spans) == _first_around_by_scan(points, spans)


@pytest.mark.parametrize("argv", [["timeline", "{cap}", "-o", "{out}"],
                                  ["explain", "{cap}", "--html", "{out}"]])
def test_output_named_as_a_fifo_stays_one(tmp_path, argv):
    """A device or FIFO named as the output is written in place (tracer.write_text): the
    temporary file and rename that keep a regular file whole put a regular file in its
    place (run as root, `trace-decode timeline -o /dev/null` replaced /dev/null)."""
    import os
    import stat
    import threading

    from tracer.cli import trace_decode
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []

    def read():
        with open(fifo, "rb") as f:
            got.append(f.read())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    cap = str(capture_file("builtin-vadd"))
    res = CliRunner().invoke(trace_decode, [a.format(cap=cap, out=fifo) for a in argv])
    reader.join(60)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and len(got[0]) > 1000 and not list(tmp_path.glob("out.fifo.tmp*"))


@pytest.mark.parametrize("name", ["builtin-vadd", "ddp-2rank", "jax-train"])
def test_written_as_sorted_on_disk_is_the_document(name, monkeypatch):
    """`trace-decode timeline` writes the events one at a time, sorted on disk in runs
    (decoders/extsort.py: a 500-step job's timeline took 1 GB held whole). With runs of 50
    events (every list merged from many runs), the text is json.dump's of timeline(model)
    made in memory: the same events in the same order, ties included (builtin-vadd: mark
    pairs; ddp-2rank: two ranks' own channel tracks; jax-train: ~4,300 launches)."""
    import io

    import decoders.extsort as extsort
    from decoders.timeline import write_timeline
    m = model(name)
    whole = json.dumps(timeline(m), separators=(",", ":")) + "\n"
    monkeypatch.setattr(extsort.ExternalSort, "RUN", 50)
    out = io.StringIO()
    write_timeline(m, out)
    assert out.getvalue() == whole


def test_worker_processes_make_the_same_timeline(monkeypatch):
    """`trace-decode timeline` has worker processes read back each ioctl, API call,
    submission and launch and make what the timeline takes of it (tracer/parallel.py
    map_ranges): byte for byte what one process writes, also where a worker fails on some
    ranges and this process makes them itself (launch-loop-10k: 10,100 kernel launches,
    their submissions and API calls, each list past map_ranges' MIN_ITEMS)."""
    import io
    import os

    import decoders.timeline as tl
    from tracer import parallel
    m = model("launch-loop-10k")
    assert min(len(m.launches), len(m.submissions), len(m.api_calls)) >= parallel.MIN_ITEMS
    parent = os.getpid()

    def flaky(view):
        def v(item):        # a worker's range holding a multiple of 97 fails whole
            if os.getpid() != parent and isinstance(item, dict) and \
                    item.get("index", 1) % 97 == 0:
                raise RuntimeError("a worker failed")
            return view(item)
        return v

    texts = []
    for jobs, each in (("1", tl._each), ("3", parallel.map_ranges),
                       ("3", lambda seq, view: parallel.map_ranges(seq, flaky(view)))):
        monkeypatch.setenv("TRACE_LAUNCH_JOBS", jobs)
        out = io.StringIO()
        tl.write_timeline(m, out, None, each)
        texts.append(out.getvalue())
    assert texts[0] == texts[1] == texts[2]
    assert texts[0].count('"cat":"submission"') == len(m.submissions)
