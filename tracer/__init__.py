"""trace-launch: run programs under the shim, and render decoded captures."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def shim_path():
    """The shim shipped inside this package (built by `pip install`).

    Run from a source checkout (tests with cwd on sys.path), the package directory may
    hold no built shim; the installed distribution's copy is used then."""
    import os
    override = os.environ.get("TRACE_LAUNCH_SHIM")
    if override:
        return Path(override)
    local = PACKAGE_DIR / "libtracelaunch.so"
    if local.exists():
        return local
    try:
        from importlib.metadata import distribution
        installed = Path(distribution("trace-launch").locate_file("tracer/libtracelaunch.so"))
        if installed.exists():
            return installed
    except Exception:  # not installed: report the expected path
        pass
    return local
