"""The capture file trace-launch writes is never a trap (issue 20): generated names are
created with O_CREAT|O_EXCL|O_NOFOLLOW, an explicit -o that is a symbolic link is refused
with one line, the file is opened once and never reopened by name (the shim opens
/proc/TRACER/fd/N), and its mode is 0600."""
import os
import stat
import subprocess
import sys

import pytest

from conftest import ROOT, marker_program
from decoders.capture.reader import read_capture
from decoders.capture.writer import append_end, create_capture, update_meta
from tracer.run import TracerError, capture_env_path, default_output, open_output
from tests.test_shim import shim  # noqa: F401  (the session-built shim fixture)

VICTIM = b"precious data, not a capture\n"


def _trace_launch(args, cwd, devdir, shim):
    # the shim built from this tree (a clean clone has none in tracer/, and the installed
    # copy is not found from the source tree's metadata)
    env = dict(os.environ, TRACE_LAUNCH_DEVDIR=str(devdir), PYTHONPATH=str(ROOT),
               TRACE_LAUNCH_SHIM=str(shim))
    return subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-launch", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def prog(tmp_path, shim):  # noqa: F811
    return (*marker_program(tmp_path), shim)


@pytest.mark.parametrize("dangling", [False, True])
def test_explicit_output_symlink_refused(tmp_path, prog, dangling):
    script, marker, devdir, shim_so = prog
    victim = tmp_path / "victim"
    if not dangling:
        victim.write_bytes(VICTIM)
        victim.chmod(0o644)
    link = tmp_path / "link.tlc"
    link.symlink_to(victim)
    res = _trace_launch(["-o", link, script], tmp_path, devdir, shim_so)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "symbolic link" in lines[0] and str(link) in lines[0], res.stderr
    assert not marker.exists()                          # the program never ran
    if dangling:
        assert not victim.exists()                      # nothing created through the link
    else:
        assert victim.read_bytes() == VICTIM            # not truncated
        assert stat.S_IMODE(victim.stat().st_mode) == 0o644    # not chmod'ed


def test_explicit_output_regular_file(tmp_path, prog):
    script, marker, devdir, shim_so = prog
    out = tmp_path / "out.tlc"
    out.write_bytes(b"x" * 100000)
    out.chmod(0o644)
    res = _trace_launch(["-o", out, "--no-report", script], tmp_path, devdir, shim_so)
    assert res.returncode == 0, res.stderr
    assert marker.exists()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    reader, recs = read_capture(out)
    assert recs[-1].type == "END" and not reader.problems
    # the shim opened the file through /proc/TRACER/fd/N and recorded the program
    assert "PROCESS_START" in {r.type for r in recs}


def test_default_output_skips_planted_symlink(tmp_path, prog):
    """A symlink planted under the first generated name is not followed: the next name is
    used, the link's target untouched."""
    script, marker, devdir, shim_so = prog
    victim = tmp_path / "victim"
    victim.write_bytes(VICTIM)
    (tmp_path / "trace-launch-prog.sh-1.tlc").symlink_to(victim)
    res = _trace_launch(["--no-report", script], tmp_path, devdir, shim_so)
    assert res.returncode == 0, res.stderr
    assert victim.read_bytes() == VICTIM
    made = tmp_path / "trace-launch-prog.sh-2.tlc"
    assert made.is_file() and not made.is_symlink()
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert read_capture(made)[1][-1].type == "END"
    assert str(made.name) in res.stderr


def test_never_reopened_by_name(tmp_path):
    """The name swapped for a symlink after the open: every write still lands in the file
    that was opened, and the shim is pointed at the descriptor, not the name."""
    out = default_output("prog", tmp_path)
    try:
        assert out.fd is not None
        assert stat.S_IMODE(os.fstat(out.fd).st_mode) == 0o600
        assert capture_env_path(out) == f"/proc/{os.getpid()}/fd/{out.fd}"
        moved = tmp_path / "moved.tlc"
        os.rename(out, moved)
        victim = tmp_path / "victim"
        victim.write_bytes(VICTIM)
        os.symlink(victim, out)
        create_capture(out, {"argv": ["prog"], "synthetic": True})
        update_meta(out, pid=123)
        append_end(out, 0)
        assert victim.read_bytes() == VICTIM
        reader, recs = read_capture(moved)
        assert reader.meta["pid"] == 123 and recs[-1].type == "END"
        # and the shim's path reopens the same file
        with open(capture_env_path(out), "rb") as f:
            assert f.read(8) == b"TRACELNC"
    finally:
        os.close(out.fd)


def test_open_output_refuses_non_regular(tmp_path):
    with pytest.raises(TracerError, match="not a regular file"):
        open_output("/dev/null")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TracerError, match="not a regular file"):
        open_output(fifo)


def test_meta_facts_added_after_start_fit_a_long_command_line(tmp_path):
    """The GPU and driver facts go into the header once the program has started
    (tracer/run.py): a command line too long for the header is shortened for them, as
    create_capture shortens it, rather than the facts being lost."""
    out = tmp_path / "long.tlc"
    argv = ["prog"] + ["x" * 200] * 40         # ~8 KB of command line: the header has 4 KB
    create_capture(out, {"argv": argv, "synthetic": True})
    assert update_meta(out, pid=7, gpu="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    append_end(out, 0)
    reader, _ = read_capture(out)
    assert reader.meta["pid"] == 7 and reader.meta["compute_capability"] == "9.0"
    assert reader.meta["truncated_meta"] is True and reader.meta["argv"] == argv[:8]


def test_run_traced_writes_gpu_facts_after_start(tmp_path, monkeypatch, shim):  # noqa: F811
    """run_traced reads the GPU's facts after the program has started (its cuInit runs
    beside the program's start), with SIGINT left to the program, and they reach the header;
    the caller's meta still wins."""
    import signal

    import tracer.run as R
    order = []
    popen = subprocess.Popen

    def started(*args, **kwargs):
        order.append("program")
        return popen(*args, **kwargs)

    def facts():
        # (Ctrl-C is the program's by now: the tracer lives on to write END)
        order.append("facts" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "Ctrl-C")
        return {"gpu": "stub GPU", "compute_capability": "9.0", "mode": "from gpu_meta"}
    script, marker, devdir = marker_program(tmp_path)
    monkeypatch.setattr(R.subprocess, "Popen", started)
    monkeypatch.setattr(R, "gpu_meta", facts)
    monkeypatch.setattr(R, "shim_path", lambda: shim)
    monkeypatch.setenv("TRACE_LAUNCH_DEVDIR", str(devdir))
    out = tmp_path / "facts.tlc"
    rc = R.run_traced([str(script)], out, extra_meta={"gpu": "the caller's"})
    assert rc == 0 and order == ["program", "facts"] and marker.exists()
    reader, _ = read_capture(out)
    assert reader.meta["compute_capability"] == "9.0" and reader.meta["gpu"] == "the caller's"
    assert reader.meta["mode"] == "full" and reader.meta["pid"] > 0


def test_update_meta_after_a_cut_header_is_refused(tmp_path):
    """Eight words of command line too long for the header even shortened: create_capture
    cuts the JSON (the header keeps its size), and a later update_meta says it could not,
    rather than raising in the tracer after the program has started."""
    out = tmp_path / "cut.tlc"
    create_capture(out, {"argv": ["y" * 1000] * 8, "synthetic": True})
    assert update_meta(out, pid=7) is False
