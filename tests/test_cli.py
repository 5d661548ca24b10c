"""The CLI (issues 2 and 7): trace-decode on the recordings and on bad input, the pushbuffer
subcommand on a segment cut from a recording, trace-launch's errors. In-process through
click's CliRunner; through a subprocess where the exit status and stderr must be the real
ones (STYLE 15). Bad inputs are synthetic-*."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import ROOT, capture_bytes, capture_file, manifest, marker_program, record_spans
from decoders.capture import format as F
from tracer.cli import trace_decode, trace_launch

OFFSET = re.compile(r"offset 0x[0-9a-f]+")
KEYS = {"meta", "ioctls", "mmaps", "submissions", "launches", "stats", "marks", "notes", "problems",
        "api_calls", "elided", "exit", "failed_calls", "syncs", "copies"}


def _runner():
    try:
        return CliRunner(mix_stderr=False)      # click < 8.2
    except TypeError:
        return CliRunner()


def _cli(command, args, **kw):
    return _runner().invoke(command, [str(a) for a in args], **kw)


def _script(name, args, env=None, cwd=None):
    """Run a console script as a user would: the installed one, else its entry point
    (pyproject: trace-decode = tracer.cli:trace_decode) through `python3 -c`."""
    exe = shutil.which(name)
    fn = name.replace("-", "_")
    cmd = [exe] if exe else [sys.executable, "-c",
                             f"from tracer.cli import {fn}; {fn}(prog_name={name!r})"]
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1", **(env or {}))
    return subprocess.run(cmd + [str(a) for a in args], capture_output=True, text=True,
                          env=full_env, cwd=cwd or ROOT, timeout=120)


def _assert_one_line_errors(stderr, prog="trace-decode"):
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert lines
    for line in lines:
        assert line.startswith(f"{prog}: "), line
        assert OFFSET.search(line), line
    return lines


# ---- trace-decode on the recordings ----------------------------------------------------

@pytest.mark.parametrize("name", ["builtin-vadd", "launch-shapes"])
def test_report_on_recording(name):
    m = manifest(name)
    res = _cli(trace_decode, [capture_file(name)])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    assert m["gpu"] in res.stdout and m["driver"] in res.stdout
    assert f"{m['summary']['records']} records" in res.stdout


def test_report_subprocess_exit_0(capture_files):
    m = manifest("runtime-vadd")
    res = _script("trace-decode", [capture_files["runtime-vadd"]])
    assert res.returncode == 0, res.stderr
    assert m["gpu"] in res.stdout and m["driver"] in res.stdout
    assert res.stderr == ""


def test_json_schema(capture_files):
    name = "builtin-vadd"
    m = manifest(name)
    res = _cli(trace_decode, [capture_files[name], "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)            # one object, nothing else on stdout
    assert set(doc) == KEYS
    meta, stats = doc["meta"], doc["stats"]
    assert isinstance(meta, dict) and isinstance(stats, dict)
    for key in KEYS - {"meta", "stats", "problems", "elided", "exit"}:
        assert isinstance(doc[key], list) and all(isinstance(e, dict) for e in doc[key]), key
    assert doc["problems"] == [] and doc["failed_calls"] == []
    assert doc["exit"]["status"] == m["exit_status"]
    assert "submissions[].segments[].hex" in doc["elided"]["paths"]
    assert doc["elided"]["complete_with"] == "--all-fields"
    assert meta["gpu"] == m["gpu"] and meta["driver"] == m["driver"]
    assert meta["header"]["version"] == F.TL_VERSION
    assert [p["pid"] for p in meta["processes"]] == m["summary"]["pids"]
    s = m["summary"]
    assert stats["records"] == s["records"] and stats["problems"] == 0
    assert stats["cut_short"] is False
    assert len(doc["ioctls"]) == stats["ioctls"] == s["by_type"]["IOCTL"]
    assert len(doc["submissions"]) == stats["submissions"] == s["by_type"]["SUBMISSION"]
    assert len(doc["marks"]) == s["by_type"].get("MARK", 0)
    assert len(doc["launches"]) == stats["launches"]
    assert sum(stats["ioctls_by_device"].values()) == stats["ioctls"]
    io_ = doc["ioctls"][0]
    for key, typ in (("index", int), ("pid", int), ("fd", int), ("path", str), ("request", int),
                     ("escape", str), ("ret", int), ("errno", int), ("summary", str),
                     ("complete", bool)):
        assert isinstance(io_[key], typ), key
    sub = doc["submissions"][0]
    assert isinstance(sub["entries"], list) and isinstance(sub["segments"], list)
    seg = sub["segments"][0]
    assert "hex" not in seg and isinstance(seg["va"], int)
    full = json.loads(_cli(trace_decode, [capture_files[name], "--json", "--all-fields"]).stdout)
    assert full["elided"]["paths"] == []
    assert bytes.fromhex(full["submissions"][0]["segments"][0]["hex"])
    assert not any(k.startswith("_") for e in doc["ioctls"] + doc["submissions"] for k in e)
    for mark in doc["marks"]:
        assert mark["kind"] in ("BEGIN", "END", "POINT") and isinstance(mark["label"], str)
    for launch in doc["launches"]:
        assert {"grid", "block", "qmd_version"} <= set(launch)


# ---- trace-decode on bad input ---------------------------------------------------------

def _truncated(write_synthetic):
    data = capture_bytes("builtin-vadd")
    spans = record_spans("builtin-vadd")
    return write_synthetic("truncated", data[:spans[400][0] + 50]), spans


def test_truncated_capture_report_and_exit_2(write_synthetic):
    path, spans = _truncated(write_synthetic)
    res = _script("trace-decode", [path])
    assert res.returncode == 2
    assert "trace-launch report" in res.stdout and "400 records" in res.stdout
    lines = _assert_one_line_errors(res.stderr)
    assert any(f"{spans[400][0]:#x}" in line and "truncated" in line for line in lines)
    assert any("no END record" in line for line in lines)
    res = _cli(trace_decode, [path, "--json"])
    assert res.exit_code == 2
    doc = json.loads(res.stdout)
    assert doc["stats"]["cut_short"] is True and doc["stats"]["records"] == 400
    assert doc["problems"] and all(OFFSET.search(p) for p in doc["problems"])


@pytest.mark.parametrize("kind", ["foreign", "empty", "header-cut", "hole", "flipped-length"])
def test_corrupt_capture_exit_2_no_traceback(kind, write_synthetic):
    data = bytearray(capture_bytes("builtin-vadd"))
    spans = record_spans("builtin-vadd")
    if kind == "foreign":
        data = bytearray(b"\x7fELF" + bytes(200))
    elif kind == "empty":
        data = bytearray()
    elif kind == "header-cut":
        data = data[:100]
    elif kind == "hole":
        data[spans[50][0]:spans[52][0]] = bytes(spans[52][0] - spans[50][0])
    else:
        data[spans[50][0] + 6] ^= 0x40
    path = write_synthetic(kind, bytes(data))
    res = _script("trace-decode", [path])
    assert res.returncode == 2
    _assert_one_line_errors(res.stderr)
    assert "Traceback" not in res.stdout
    res = _cli(trace_decode, [path])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output


def test_missing_file_one_line(tmp_path):
    missing = tmp_path / "synthetic-missing.tlc"
    res = _script("trace-decode", [missing])
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and str(missing) in res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


# ---- trace-decode pushbuffer -----------------------------------------------------------

def _largest_segment():
    data = capture_bytes("builtin-vadd")
    best = b""
    for off, length, rtype in record_spans("builtin-vadd"):
        if rtype == F.TL_REC_BY_NAME["SUBMISSION"]:
            for seg in F.TL_SUBMISSION.parse(data[off + 40:off + length]).segments:
                if seg.flags & F.TL_SF_COPIED and seg.size > len(best):
                    best = bytes(seg.data)[:seg.size]
    return best


def test_pushbuffer_segment_decodes(tmp_path):
    seg = _largest_segment()
    dump = tmp_path / "segment.bin"           # bytes cut from builtin-vadd's SUBMISSION
    dump.write_bytes(seg)
    res = _cli(trace_decode, ["pushbuffer", dump, "--gpu", "hopper"])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    assert "class 0xcbc0" in res.stdout                  # HOPPER_COMPUTE_A
    res = _cli(trace_decode, ["pushbuffer", dump, "--gpu", "hopper", "--json"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["packets"] and doc["problems"] == []


def test_pushbuffer_truncated_dump_exit_2(tmp_path):
    seg = _largest_segment()
    dump = tmp_path / "synthetic-segment-cut.bin"
    dump.write_bytes(seg[:len(seg) // 2 + 2])
    res = _script("trace-decode", ["pushbuffer", dump, "--gpu", "hopper"])
    assert res.returncode == 2
    lines = _assert_one_line_errors(res.stderr)
    assert any("stopped" in line for line in lines)
    assert res.stdout.strip()                              # what came before is printed


# ---- trace-launch ----------------------------------------------------------------------

@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"),
                    reason="this machine has an NVIDIA driver: the no-GPU message cannot show")
def test_trace_launch_without_gpu(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRACE_LAUNCH_DEVDIR"}
    res = subprocess.run([sys.executable, "-c", "from tracer.cli import trace_launch; "
                          "trace_launch(prog_name='trace-launch')", "true"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60,
                         env=dict(env, PYTHONPATH=str(ROOT)))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "NVIDIA GPU" in lines[0] and "trace-decode" in lines[0]
    assert "Traceback" not in res.stderr
    assert list(tmp_path.iterdir()) == []                  # no capture left behind


def test_trace_launch_program_errors(tmp_path):
    devdir = tmp_path / "dev"
    devdir.mkdir()
    env = {"TRACE_LAUNCH_DEVDIR": str(devdir)}       # test-only: skip the driver check
    notexec = tmp_path / "synthetic-notexec"
    notexec.write_text("#!/bin/sh\necho hi\n")
    notexec.chmod(0o644)
    cases = [([tmp_path / "synthetic-no-such-program"], 127),
             (["synthetic-no-such-program-on-path"], 127),
             ([notexec], 126), ([tmp_path], 126)]
    for argv, status in cases:
        res = _script("trace-launch", ["-o", tmp_path / "out.tlc", *argv], env=env, cwd=tmp_path)
        assert res.returncode == status, (argv, res.stderr)
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_trace_launch_unwritable_output(tmp_path):
    script, marker, devdir = marker_program(tmp_path)
    # /proc refuses new files even to root (permission bits would not stop root)
    for out in (tmp_path / "no-such-dir" / "out.tlc", "/proc/synthetic-out.tlc", tmp_path):
        res = _script("trace-launch", ["-o", out, script],
                      env={"TRACE_LAUNCH_DEVDIR": str(devdir)}, cwd=tmp_path)
        assert res.returncode == 2, res.stderr
        assert not marker.exists()                          # the program never ran
        assert "Traceback" not in res.stderr
        if out != tmp_path:                                 # a directory is a click usage error
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and str(out) in lines[0]


def test_usage_error_exit_2():
    res = _cli(trace_decode, ["pushbuffer"])
    assert res.exit_code == 2
    res = _cli(trace_decode, ["pushbuffer", "x", "--gpu", "fermi"])
    assert res.exit_code == 2


def _doc_table_keys(section):
    """Backticked names in the first column of a table under `## section` in docs/json.md."""
    text = (ROOT / "docs" / "json.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    keys = set()
    for line in body.splitlines():
        if line.startswith("| `"):
            keys.update(re.findall(r"`(\w+)`", line.split("|")[1]))
    return keys


def test_json_doc_matches_output(capture_files):
    res = _cli(trace_decode, [capture_files["launch-shapes"], "--json"])
    doc = json.loads(res.stdout)
    assert _doc_table_keys("Top level") == set(doc) == KEYS
    assert _doc_table_keys("`stats`") == set(doc["stats"])
    assert _doc_table_keys("`ioctls[]`") == set(doc["ioctls"][0])
    assert _doc_table_keys("`submissions[]`") == set(doc["submissions"][0])


def test_traceback_flag_shows_the_error(write_synthetic):
    path = write_synthetic("foreign-tb", b"\x7fELF" + bytes(100))
    res = _cli(trace_decode, [path, "--traceback"])
    assert type(res.exception).__name__ == "CaptureError"     # raised, so the stack shows


def test_broken_pipe_exits_quietly(capture_files):
    """`trace-decode CAPTURE | head -1`: a reader that goes away is not an error."""
    exe = shutil.which("trace-decode")
    cmd = [exe] if exe else [sys.executable, "-c",
                             "from tracer.cli import trace_decode; trace_decode(prog_name='trace-decode')"]
    proc = subprocess.Popen(cmd + [str(capture_files["builtin-vadd"]), "--json"],  # MBs
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


# ---- --help and option parsing (issue 27) ------------------------------------------------

def _env_names_in_sources():
    """Every TRACE_LAUNCH_* the shim reads (getenv in shim/*.c) or the tracer and the
    decoders do (os.environ in tracer/*.py, decoders/**/*.py)."""
    names = set()
    for path in (ROOT / "shim").glob("*.c"):
        names |= set(re.findall(r'getenv\("(TRACE_LAUNCH_\w+)"\)', path.read_text()))
    for path in [*(ROOT / "tracer").glob("*.py"), *(ROOT / "decoders").rglob("*.py")]:
        names |= set(re.findall(r'environ(?:\.get)?[\(\[]"(TRACE_LAUNCH_\w+)"', path.read_text()))
    return names


def test_help_lists_report_options_and_environment():
    """`trace-decode --help` lists the options `trace-decode CAPTURE` takes (it showed
    none: the report is a subcommand the user never types), and both --help texts list
    every TRACE_LAUNCH_* setting the sources read."""
    from tracer.cli_decode import report_cmd
    decode_help = _cli(trace_decode, ["--help"]).output
    for param in report_cmd.params:
        for flag in getattr(param, "opts", []) if param.param_type_name == "option" else []:
            assert re.search(rf"^\s+{re.escape(flag)}\b", decode_help, re.M) or \
                f"/ {flag}" in decode_help, flag
    launch_help = _cli(trace_launch, ["--help"]).output
    names = _env_names_in_sources()
    assert {"TRACE_LAUNCH_CAPTURE", "TRACE_LAUNCH_JOBS", "TRACE_LAUNCH_PATCH"} <= names
    for text in (decode_help, launch_help, _cli(trace_decode, ["report", "--help"]).output):
        listed = set(re.findall(r"^\s+(TRACE_LAUNCH_\w+)", text, re.M))
        assert listed == names, (names - listed, listed - names)


def test_trace_launch_rejects_unknown_options_before_the_program(tmp_path):
    """`trace-launch --bogus` is a usage error (it was run as the program '--bogus');
    after PROGRAM, or after `--`, every word is the program's (strace's habit)."""
    script, marker, devdir = marker_program(tmp_path)
    args_file = tmp_path / "args"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {args_file}\ntouch {marker}\n')
    env = {"TRACE_LAUNCH_DEVDIR": str(devdir)}
    res = _script("trace-launch", ["--bogus", script], env=env, cwd=tmp_path)
    assert res.returncode == 2 and "No such option" in res.stderr and "--bogus" in res.stderr
    assert not marker.exists() and not list(tmp_path.glob("*.tlc"))
    from tracer import shim_path
    if not shim_path().exists():
        pytest.skip("no shim installed (pip install . builds it): the program runs under it")
    for argv in (["--", script, "--weird", "-o", "x"], [script, "--weird", "-o", "x"]):
        res = _script("trace-launch", ["--no-report", "-o", tmp_path / "out.tlc", *argv],
                      env=env, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert args_file.read_text().split() == ["--weird", "-o", "x"]
        args_file.unlink()
