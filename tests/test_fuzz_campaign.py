"""The fuzz campaign's fast half (bench/fuzz.py is the long one): mutants of real captures,
pushbuffer dumps and cubins through the real `trace-decode` process; absurd length and
count fields (offsets from the format.py declarations) under tracemalloc; captures cut by
SIGKILL; and a scan showing decoding executes nothing from a capture.

Mutants are synthetic-*: bytes of the recordings in captures/, mutated with fixed seeds.
tests/test_capture_fuzz.py covers in-process decode of bit flips, truncation and splices
(CliRunner); this file runs the installed entry point as a subprocess, so an uncaught
exception, a crash at exit or a stray traceback on stderr would show as they would to a
user."""
import ast
import importlib.util
import io
import json
import os
import re
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CAPTURES, ROOT, capture_bytes, capture_file, manifest, record_spans
from decoders.capture import format as F
from decoders.capture.reader import CaptureReader
from decoders.cuda.calls import ApiCalls
from decoders.errors import TraceLaunchError
from decoders.session import decode_capture
from tracer.report import render_text, to_json

_spec = importlib.util.spec_from_file_location("bench_fuzz", ROOT / "bench" / "fuzz.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

OFFSET = re.compile(r"offset (0x[0-9a-f]+|\d+)")
FIXTURES = ROOT / "tests" / "fixtures" / "cubins"


def _window(name, head=16, tail=8):
    """The recording's header, its first `head` records, its last `tail` (with END)."""
    data = capture_bytes(name)
    spans = record_spans(name)
    keep = spans[:head] + spans[-tail:]
    return fuzz.make_capture(data[:spans[0][0]], [data[o:o + n] for o, n, _ in keep])


# ---- 1. the trace-decode process on mutants ------------------------------------------------

def _cases():
    """(target, seed, bytes): every mutation kind on capture windows, dumps and cubins."""
    import random
    caps = [fuzz.Base("capture", n, _window(n)) for n in ("builtin-vadd", "two-streams")]
    data = capture_bytes("builtin-vadd")
    segs = []
    for rec in CaptureReader(io.BytesIO(data)).records():
        if rec.type == "SUBMISSION":
            segs += [bytes(s.data) for s in rec.body.segments if s.size >= 64]
        if len(segs) >= 4:
            break
    dumps = [fuzz.Base("dump", f"seg{i}", s) for i, s in enumerate(segs[:2])]
    cubins = [fuzz.Base("cubin", p, (FIXTURES / p).read_bytes())
              for p in ("shapes.sm_90.cubin", "shapes.sm_90.size.fatbin")]
    out = []
    for seed, kind in enumerate(fuzz.KINDS * 2):
        rng = random.Random(seed)
        for target, pool in (("capture", caps), ("dump", dumps), ("cubin", cubins)):
            if target != "capture" and seed % 2:
                continue
            base = pool[seed % len(pool)]
            mutant, desc = fuzz.mutate(rng, base, kind, sweep=rng.randrange(1000))
            out.append((target, f"{kind}-{seed}", mutant, desc))
    return out


def _argv(target, path):
    cmd = {"capture": [str(path)], "dump": ["pushbuffer", str(path), "--gpu", "hopper"],
           "cubin": ["cubin", str(path)]}[target]
    return [sys.executable, "-m", "tracer.cli_main", "trace-decode"] + cmd


def test_cli_process_on_mutants_exits_0_or_2_with_offsets(tmp_path):
    # `trace-decode cubin` crashes on every input: test_cli_cubin_command_decodes_a_cubin
    cases = [c for c in _cases() if c[0] != "cubin"]
    procs = []
    for target, name, data, desc in cases:
        path = tmp_path / f"synthetic-{target}-{name}.bin"
        path.write_bytes(data)
        procs.append((path, desc, subprocess.Popen(
            _argv(target, path), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)})))
        if len(procs) % 4 == 0:
            procs[-4][2].wait()           # at most a few at once on a small machine
    seen = set()
    for path, desc, p in procs:
        err = p.communicate(timeout=300)[1].decode("utf-8", "replace")
        where = f"{path.name} ({desc}): rc {p.returncode}\n{err[-2000:]}"
        assert p.returncode in (0, 2), where
        assert "Traceback" not in err, where
        if p.returncode == 2:
            lines = err.strip().splitlines()
            assert lines and all(OFFSET.search(line) for line in lines), where
        else:
            assert err == "", where
        seen.add(p.returncode)
    assert seen == {0, 2}     # the sample has mutants that decode and mutants that do not


def test_cli_cubin_command_decodes_a_cubin_and_mutants(tmp_path):
    procs = [(FIXTURES / "shapes.sm_90.cubin", subprocess.run(
        _argv("cubin", FIXTURES / "shapes.sm_90.cubin"), cwd=ROOT, capture_output=True))]
    for target, name, data, desc in _cases():
        if target == "cubin":
            path = tmp_path / f"synthetic-{name}.cubin"
            path.write_bytes(data)
            procs.append((path, subprocess.run(_argv("cubin", path), cwd=ROOT,
                                               capture_output=True)))
    valid = procs[0][1]
    assert valid.returncode == 0 and b"tl_grid3d" in valid.stdout, valid.stderr[-800:]
    for path, p in procs[1:]:
        err = p.stderr.decode("utf-8", "replace")
        assert p.returncode in (0, 2) and "Traceback" not in err, (path.name, err[-800:])
        if p.returncode == 2:
            assert all(OFFSET.search(line) for line in err.strip().splitlines()), err


# ---- 2. absurd lengths and counts, declared offsets, bounded memory ----------------------

SYNTH = {n: fuzz.Base("capture", n, _window(n, head=24, tail=12))
         for n in ("builtin-vadd", "sigkill", "graph-replay")}
MEM_SLACK = 16 << 20


@st.composite
def absurd(draw):
    base = SYNTH[draw(st.sampled_from(sorted(SYNTH)))]
    data = bytearray(base.data)
    picks = []
    for _ in range(draw(st.integers(1, 3))):
        path, off, width, old = draw(st.sampled_from(base.fields))
        value = draw(st.sampled_from(fuzz.absurd_values(width, len(data), old)))
        data[off:off + width] = value.to_bytes(width, "little")
        picks.append(f"{path}={value:#x}")
    return Absurd((base.name, bytes(data), picks))


class Absurd(tuple):
    """(base name, bytes, [field=value]) printed without its 40 kB of bytes."""

    def __repr__(self):
        return f"Absurd({self[0]}, {len(self[1])} bytes, {self[2]})"


def test_length_fields_come_from_the_declarations():
    """The campaign's targets: every length/count field format.py declares is found at the
    offset the declaration gives, in real records."""
    base = SYNTH["sigkill"]
    names = {p.split(".", 2)[-1].split("[")[0] for p, _, _, _ in base.fields}
    for want in ("length", "nentries", "nsegments", "path_len", "arg_size", "nbufs", "nargs",
                 "nsections", "meta_len", "header_size", "cursor"):
        assert want in names, (want, sorted(names))
    for path, off, width, value in base.fields:
        assert int.from_bytes(base.data[off:off + width], "little") == value, path
    # a field behind variable parts: the first segment's size sits after the fixed part
    # and nentries GP entries
    path, off, _, _ = next(f for f in base.fields if f[0].endswith(".segments[0].size"))
    k = int(path.split("[", 1)[1].split("]", 1)[0])
    start = next(o for p, o, _, _ in base.fields if p == f"record[{k}].SUBMISSION.length") - 4
    nentries = next(v for p, _, _, v in base.fields if p == f"record[{k}].SUBMISSION.nentries")
    fixed = sum(sc.sizeof() for sc in F.TL_SUBMISSION.subcons if sc.name not in
                ("entries", "segments"))
    assert off == start + F.TL_RECORD_HEADER_SIZE + fixed + 8 * nentries + 8


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(absurd())
def test_absurd_lengths_decode_cleanly_in_bounded_memory(tmp_path_factory, case):
    name, data, picks = case
    path = tmp_path_factory.mktemp("absurd") / f"synthetic-absurd-{name}.tlc"
    path.write_bytes(data)
    try:
        decode_capture(path)     # warm: imports and tables are not the input's doing
    except TraceLaunchError:
        pass
    tracemalloc.start()
    try:
        try:
            model = decode_capture(path)
        except TraceLaunchError as exc:
            assert OFFSET.search(str(exc)), (picks, str(exc))
            return
        render_text(model, io.StringIO(), show_ioctls=True, show_objects=True, show_stats=True)
        json.dumps(to_json(model), default=str)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 64 * len(data) + MEM_SLACK, (picks, peak, len(data))
    for p in model.problems:
        assert isinstance(p, TraceLaunchError) and OFFSET.search(str(p)), (picks, str(p))
        assert "MemoryError" not in str(p), (picks, str(p))


# ---- 3. captures cut by SIGKILL ------------------------------------------------------------

@pytest.fixture(scope="module")
def sigkill(tmp_path_factory):
    path = tmp_path_factory.mktemp("sigkill") / "sigkill.tlc"
    path.write_bytes(capture_bytes("sigkill"))
    return path, decode_capture(path, launches=False)


def _api(data):
    """(ApiCalls fed every API record of `data`, [each ApiCall in order])."""
    api, calls = ApiCalls(), []
    for rec in CaptureReader(io.BytesIO(data)).records():
        try:
            if rec.type == "API_ENTER":
                calls.append(api.enter(rec))
            elif rec.type == "API_EXIT":
                api.exit(rec)
        except TraceLaunchError:   # a damaged API record is a clean problem
            continue
    return api, calls


def test_sigkill_capture_decodes_every_record_and_no_exit(sigkill):
    """kernels/corpus_kill.cu killed itself with SIGKILL mid-run: the tracer still wrote END
    (exit status -9), but the process wrote no PROCESS_EXIT and no STATS, and one API call
    (API_ENTER) never returned (no API_EXIT)."""
    path, model = sigkill
    m = manifest("sigkill")
    spans = record_spans("sigkill")
    assert model.records == len(spans) == m["summary"]["records"]
    assert not model.problems
    by_type = m["summary"]["by_type"]
    assert len(model.ioctls) == by_type["IOCTL"]
    assert len(model.submissions) == by_type["SUBMISSION"] == m["summary"]["submissions"]
    assert "PROCESS_EXIT" not in by_type
    assert [p["exit"] for p in model.processes.values()] == [None]
    assert model.end["exit_status"] == m["ground_truth"]["native_exit"] == -9
    assert model.shim_stats == {}
    api, calls = _api(capture_bytes("sigkill"))
    assert len(calls) == by_type["API_ENTER"] and api.unmatched_exits == 0
    [never] = api.unfinished
    assert never.name == "cuLaunchKernel" and never.result is None
    assert never.index == len(spans) - 2          # the last record before END


def test_sigkill_report_says_the_process_died_inside_an_api_call(sigkill):
    path, model = sigkill
    out = io.StringIO()
    render_text(model, out)
    text = out.getvalue()
    assert "cuLaunchKernel" in text
    assert re.search(r"never returned|did not return|did not exit|killed|signal 9|SIGKILL",
                     text)


def test_report_tells_a_killed_process_from_one_that_returned_from_main(sigkill):
    """sigkill wrote no PROCESS_EXIT; builtin-vadd (python3 returning from main: libc calls
    exit internally, past the shim's wrapper) wrote one from the shim's destructor, without
    a status. Only the first is reported as cut."""
    _, killed = sigkill
    texts = {}
    for name, model in (("sigkill", killed),
                        ("builtin-vadd", decode_capture(capture_file("builtin-vadd")))):
        out = io.StringIO()
        render_text(model, out)
        texts[name] = out.getvalue()
    # the program trace-launch started: its status from the tracer's wait (END record)
    assert re.search(r"^  pid \d+: .* exit 137 \(killed by signal 9, SIGKILL; from "
                     r"trace-launch's wait; its records stop where it was cut\)$",
                     texts["sigkill"], re.M)
    assert "stop where it was cut" not in texts["builtin-vadd"]
    assert re.search(r"^  pid \d+: .* exit 0 \(from trace-launch's wait; it returned from "
                     r"main\)$", texts["builtin-vadd"], re.M)


def _cuts(name, last=50):
    """Cut points in the last `last` records: each boundary, and one place inside each record
    (rotating through the sync word, the header, the body's start, middle and last word)."""
    spans = record_spans(name)
    out = []
    for k in range(len(spans) - last, len(spans)):
        off, length, _ = spans[k]
        out.append((k, off, "boundary"))
        inside = off + (2, 21, F.TL_RECORD_HEADER_SIZE + 4, length // 2, length - 4)[k % 5]
        if off < inside < off + length:
            out.append((k, inside, "inside"))
    return out


@pytest.mark.parametrize("name", ["sigkill", "kernel-fault"])
def test_cut_in_the_last_records_keeps_every_whole_record(name):
    """As if the tracer died too (no END): every record before the cut is read as in the
    whole file, and the last problem says where the capture was cut."""
    data = capture_bytes(name)
    spans = record_spans(name)
    full = [(r.offset, r.type, r.body) for r in CaptureReader(io.BytesIO(data)).records()]
    # each cut re-reads the whole prefix: sigkill (5 MiB) gets its last 12 records
    for k, cut, where in _cuts(name, last=12 if name == "sigkill" else 50):
        reader = CaptureReader(io.BytesIO(data[:cut]))
        recs = [(r.offset, r.type, r.body) for r in reader.records()]
        assert recs == full[:k], (k, cut, where)
        assert reader.end_record is None
        assert reader.problems, (k, cut)
        last = reader.problems[-1]
        assert OFFSET.search(str(last)) and last.offset == spans[k][0], (cut, str(last))
        assert ("cut short" if where == "boundary" else "truncated") in str(last), str(last)


@pytest.mark.parametrize("name", ["sigkill", "kernel-fault"])
def test_cut_capture_decodes_the_same_counts_as_the_whole(name, tmp_path):
    data = capture_bytes(name)
    spans = record_spans(name)
    cuts = _cuts(name)
    for k, cut, where in cuts[::len(cuts) // 5] + [cuts[-1]]:
        path = tmp_path / f"synthetic-cut-{cut:#x}.tlc"
        path.write_bytes(data[:cut])
        model = decode_capture(path, launches=False)
        whole = spans[:k]
        assert model.cut_short and model.records == k
        assert len(model.ioctls) == sum(s[2] == 5 for s in whole)
        assert len(model.submissions) == sum(s[2] == 10 for s in whole)
        texts = [str(p) for p in model.problems]
        assert all(OFFSET.search(t) for t in texts), texts
        assert any("no END record" in t for t in texts), texts
        assert any(f"{spans[k][0]:#x}" in t for t in texts), (cut, texts)


# ---- API records that frame well but say too little ----------------------------------------

def _record(tname, body):
    b = F.BODY[tname].build(body)
    b += bytes(-len(b) % F.TL_ALIGN)
    return F.TL_RECORD_HEADER.build(dict(
        sync=F.TL_RECORD_SYNC, length=F.TL_RECORD_HEADER_SIZE + len(b),
        type=F.TL_REC_BY_NAME[tname], flags=F.TL_RF_COMPLETE, pid=7, tid=7, seq=0,
        t_start=0, t_end=0)) + b


def _synthetic_api_capture(slot, args, sections=()):
    """A capture of one API_ENTER record whose fields use every byte of its frame."""
    body = dict(slot=slot, call=1, result=0, nargs=len(args), nsections=len(sections),
                args=args, sections=[dict(tag=t, size=len(d), flags=0, full_size=len(d), data=d)
                                     for t, d in sections])
    return fuzz.make_capture(capture_bytes("builtin-vadd")[:F.TL_HEADER_SIZE],
                             [_record("API_ENTER", body)])


@pytest.mark.parametrize("nargs", [0, 2, 5])
def test_api_launch_record_with_few_args_is_a_clean_problem(nargs):
    data = _synthetic_api_capture(0, list(range(1, nargs + 1)))     # slot 0: cuLaunchKernel
    reader = CaptureReader(io.BytesIO(data))
    [rec] = list(reader.records())
    assert not reader.problems
    try:
        ApiCalls().enter(rec).to_json()
    except TraceLaunchError:
        pass


def test_api_launch_ex_short_config_is_a_clean_problem():
    from decoders.cuda import api as A
    data = _synthetic_api_capture(2, [0x1000, 2, 0, 0],                # slot 2: cuLaunchKernelEx
                                  [(A.SECTION_BY_NAME["LAUNCH_CONFIG"], b"\1\2\3\4")])
    [rec] = list(CaptureReader(io.BytesIO(data)).records())
    try:
        ApiCalls().enter(rec).to_json()
    except TraceLaunchError:
        pass


# ---- 4. decoding executes nothing from a capture -------------------------------------------

SCANNED = ["decoders", "tracer"]
DANGEROUS_MODULES = {"pickle", "cPickle", "dill", "cloudpickle", "jsonpickle", "shelve", "marshal",
                     "yaml", "ctypes", "subprocess", "importlib", "runpy", "code", "codeop"}
DANGEROUS_CALLS = {"eval", "exec", "compile", "__import__", "execfile"}
# (file, what): why it is not a path from capture bytes to execution. A new use fails the
# test until it is reviewed and listed here.
ALLOWED = {
    ("decoders/fields.py", "eval"):
        "builds (shift, mask) lambdas from the field tables' own integers and names (declared "
        "in the source), never from input bytes; checked at run time below",
    ("decoders/fields.py", "exec"):
        "defines per-word update functions from the same (index, shift, mask) plan and field "
        "names as eval above; checked at run time below",
    ("decoders/spill.py", "marshal"):
        "SpillList loads only bytes it marshalled itself into an anonymous TemporaryFile; "
        "marshal.loads builds data objects and never runs code",
    ("decoders/extsort.py", "marshal"):
        "ExternalSort loads only the runs it marshalled itself into an anonymous TemporaryFile "
        "(the timeline's events, made by the decode); marshal.loads builds data objects and "
        "never runs code",
    ("decoders/session/front.py", "marshal"):
        "the front of a split decode marshals its own events (dicts, lists, ints, bytes it "
        "decoded) to the decoding process; it loads nothing",
    ("decoders/session/split.py", "marshal"):
        "loads only what its own front process marshalled (front.py), through a pipe it made "
        "itself; marshal.loads builds data objects and never runs code",
    ("tracer/prerender.py", "marshal"):
        "its worker reads the batches this decode's SpillLists marshalled to their files, and "
        "the decode loads the list of batches its own forked worker marshalled, through a pipe "
        "it made itself; marshal.loads builds data objects and never runs code",
    ("tracer/parallel.py", "marshal"):
        "map_ranges loads only what its own forked workers marshalled (the timeline's views of "
        "the decoded lists), through a pipe it made itself; marshal.loads builds data objects "
        "and never runs code",
    ("decoders/session/shard.py", "marshal"):
        "a decode in blocks: loads only what its own block processes marshalled (their models' "
        "lists and counts), through a pipe or an anonymous TemporaryFile it made itself; "
        "marshal.loads builds data objects and never runs code",
    ("decoders/session/shard.py", "subprocess"):
        "starts the process that follows the capture (a decode in blocks): this interpreter, "
        "argv list, no shell; its arguments are numbers and the capture's path as one item",
    ("decoders/session/split.py", "subprocess"):
        "starts the front of a split decode: this interpreter, argv list, no shell; its "
        "arguments are descriptor numbers and the capture's path as one argv item",
    ("decoders/methods/__init__.py", "importlib"):
        "imports decoders.methods.<module> where <module> comes from the CLASSES registry "
        "(source), looked up by class number; a number not registered raises KeyError first",
    ("decoders/cubin/__init__.py", "subprocess"):
        "one c++filt with no argument but its path (argv list, no shell); symbol names go "
        "on its stdin, one a line, only those matching _Z[A-Za-z0-9_$.]+ (no newline, space "
        "or option); output is text",
    ("decoders/cubin/sass.py", "subprocess"):
        "nvdisasm on the cubin bytes written to a private temporary file; argv list, no shell",
    ("tracer/run.py", "subprocess"):
        "trace-launch runs the program the user named on the command line; not a decode path",
    ("tracer/cli_launch.py", "subprocess"):
        "trace-launch's exit step beside a live decode: this interpreter, fixed -c code, "
        "argv list, no shell; its arguments are the capture's absolute path and three "
        "numbers; it prints one JSON object of counts (json.loads, no code run)",
    ("tracer/builtin.py", "ctypes"):
        "the built-in launch calls libcuda; not a decode path",
    ("tracer/shapes.py", "ctypes"):
        "the launch-shape corpus lays out kernel arguments; not a decode path",
    ("tracer/cudaapi.py", "ctypes"):
        "launch() hands libcuda the address of the caller's kernelParams; not a decode path",
    ("tracer/__init__.py", "importlib"):
        "importlib.metadata for the version string",
    ("tracer/builtin.py", "importlib"):
        "importlib.resources reads kernels/vadd.cu for the built-in launch",
}


def _uses():
    """{(file, module or builtin)} for each import of a dangerous module and each call of a
    dangerous builtin, plus every subprocess call's node for the shell check."""
    uses, calls = set(), []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(), rel)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    mods = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    mods = [(node.module or "").split(".")[0]]
                elif isinstance(node, ast.Call):
                    fn = node.func
                    name = fn.id if isinstance(fn, ast.Name) else \
                        fn.attr if isinstance(fn, ast.Attribute) else None
                    if name in DANGEROUS_CALLS and isinstance(fn, ast.Name):
                        uses.add((rel, name))
                    if name in ("system", "popen", "spawnl", "spawnv", "execv", "execvp") and \
                            isinstance(fn, ast.Attribute) and getattr(fn.value, "id", "") == "os":
                        uses.add((rel, f"os.{name}"))
                    if isinstance(fn, ast.Attribute) and getattr(fn.value, "id", "") == "subprocess":
                        calls.append((rel, node))
                    if name in ("load", "loads") and isinstance(fn, ast.Attribute) and \
                            getattr(fn.value, "id", "") in ("yaml", "pickle", "marshal", "shelve"):
                        uses.add((rel, fn.value.id))
                    continue
                else:
                    continue
                uses.update((rel, m) for m in mods if m in DANGEROUS_MODULES)
    return uses, calls


def test_no_pickle_eval_or_exec_on_capture_data():
    uses, _ = _uses()
    unreviewed = sorted(uses - set(ALLOWED))
    assert not unreviewed, f"review and list in ALLOWED with a reason: {unreviewed}"
    assert ("decoders/spill.py", "marshal") in uses     # the scan sees what it should


def test_subprocess_calls_take_an_argv_list_and_no_shell():
    _, calls = _uses()
    assert calls
    for rel, node in calls:
        kw = {k.arg: k.value for k in node.keywords}
        assert not (isinstance(kw.get("shell"), ast.Constant) and kw["shell"].value), rel
        assert "shell" not in kw, (rel, node.lineno)
        if node.args:
            assert isinstance(node.args[0], (ast.List, ast.Name)), (rel, node.lineno)


def test_nvdisasm_and_cxxfilt_get_cubin_bytes_by_file_and_names_by_argv(monkeypatch):
    """The two tools the cubin decoder may run: cubin bytes go through a temporary file, a
    symbol name is one argv element that cannot be an option."""
    from decoders import cubin as C
    from decoders.cubin import sass as S
    seen = []

    def fake_run(argv, **kw):
        assert isinstance(argv, list) and not kw.get("shell")
        if "-hex" in argv:
            seen.append(("nvdisasm", argv, Path(argv[-1]).read_bytes()))
        else:
            seen.append(("c++filt", argv, None))
        return subprocess.CompletedProcess(argv, 0, "", "")
    monkeypatch.setattr(S.subprocess, "run", fake_run)
    monkeypatch.setattr(C.subprocess, "run", fake_run)
    monkeypatch.setattr(C.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    blob = (FIXTURES / "shapes.sm_90.cubin").read_bytes()
    S.nvdisasm_mnemonics(blob, tool="/usr/bin/nvdisasm")
    assert seen[0][0] == "nvdisasm" and seen[0][2] == blob and seen[0][1][:3] == [
        "/usr/bin/nvdisasm", "-c", "-hex"]
    # c++filt: one long-lived process with no argument but its path; names go on its stdin,
    # one a line, and only a name c++filt reads as one word (no newline, space or option)
    started = []

    class FakePopen:
        def __init__(self, argv, **kw):
            assert isinstance(argv, list) and not kw.get("shell")
            started.append(argv)
            self.stdin, self.stdout = io.StringIO(), io.StringIO("foo(int)\n")
    monkeypatch.setattr(C.subprocess, "Popen", FakePopen)
    monkeypatch.setattr(C.select, "select", lambda r, w, x, t: (r, [], []))
    d = C._Demangler()
    assert d("--help; rm -rf /") == "--help; rm -rf /"    # not _Z: the tool never runs
    assert d("_Z3foo\n_Z3bari") == "_Z3foo\n_Z3bari" and d("_Z1f -v") == "_Z1f -v"
    assert not started
    assert d("_Z3fooi") == "foo(int)"
    assert started == [["/usr/bin/c++filt"]] and d.proc.stdin.getvalue() == "_Z3fooi\n"


def test_decoding_a_mutated_capture_runs_no_code_from_it(monkeypatch, tmp_path):
    """At run time: decode captures (real and mutated, with API images) with every way of
    running code trapped; the field tables' eval only ever sees their own arithmetic."""
    import builtins
    import marshal
    import pickle
    import random
    rng = random.Random(7)
    base = fuzz.Base("capture", "graph-replay", _window("graph-replay", head=30, tail=30))
    # "bomb" mutants are compressed and take seconds each: tests/test_untrusted.py runs them
    inputs = [base.data] + [fuzz.mutate(rng, base, k, sweep=i)[0]
                            for i, k in enumerate(fuzz.KINDS) if k != "bomb"]
    paths = []
    for i, data in enumerate(inputs):
        paths.append(tmp_path / f"synthetic-exec-{i}.tlc")
        paths[-1].write_bytes(data)
        _decode_all(paths[-1], data)     # warm: lazy imports compile their structs once
    safe = re.compile(r"^lambda w: [\(\{][\w\s\[\]\(\)<>&|,:'\"]*[\)\}]$")
    real_eval = builtins.eval

    def guarded_eval(src, *a, **kw):
        assert isinstance(src, str) and safe.match(src), src[:200]
        return real_eval(src, *a, **kw)
    safe_def = re.compile(r"^def u\(w, o\):(\n    o\['\w+'\] = \(\(?w\[\d+\][^\n]*)+$")
    real_exec = builtins.exec

    def guarded_exec(src, *a, **kw):
        assert isinstance(src, str) and safe_def.match(src) and "import" not in src, src[:200]
        return real_exec(src, *a, **kw)

    def trap(name):
        def f(*a, **kw):
            raise AssertionError(f"{name} called while decoding a capture")
        return f
    for mod, attr in ((pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"),
                      (builtins, "compile"), (os, "system"),
                      (os, "popen"), (subprocess, "Popen"), (subprocess, "run")):
        monkeypatch.setattr(mod, attr, trap(f"{mod.__name__}.{attr}"))
    monkeypatch.setattr(builtins, "eval", guarded_eval)
    monkeypatch.setattr(builtins, "exec", guarded_exec)
    real_marshal_loads = marshal.loads

    def guarded_marshal(data, *a, **kw):
        obj = real_marshal_loads(data, *a, **kw)
        assert not isinstance(obj, type(guarded_marshal.__code__)), "code object"
        return obj
    monkeypatch.setattr(marshal, "loads", guarded_marshal)
    for path, data in zip(paths, inputs):
        _decode_all(path, data)


def _decode_all(path, data):
    try:
        model = decode_capture(path, keep=0)       # spill everything: marshal is used
    except TraceLaunchError:
        return
    render_text(model, io.StringIO(), show_ioctls=True, show_objects=True)
    json.dumps(to_json(model), default=str)
    for c in _api(data)[1]:
        c.to_json()
