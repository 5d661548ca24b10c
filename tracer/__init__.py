"""trace-launch: run programs under the shim, and render decoded captures."""
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def shim_path():
    """The shim shipped inside this package (built by `pip install`).

    Run from a source checkout (tests with cwd on sys.path), the package directory may
    hold no built shim; the installed distribution's copy is used then: the file its
    RECORD lists (`pip install .`), or the one in the package directory an editable
    install (`pip install -e .`) maps `tracer` to. TRACE_LAUNCH_SHIM overrides all."""
    import os
    override = os.environ.get("TRACE_LAUNCH_SHIM")
    if override:
        return Path(override)
    local = PACKAGE_DIR / "libtracelaunch.so"
    if local.exists():
        return local
    for found in _installed_shims():
        if found.exists():
            return found
    return local        # not installed: the expected path, for the error message


def _installed_shims():
    """Where an installed trace-launch keeps its shim, most likely first."""
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        dist = distribution("trace-launch")
    except PackageNotFoundError:    # (the finders below are still asked: a machine whose
        dist = None                 # Python maps the package without its metadata)
    if dist is not None:
        for f in dist.files or ():
            if f.name == "libtracelaunch.so":
                yield Path(dist.locate_file(f))
        yield Path(dist.locate_file("tracer/libtracelaunch.so"))
    import sys
    from importlib.machinery import PathFinder
    for finder in sys.meta_path:        # an editable install's finder maps the package
        find = getattr(finder, "find_spec", None)
        if find is None or finder is PathFinder:
            continue
        try:
            spec = find("tracer", None)
        except (ImportError, ValueError, TypeError):    # another finder's own rules
            continue
        for place in (spec.submodule_search_locations or []) if spec is not None else []:
            yield Path(place) / "libtracelaunch.so"


def write_text(path, fill):
    """Write the text file `path` with fill(f): through a temporary file beside it and a
    rename, so that no reader meets half of it. A device, FIFO or socket (/dev/null, a
    named pipe) is written in place: the rename would put a regular file where it was
    (run as root, `trace-decode timeline -o /dev/null` replaced /dev/null)."""
    import os
    import stat
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, "w", encoding="utf-8") as f:
            fill(f)
        return
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            fill(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
