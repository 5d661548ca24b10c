"""What `pip install .` installs: every package of the tree, so that trace-launch and
trace-decode work from site-packages and not only from a checkout (pytest, run from the
repository root, imports the checkout and cannot see a package left out of the wheel: the
session and launch packages were, for a day)."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

try:
    import tomllib
except ImportError:             # Python 3.10
    tomllib = None


def _tree_packages():
    out = set()
    for top in ("decoders", "tracer"):
        for init in (ROOT / top).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                out.add(".".join(init.parent.relative_to(ROOT).parts))
    return out


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_every_package_of_the_tree_is_installed():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    missing = _tree_packages() - listed
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {sorted(missing)}"
    for name in listed:             # and each listed one is a package where it says
        where = conf.get("package-dir", {}).get(name, name.replace(".", "/"))
        assert (ROOT / where / "__init__.py").is_file() or name == "tracer.kernels", name


def test_the_built_wheel_imports_every_decoder_module(tmp_path):
    """Build the wheel (the shim compiles with it; the decode modules stay pure Python)
    and import every module from it alone, in a process whose path holds no checkout."""
    try:                # build with what is installed where it can (no network needed)
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
        isolation = ["--no-build-isolation"]
    except ImportError:
        isolation = []
    # from a copy of the sources: a build/ left in the checkout would lend the wheel its
    # stale modules
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for top in ("decoders", "tracer", "kernels", "shim"):
        shutil.copytree(ROOT / top, src / top, ignore=shutil.ignore_patterns(
            "__pycache__", "*.so", "*.o"))
    # TRACE_LAUNCH_PURE: what this checks is which modules the wheel carries; compiling
    # setup.py COMPILED again (the README's build_ext already did, tests/test_compiled.py
    # checks it) took minutes of a 2-CPU machine's test run
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation,
                        "-q", "-w", str(tmp_path), str(src)],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TRACE_LAUNCH_PURE="1"))
    if r.returncode != 0:
        pytest.skip(f"pip wheel failed here: {r.stderr.strip().splitlines()[-1:]}")
    (whl,) = tmp_path.glob("trace_launch-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(whl).extractall(site)
    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                     for top in ("decoders", "tracer") for p in (ROOT / top).rglob("*.py")
                     if "__pycache__" not in p.parts and p.name != "__main__.py")
    code = ("import importlib, sys\n"
            "sys.path.insert(0, sys.argv[1])\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            "    assert sys.modules[m].__file__.startswith(sys.argv[1]), m\n")
    r = subprocess.run([sys.executable, "-I", "-c", code, str(site)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
