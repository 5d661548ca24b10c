"""Capture windows in the shim (shim/window.c), on the simulated device and the fake libcuda
(synthetic, no GPU): tests/c/winprog.c is a six-step loop whose driver calls submit from
inside (tests/c/fakecuda.c calls back into the program), with an NVTX range "step" around
each step and cuProfilerStart/Stop around steps 2-3.

Each window kind is run on the same program, and every record is checked against what the
program says each submission was: inside the window everything is recorded, byte for byte
as without a window; outside it the ioctls, the bookkeeping calls (load, lookups,
allocation, graph instantiate and upload) and a graph exec's first launch are kept, and the
other submissions and calls are dropped and counted. tests/c/nvtxprog.c opens NVTX ranges
in every form, through tests/c/nvtxload.h and through NVIDIA's own header where installed.
"""
import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from decoders.capture import format as F
from decoders.capture.reader import read_capture
from decoders.capture.writer import append_end, create_capture
from tests.test_shim import CC, ROOT, _devdir, shim  # noqa: F401  (the session-built shim)

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")

# NVIDIA's NVTX v3 headers (header-only), where a CUDA toolkit is installed.
NVTX_INCLUDE = next((p for p in sorted(Path("/usr/local").glob("cuda*/include"), reverse=True)
                     if (p / "nvtx3" / "nvToolsExt.h").exists()), None)


@pytest.fixture(scope="module")
def winbin(tmp_path_factory):
    d = tmp_path_factory.mktemp("win")
    c = ROOT / "tests/c"
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-o", str(d / "libcuda.so.1"),
                    str(c / "fakecuda.c")], check=True)
    subprocess.run([CC, "-O1", "-I", str(c), "-o", str(d / "winprog"), str(c / "winprog.c"),
                    "-ldl", "-lpthread"], check=True)
    subprocess.run([CC, "-O1", "-I", str(c), "-o", str(d / "nvtxprog"), str(c / "nvtxprog.c"), "-ldl"],
                   check=True)
    if NVTX_INCLUDE is not None:
        subprocess.run([CC, "-O1", "-DREAL_NVTX", "-I", str(NVTX_INCLUDE), "-o", str(d / "nvtxprog_real"),
                        str(c / "nvtxprog.c"), "-ldl"], check=True)
    return d


def _trace(shim, argv, cap, dev, window, libdir):  # noqa: F811
    create_capture(cap, {"argv": [str(a) for a in argv], "synthetic": True})
    env = dict(os.environ, LD_PRELOAD=str(shim), TRACE_LAUNCH_CAPTURE=str(cap), TRACE_LAUNCH_DEVDIR=str(dev),
               TRACE_LAUNCH_MODE="full", LD_LIBRARY_PATH=str(libdir), NVTX_INJECTION64_PATH=str(shim))
    for k in ("TRACE_LAUNCH_WINDOW", "TRACE_LAUNCH_WINDOW_NAME", "TRACE_LAUNCH_WINDOW_SKIP",
              "TRACE_LAUNCH_WINDOW_COUNT"):
        env.pop(k, None)
    env.update({f"TRACE_LAUNCH_WINDOW{'_' + k if k else ''}": str(v) for k, v in window.items()})
    proc = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    append_end(cap, proc.returncode)
    reader, recs = read_capture(cap)
    assert reader.problems == []
    return proc, recs


WINDOWS = {
    "all": {},
    "profiler": {"": "cudaProfilerApi"},
    "nvtx": {"": "nvtx", "NAME": "step", "SKIP": 2, "COUNT": 2},
    "launches": {"": "launches", "SKIP": 4, "COUNT": 4},
}


@pytest.fixture(scope="module")
def runs(shim, winbin, tmp_path_factory):  # noqa: F811
    out = {}
    for name, window in WINDOWS.items():
        tmp = tmp_path_factory.mktemp(f"win-{name}")
        dev = _devdir(tmp)
        truth_path = tmp / "truth.json"
        _, recs = _trace(shim, [winbin / "winprog", dev, truth_path], tmp / "c.tlc", dev, window, winbin)
        truth = json.loads(truth_path.read_text())
        subs = [s for s in truth["submissions"] if s["token"]]
        assert len(subs) == len(truth["labels"]) == 35
        for s, label in zip(subs, truth["labels"]):
            s.update(label)
        out[name] = (recs, subs, tmp / "c.tlc")
    return out


def _fate(mode, s):
    """What the window should make of winprog's submission s: "in" (recorded, inside the
    window), "kept" (recorded outside it: a graph's QMDs) or "out" (not recorded)."""
    what, step = s["what"], s["step"]
    if mode == "all":
        return "in"
    if mode == "launches":      # launch calls 5-8: step 2 and the first two calls of step 3
        inside = step == 2 or (step == 3 and what == "launch")
    else:                       # cuProfilerStart/Stop and NVTX ranges 3-4: steps 2 and 3
        inside = step == 2 or (step == 3 and not (mode == "nvtx" and what == "bare"))
    if inside:
        return "in"
    if what in ("instantiate", "upload"):
        return "kept"
    # a graph exec's first launch after its instantiate, and (launches window) after its upload
    if what == "graph" and (step == 0 or (mode == "launches" and step == 3)):
        return "kept"
    return "out"


def _subs(recs):
    return [r for r in recs if r.type == "SUBMISSION"]


@pytest.mark.parametrize("mode", list(WINDOWS))
def test_only_window_submissions_recorded_byte_for_byte(runs, mode):
    recs, subs, _ = runs[mode]
    want = [s for s in subs if _fate(mode, s) != "out"]
    got = [r.body for r in _subs(recs)]
    assert [(g.gp_put_prev, g.gp_put) for g in got] == [(w["put_prev"], w["put"]) for w in want]
    for g, w in zip(got, want):
        # each holds only its own GP entry (I18): GP_PUT moved on past the ones not recorded
        assert g.lost == 0 and list(g.entries) == [w["entry"]]
        (seg,) = g.segments
        assert bytes(seg.data) == bytes.fromhex(w["hex"])


def _calls(recs):
    from decoders.cuda.api import BY_SLOT
    enters = [(r.body.call, BY_SLOT[r.body.slot].name) for r in recs if r.type == "API_ENTER"]
    exits = [(r.body.call, BY_SLOT[r.body.slot].name) for r in recs if r.type == "API_EXIT"]
    assert enters == exits      # both records of a call or neither (I19)
    return [name for _, name in enters]


BOOKKEEPING = ["cuModuleLoadData", "cuModuleGetFunction", "cuMemAlloc_v2",
               "cuGraphInstantiateWithFlags"]


def test_calls_recorded_in_and_around_each_window(runs):
    for mode in WINDOWS:    # cuProfilerStart/Stop through cuGetProcAddress: the brackets
        assert not [r for r in runs[mode][0] if r.type == "NOTE"
                    and b"does not bracket" in bytes(r.body.text)], mode
    step = ["cuLaunchKernel", "cuLaunchKernel", "cuMemcpyHtoD_v2"]
    assert _calls(runs["all"][0]) == (
        BOOKKEEPING + (step + ["cuGraphLaunch"]) * 2 + ["cuProfilerStart"] + step + ["cuGraphLaunch"]
        + step + ["cuGraphUpload", "cuGraphLaunch", "cuProfilerStop"] + (step + ["cuGraphLaunch"]) * 2
        + ["cuModuleGetFunction", "cuLaunchKernel", "cuMemsetD8_v2"])
    inside = ["cuProfilerStart"] + step + ["cuGraphLaunch"] + step + ["cuGraphUpload", "cuGraphLaunch",
                                                                      "cuProfilerStop"]
    # after the window the lookup and the launch into a capturing stream (it builds a graph)
    # are kept, the memset not
    tail = ["cuModuleGetFunction", "cuLaunchKernel"]
    for mode in ("profiler", "nvtx"):
        assert _calls(runs[mode][0]) == BOOKKEEPING + ["cuGraphLaunch"] + inside + tail, mode
    assert _calls(runs["launches"][0]) == BOOKKEEPING + ["cuGraphLaunch", "cuProfilerStart"] + step + [
        "cuGraphLaunch", "cuLaunchKernel", "cuLaunchKernel", "cuGraphUpload", "cuGraphLaunch",
        "cuProfilerStop"] + tail


def _windows(recs):
    return [(r.index, r.body) for r in recs if r.type == "WINDOW"]


def _call_number(recs, name, k=0):
    from decoders.cuda.api import BY_SLOT
    return [r.body.call for r in recs if r.type == "API_ENTER" and BY_SLOT[r.body.slot].name == name][k]


def test_edges_recorded_with_their_trigger(runs):
    assert _windows(runs["all"][0]) == []
    expect = {  # mode: (trigger, BEGIN ordinal, END ordinal, BEGIN name, END name, launches at each)
        "profiler": ("PROFILER_API", 1, 1, b"cuProfilerStart", b"cuProfilerStop", 4, 8),
        "nvtx": ("NVTX", 3, 4, b"step", b"step", 4, 8),
        "launches": ("LAUNCHES", 5, 8, b"cuLaunchKernel", b"cuLaunchKernel", 4, 8),
    }
    for mode, (trigger, o1, o2, n1, n2, l1, l2) in expect.items():
        recs, subs, _ = runs[mode]
        (i1, b), (i2, e) = _windows(recs)
        assert (F.TL_WINDOW_EDGE[b.edge], F.TL_WINDOW_EDGE[e.edge]) == ("BEGIN", "END")
        assert F.TL_WINDOW_TRIGGER[b.trigger] == F.TL_WINDOW_TRIGGER[e.trigger] == trigger
        assert (b.ordinal, e.ordinal, bytes(b.name), bytes(e.name)) == (o1, o2, n1, n2)
        assert (b.launches, e.launches) == (l1, l2)
        # every submission recorded inside lies between the edges, every other one outside
        fates = [_fate(mode, s) for s in subs if _fate(mode, s) != "out"]
        for r, fate in zip(_subs(recs), fates):
            assert (i1 < r.index < i2) == (fate == "in"), (mode, r.index)
        # the counts so far: what was skipped before each edge
        before = [s for s in subs if _fate(mode, s) == "out"]
        assert b.submissions_skipped == sum(1 for s in before if s["step"] < 2)
        assert e.submissions_skipped == b.submissions_skipped     # none while it was open
        marks = {r.body.id: r.index for r in recs if r.type == "MARK"}
        assert marks[2] < i1 < i2 < marks[4]
    # the call that triggered each edge
    p = runs["profiler"][0]
    (_, b), (_, e) = _windows(p)
    assert (b.call, e.call) == (_call_number(p, "cuProfilerStart"), _call_number(p, "cuProfilerStop"))
    n = runs["nvtx"][0]
    assert [w.call for _, w in _windows(n)] == [0, 0]
    ln = runs["launches"][0]
    (_, b), (_, e) = _windows(ln)
    assert (b.call, e.call) == (_call_number(ln, "cuLaunchKernel", 0), _call_number(ln, "cuLaunchKernel", 3))


def _stats(recs):
    (st,) = [r.body for r in recs if r.type == "STATS"]
    return dict(zip(F.TL_STATS_NAMES, st.counters))


def test_skipped_work_counted(runs):
    for mode in WINDOWS:
        recs, subs, _ = runs[mode]
        fates = Counter(_fate(mode, s) for s in subs)
        st = _stats(recs)
        assert st["window_submissions_skipped"] == fates["out"], mode
        assert st["window_submissions_kept"] == fates["kept"], mode
        assert st["submissions"] == fates["in"] + fates["kept"], mode
        calls = _calls(runs["all"][0])
        got = _calls(recs)
        assert st["window_api_calls_skipped"] == len(calls) - len(got), mode
        launches = Counter(calls)["cuLaunchKernel"] + Counter(calls)["cuGraphLaunch"]
        assert st["window_launches_skipped"] == launches - Counter(got)["cuLaunchKernel"] - \
            Counter(got)["cuGraphLaunch"], mode
        assert st["doorbells"] == len(subs), mode
        assert st["api_calls"] == len(got), mode


def test_ioctls_and_mappings_all_kept(runs):
    def shape(recs):
        return [(r.type, r.body.request if r.type == "IOCTL" else r.body.get("length")) for r in recs
                if r.type in ("IOCTL", "MMAP", "OPEN", "MUNMAP")]
    for mode in WINDOWS:
        assert shape(runs[mode][0]) == shape(runs["all"][0]), mode


def test_window_that_never_opens_and_a_bad_kind(shim, winbin, tmp_path):  # noqa: F811
    dev = _devdir(tmp_path)
    _, recs = _trace(shim, [winbin / "winprog", dev, tmp_path / "t.json"], tmp_path / "a.tlc", dev,
                     {"": "nvtx", "NAME": "no such range"}, winbin)
    assert _windows(recs) == []
    # instantiate, the exec's first launch, the upload and the exec's first launch after it
    assert [r.body.token for r in _subs(recs)] == [0xA] * 4
    assert _calls(recs) == BOOKKEEPING + ["cuGraphLaunch", "cuProfilerStart", "cuGraphUpload",
                                          "cuGraphLaunch", "cuProfilerStop", "cuModuleGetFunction",
                                          "cuLaunchKernel"]
    d2 = tmp_path / "b"
    d2.mkdir()
    dev2 = _devdir(d2)
    _, recs = _trace(shim, [winbin / "winprog", dev2, d2 / "t.json"], d2 / "b.tlc", dev2,
                     {"": "bogus"}, winbin)
    notes = [bytes(r.body.text).decode() for r in recs if r.type == "NOTE"]
    assert any("TRACE_LAUNCH_WINDOW is not" in n for n in notes)
    assert len(_subs(recs)) == 35 and _windows(recs) == []


# ---- NVTX: every form of range, through the injection ------------------------------------

def _nvtx_run(shim, winbin, tmp_path, prog, window):  # noqa: F811
    dev = tmp_path / "nodev"
    dev.mkdir(exist_ok=True)
    proc, recs = _trace(shim, [winbin / prog], tmp_path / f"{prog}.tlc", dev, window, winbin)
    seq = []
    for r in recs:
        if r.type == "MARK":
            seq.append(r.body.id)
        elif r.type == "WINDOW":
            seq.append((F.TL_WINDOW_EDGE[r.body.edge], r.body.ordinal))
    return json.loads(proc.stdout), seq


NVTX_PROGS = ["nvtxprog"] + (["nvtxprog_real"] if NVTX_INCLUDE is not None else [])


@pytest.mark.parametrize("prog", NVTX_PROGS)
def test_nvtx_range_forms(shim, winbin, tmp_path, prog):  # noqa: F811
    """Ranges 1-7 of tests/c/nvtxprog.c: PushA nested in another range, PushEx, StartA/End,
    PushW, a registered string in a domain, a domain range with a default-domain range
    inside it that it outlives, StartEx; "steps", "ste", L"stop" and "" are not "step"."""
    if prog == "nvtxprog_real":
        assert NVTX_INCLUDE is not None
    for k in range(7):
        out, seq = _nvtx_run(shim, winbin, tmp_path, prog, {"": "nvtx", "NAME": "step", "SKIP": k})
        i = seq.index(k + 1)
        assert seq[i - 1] == ("BEGIN", k + 1) and seq[i + 1] == ("END", k + 1), (k, seq)
        assert out["depth"] == [0, 1, 1, 0]    # pushes answer their level, pops the level left
    _, seq = _nvtx_run(shim, winbin, tmp_path, prog, {"": "nvtx", "NAME": "step", "COUNT": 0})
    assert seq[0] == ("BEGIN", 1) and "END" not in [x[0] for x in seq if isinstance(x, tuple)]
    _, seq = _nvtx_run(shim, winbin, tmp_path, prog, {"": "nvtx", "NAME": "step", "COUNT": 7})
    assert seq == [("BEGIN", 1), 1, 2, 3, 4, 5, 6, 60, 7, ("END", 7), 70]
    # another window kind: the injection declines, NVTX stays the header's no-op
    out, seq = _nvtx_run(shim, winbin, tmp_path, prog, {"": "cudaProfilerApi"})
    assert seq == [1, 2, 3, 4, 5, 6, 60, 7, 70] and out["depth"][0] < 0


@pytest.mark.skipif(NVTX_INCLUDE is not None, reason="NVIDIA's NVTX headers are installed")
def test_nvtx_real_header_absent():
    pytest.skip("no CUDA toolkit under /usr/local: nvtxprog.c was built against "
                "tests/c/nvtxload.h only, not NVIDIA's nvtx3 header")


# ---- trace-launch's options ---------------------------------------------------------------

def test_trace_launch_window_options(shim, winbin, tmp_path):  # noqa: F811
    """`trace-launch --nvtx-range step --range-skip 2 --range-count 2` end to end: the tracer
    names the shim as the NVTX injection library, writes capture_range in the header, and
    the report says what the window was."""
    import sys
    dev = _devdir(tmp_path)
    cap = tmp_path / "w.tlc"
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRACE_LAUNCH_SHIM=str(shim), TRACE_LAUNCH_DEVDIR=str(dev),
               LD_LIBRARY_PATH=str(winbin), NO_COLOR="1", TRACE_LAUNCH_LIVE="0")
    res = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-launch", "--nvtx-range", "step",
                          "--range-skip", "2", "--range-count", "2", "--no-compress", "-o", str(cap),
                          str(winbin / "winprog"), str(dev), str(tmp_path / "t.json")],
                         env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    section = res.stderr.split("\ncapture window\n", 1)[1].split("\n\n", 1)[0]
    assert 'asked    NVTX range "step": the 3rd to the 4th' in section
    assert 'range "step" #3' in section and 'range "step" #4' in section
    from decoders.capture.reader import CaptureReader, open_capture
    with open_capture(str(cap)) as f:
        meta = CaptureReader(f).meta
    assert meta["capture_range"] == {"kind": "nvtx", "name": "step", "skip": 2, "count": 2}
    _, recs = read_capture(cap)
    assert [F.TL_WINDOW_TRIGGER[b.trigger] for _, b in _windows(recs)] == ["NVTX", "NVTX"]


@pytest.mark.parametrize("args", [
    ["--capture-range", "nvtx"],                                  # no range name
    ["--capture-range", "cudaProfilerApi", "--nvtx-range", "x"],  # a name for another kind
    ["--launch-range", "10"], ["--launch-range", "a:b"], ["--launch-range", "-1:2"],
    ["--launch-range", "1:2", "--capture-range", "cudaProfilerApi"],
    ["--mode", "ioctl", "--launch-range", "1:2"],
])
def test_trace_launch_window_usage_errors(args, tmp_path):
    from click.testing import CliRunner
    from tracer.cli import trace_launch
    res = CliRunner().invoke(trace_launch, args + ["-o", str(tmp_path / "x.tlc"), "true"])
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "x.tlc").exists()


def test_capture_window_option_values():
    from tracer.cli_launch import capture_window
    assert capture_window("none", None, 0, 1, None, "full") is None
    assert capture_window("none", "step", 500, 10, None, "full") == \
        {"kind": "nvtx", "name": "step", "skip": 500, "count": 10}
    assert capture_window("cudaProfilerApi", None, 0, 1, None, "full") == \
        {"kind": "cudaProfilerApi", "skip": 0, "count": 1}
    assert capture_window("none", None, 0, 1, "1000:50", "full") == \
        {"kind": "launches", "skip": 1000, "count": 50}
    assert capture_window("none", None, 0, 1, "1000:", "full")["count"] == 0
