"""Tests that need an NVIDIA GPU (marked `gpu`; skipped where there is none, as on CI).
Run on the H100 through the device tool: `python3 -m pytest -q -m gpu tests/test_gpu.py`.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from decoders.capture import format as F
from decoders.session import decode_capture

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not os.path.exists("/dev/nvidiactl"), reason="needs an NVIDIA GPU and driver (/dev/nvidiactl)")]


def _trace(tmp_path, argv, name="c.tlc"):
    cap = tmp_path / name
    proc = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-launch", "-o", str(cap),
                           "--no-report", *argv], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    return proc, cap


def test_builtin_launch_traced(tmp_path):
    proc, cap = _trace(tmp_path, [])
    assert proc.returncode == 0, proc.stderr
    assert "c == 2.0" in proc.stdout
    model = decode_capture(cap)
    assert not model.problems and model.end["exit_status"] == 0
    assert len(model.marks) == 2 and model.submissions
    assert sum(s["lost"] for s in model.submissions) == 0


@pytest.mark.parametrize("mode", ["threads8", "forkexec", "closefds", "faulthandler"])
def test_hard_programs_traced_unchanged(tmp_path, mode):
    argv = [sys.executable, str(ROOT / "scripts/corpus/abuse.py"), mode]
    native = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    proc, cap = _trace(tmp_path, argv)
    assert native.returncode == 0, native.stderr
    assert (proc.returncode, proc.stdout) == (native.returncode, native.stdout), proc.stderr
    model = decode_capture(cap)
    assert not [p for p in model.problems], model.problems
    assert model.submissions and sum(s["lost"] for s in model.submissions) == 0
    if mode == "forkexec":
        assert len(model.processes) >= 2      # parent and the exec'd child, one capture
        assert len({s["pid"] for s in model.submissions}) == 2
    if mode == "threads8":
        assert len({s["tid"] for s in model.submissions}) >= 2
