"""Run a program under the shim: create the capture, preload, wait, close the capture."""
import errno
import os
import shutil
import signal
import stat
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


class OutputPath(str):
    """The capture's path, with `fd`: the file as the tracer opened it, once. Everything the
    tracer writes goes through `fd` (decoders/capture/writer.py takes either), and the
    traced processes open `/proc/TRACER/fd/N` (capture_env_path), so the name is never
    looked up again: swapping it for a symlink after the open changes nothing (issue 20)."""
    fd = None

    def __new__(cls, path, fd):
        self = super().__new__(cls, str(path))
        self.fd = fd
        return self


_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_output(program_name, directory="."):
    """A new trace-launch-PROGRAM-N.tlc, created (O_EXCL, O_NOFOLLOW, mode 0600) and kept
    open: an OutputPath."""
    base = Path(program_name).name or "capture"
    for n in range(1, 100000):
        p = Path(directory) / f"trace-launch-{base}-{n}.tlc"
        try:
            fd = os.open(p, _NEW, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise TracerError(f"cannot write capture {p}: {exc.strerror}") from exc
        return OutputPath(p, fd)
    raise TracerError("no free capture file name in the current directory")


def open_output(path):
    """Open an explicit -o PATH once and keep it open: an OutputPath. A symbolic link is
    refused (O_NOFOLLOW, so there is no window between the check and the open), as is
    anything but a regular file; an existing file is truncated through the descriptor and
    set to mode 0600."""
    path = str(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP or os.path.islink(path):
            raise TracerError(f"{path} is a symbolic link: refusing to write a capture through "
                              f"it (name the file itself, or remove the link)") from exc
        raise TracerError(f"cannot write capture {path}: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TracerError(f"cannot write capture {path}: not a regular file")
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        os.fchmod(fd, 0o600)
    except OSError as exc:
        os.close(fd)
        raise TracerError(f"cannot write capture {path}: {exc.strerror}") from exc
    except TracerError:
        os.close(fd)
        raise
    return OutputPath(path, fd)


def capture_env_path(output):
    """What TRACE_LAUNCH_CAPTURE names for the shim: the tracer's own descriptor of the file
    when it has one (/proc/PID/fd/N reopens that file, whatever the name now points to),
    else the resolved path."""
    fd = getattr(output, "fd", None)
    if fd is not None:
        return f"/proc/{os.getpid()}/fd/{fd}"
    return str(Path(output).resolve())


def resolve_program(argv):
    prog = argv[0]
    path = prog if "/" in prog else shutil.which(prog)
    if path is None or not os.path.exists(path):
        raise TracerError(f"{prog}: command not found", status=127)
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise TracerError(f"{prog}: permission denied (not executable)", status=126)
    return path


# Capture windows (shim/window.c): the kinds trace-launch --capture-range names, as the
# shim's TRACE_LAUNCH_WINDOW spells them.
WINDOW_KINDS = ("cudaProfilerApi", "nvtx", "launches")


def window_env(window, shim):
    """The environment that asks the shim for a capture window: `window` is
    {"kind", "name", "skip", "count"} (docs/capture-format.md "Capture windows"). For an
    NVTX window the shim is the program's NVTX injection library too."""
    env = {"TRACE_LAUNCH_WINDOW": window["kind"],
           "TRACE_LAUNCH_WINDOW_SKIP": str(window.get("skip", 0)),
           "TRACE_LAUNCH_WINDOW_COUNT": str(window.get("count", 1))}
    if window["kind"] == "nvtx":
        env["TRACE_LAUNCH_WINDOW_NAME"] = window["name"]
        env["NVTX_INJECTION64_PATH"] = str(Path(shim).resolve())
    return env


def run_traced(argv, output, mode="full", extra_meta=None, env=None, live=None, window=None,
               finish_live=True):
    """Run argv under the shim writing `output`; returns the shell-style exit status.
    `live`: a callable given `output` once the program runs, returning an object whose
    finish() is called once the END record is written (tracer/live.py LiveDecode); with
    finish_live=False only its release(): the caller finishes it (trace-launch, beside
    the exit step).
    `window`: a capture window (window_env), also written to the header's meta as
    `capture_range`."""
    shim = shim_path()
    if not shim.exists():
        raise TracerError(f"the shim library is missing at {shim}: reinstall with pip install .")
    meta = {"argv": list(argv), "mode": mode, "tool": "trace-launch",
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cwd": os.getcwd()}
    if window is not None:
        meta["capture_range"] = dict(window)
    meta.update(extra_meta or {})
    try:
        create_capture(output, meta)
    except OSError as exc:
        raise TracerError(f"cannot write capture {output}: {exc.strerror}") from exc
    child_env = dict(os.environ if env is None else env)
    pre = child_env.get("LD_PRELOAD", "")
    child_env["LD_PRELOAD"] = f"{shim}:{pre}" if pre else str(shim)
    child_env["TRACE_LAUNCH_CAPTURE"] = capture_env_path(output)
    child_env["TRACE_LAUNCH_MODE"] = mode
    for k in [k for k in child_env if k.startswith("TRACE_LAUNCH_WINDOW")]:
        del child_env[k]
    if window is not None:
        child_env.update(window_env(window, shim))
    try:
        proc = subprocess.Popen(argv, env=child_env)
    except FileNotFoundError as exc:
        raise TracerError(f"{argv[0]}: command not found", status=127) from exc
    except PermissionError as exc:
        raise TracerError(f"{argv[0]}: permission denied", status=126) from exc
    # The traced program owns the terminal's signals from its start; the tracer waits and
    # reports (a Ctrl-C while it reads the GPU's facts below leaves it to write END).
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    watcher = None
    try:
        # The driver's and the GPU's facts (cuda-python's import and cuInit: 0.40-0.48 s on
        # the H100 host) are read while the program starts, not before; the live decode,
        # which reads them from the header, starts after. The caller's meta wins, as it did.
        facts = {k: v for k, v in gpu_meta().items() if k not in meta}
        update_meta(output, pid=proc.pid, **facts)
        watcher = live(output) if live is not None else None
        rc = proc.wait()
    finally:
        signal.signal(signal.SIGINT, old)
    append_end(output, rc)
    if watcher is not None:
        watcher.finish() if finish_live else watcher.release()
    return 128 - rc if rc < 0 else rc


def builtin_argv(grid, block, shared_mem, truth=None, repeat=1):
    argv = [sys.executable, "-m", "tracer.builtin", "--grid", str(grid), "--block", str(block),
            "--shared-mem", str(shared_mem), "--repeat", str(repeat)]
    if truth:
        argv += ["--truth", str(truth)]
    return argv
