"""trace-launch: run programs under the shim, and render decoded captures."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def shim_path():
    """The shim shipped inside this package (built by `pip install`)."""
    import os
    override = os.environ.get("TRACE_LAUNCH_SHIM")
    if override:
        return Path(override)
    return PACKAGE_DIR / "libtracelaunch.so"
