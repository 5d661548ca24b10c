"""Run a program under the shim: create the capture, preload, wait, close the capture."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from decoders.capture.writer import append_end, create_capture, update_meta
from tracer import shim_path


class TracerError(Exception):
    """A one-line user-facing error with the exit status to use."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


NO_GPU = ("capture needs an NVIDIA GPU and driver ({why}); trace-decode works offline "
          "on saved captures")


def check_driver():
    if os.environ.get("TRACE_LAUNCH_DEVDIR"):
        return   # test-only fake devices
    if not os.path.exists("/dev/nvidiactl"):
        raise TracerError(NO_GPU.format(why="no /dev/nvidiactl"))


def gpu_meta():
    """Driver version, GPU name and compute capability, read at capture time."""
    meta = {}
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        meta["driver_version_line"] = text.splitlines()[0].strip()
        for tok in meta["driver_version_line"].split():
            if tok.count(".") == 2 and tok.replace(".", "").isdigit():
                meta["driver"] = tok
                break
    except OSError:
        pass
    try:
        from tracer.cudaapi import device_info
        meta.update(device_info())
    except Exception as exc:  # no libcuda here: the capture still records, without these
        meta["gpu_error"] = f"{type(exc).__name__}: {exc}"
    return meta


def default_output(program_name, directory="."):
    base = Path(program_name).name or "capture"
    for n in range(1, 100000):
        p = Path(directory) / f"trace-launch-{base}-{n}.tlc"
        try:
            fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return p
    raise TracerError("no free capture file name in the current directory")


def resolve_program(argv):
    prog = argv[0]
    path = prog if "/" in prog else shutil.which(prog)
    if path is None or not os.path.exists(path):
        raise TracerError(f"{prog}: command not found", status=127)
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise TracerError(f"{prog}: permission denied (not executable)", status=126)
    return path


def run_traced(argv, output, mode="full", extra_meta=None, env=None):
    """Run argv under the shim writing `output`; returns the shell-style exit status."""
    shim = shim_path()
    if not shim.exists():
        raise TracerError(f"the shim library is missing at {shim}: reinstall with pip install .")
    meta = {"argv": list(argv), "mode": mode, "tool": "trace-launch",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cwd": os.getcwd()}
    meta.update(gpu_meta())
    meta.update(extra_meta or {})
    try:
        create_capture(output, meta)
    except OSError as exc:
        raise TracerError(f"cannot write capture {output}: {exc.strerror}") from exc
    child_env = dict(os.environ if env is None else env)
    pre = child_env.get("LD_PRELOAD", "")
    child_env["LD_PRELOAD"] = f"{shim}:{pre}" if pre else str(shim)
    child_env["TRACE_LAUNCH_CAPTURE"] = str(Path(output).resolve())
    child_env["TRACE_LAUNCH_MODE"] = mode
    try:
        proc = subprocess.Popen(argv, env=child_env)
    except FileNotFoundError as exc:
        raise TracerError(f"{argv[0]}: command not found", status=127) from exc
    except PermissionError as exc:
        raise TracerError(f"{argv[0]}: permission denied", status=126) from exc
    update_meta(output, pid=proc.pid)
    # The traced program owns the terminal's signals; the tracer waits and reports.
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        rc = proc.wait()
    finally:
        signal.signal(signal.SIGINT, old)
    append_end(output, rc)
    return 128 - rc if rc < 0 else rc


def builtin_argv(grid, block, shared_mem, truth=None, repeat=1):
    argv = [sys.executable, "-m", "tracer.builtin", "--grid", str(grid), "--block", str(block),
            "--shared-mem", str(shared_mem), "--repeat", str(repeat)]
    if truth:
        argv += ["--truth", str(truth)]
    return argv
