"""The modules setup.py compiles with Cython (COMPILED) against their .py: built in place by
the README's test command, fresh, and decoding every shape of capture byte for byte as the
pure-Python modules do.

Python imports an extension module before the .py of the same name, so an extension older
than its source would run old code silently: that is a failure here, never a skip."""
import ast
import importlib
import importlib.machinery
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, bench_module, capture_path


def compiled_paths():
    """setup.py's COMPILED list (read, not imported: importing setup.py runs setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPILED":
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no COMPILED list")


def extension_of(path):
    """The extension built in place beside `path` for this interpreter, or None."""
    py = ROOT / path
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        so = py.with_name(py.stem + suffix)
        if so.exists():
            return so
    return None


def built():
    """{path: extension} of COMPILED; skips where none is built (a tree tested as pure
    Python), fails where only some are."""
    got = {p: extension_of(p) for p in compiled_paths()}
    have = [p for p, so in got.items() if so is not None]
    if not have:
        pytest.skip("no module built in place (python3 setup.py build_ext --inplace): the "
                    "tests ran the pure-Python modules")
    missing = sorted(set(got) - set(have))
    assert not missing, f"built in place but for {missing}: run python3 setup.py build_ext --inplace"
    return got


def test_compiled_list_names_real_modules():
    paths = compiled_paths()
    assert len(paths) == len(set(paths))
    for p in paths:
        assert (ROOT / p).is_file(), p
        assert p.endswith(".py") and p.split("/")[0] in ("decoders", "tracer"), p


def test_every_compiled_module_is_fresh_and_imported():
    for path, so in built().items():
        assert so.stat().st_mtime >= (ROOT / path).stat().st_mtime, \
            f"{so.name} is older than {path}: run python3 setup.py build_ext --inplace"
        name = path[:-3].replace("/", ".").removesuffix(".__init__")
        mod = importlib.import_module(name)
        assert os.path.samefile(mod.__file__, so), (name, mod.__file__)


def _pure_tree(tmp_path):
    """The checkout's Python sources alone (no extension), where `python -m` runs them."""
    dst = tmp_path / "pure"
    for top in ("decoders", "tracer", "kernels"):
        shutil.copytree(ROOT / top, dst / top,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
    return dst


# a capture of each kind of work, and the views that walk every launch and API call
CASES = [("torch-libs", ["--all-launches"]), ("torch-libs", ["--json", "--all-fields"]),
         ("jax-cmdbuf", ["--json"]), ("cond-nodes", ["--all-launches", "--stats"]),
         ("ddp-2rank", []), ("sigkill", ["--json"])]


@pytest.mark.parametrize("split", ["0", "1"])
def test_compiled_decodes_as_pure_python(tmp_path, split):
    built()
    pure = _pure_tree(tmp_path)
    for name, flags in CASES:
        argv = [sys.executable, "-m", "tracer.cli_main", "trace-decode", capture_path(name), *flags]
        outs = []
        for tree in (ROOT, pure):
            path = [str(tree)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
            env = dict(os.environ, TRACE_LAUNCH_SPLIT=split, TRACE_LAUNCH_JOBS="2",
                       PYTHONPATH=os.pathsep.join(path))
            r = subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=300)
            outs.append((r.returncode, r.stdout, r.stderr.replace(str(tree).encode(), b"ROOT")))
        assert outs[0][0] == outs[1][0], (name, flags)
        assert outs[0][1] == outs[1][1], (name, flags, "stdout differs")
        assert outs[0][2] == outs[1][2], (name, flags, "stderr differs")


def test_identity_reference_runs_the_revisions_python(tmp_path):
    """bench/decode_identity.py's reference tree: an extension built in place beside a file
    it takes from REV is removed, or Python would import it instead of REV's source."""
    overlay = bench_module("decode_identity").overlay
    folder = tmp_path / "decoders"
    folder.mkdir()
    (folder / "fields.py").write_text("stale = True\n")
    so = folder / ("fields" + importlib.machinery.EXTENSION_SUFFIXES[0])
    so.write_bytes(b"not a module")
    other = folder / ("gpfifo" + importlib.machinery.EXTENSION_SUFFIXES[0])
    other.write_bytes(b"not a module")
    overlay(str(tmp_path), "HEAD", ["decoders/fields.py"])
    assert not so.exists()
    assert other.exists()           # a module not taken from REV keeps its extension
    head = subprocess.run(["git", "-C", str(ROOT), "show", "HEAD:decoders/fields.py"],
                          capture_output=True, check=True).stdout
    assert (folder / "fields.py").read_bytes() == head


def test_identity_refuses_paths_outside_the_tree(tmp_path):
    """bench/decode_identity.py --paths names files of the tree: a capture given after
    --paths (an absolute path) is refused, not taken for a file missing at REV and removed."""
    import pytest
    capture = tmp_path / "capture.tlc"
    capture.write_bytes(b"kept")
    main = bench_module("decode_identity").main
    for bad in (str(capture), "../capture.tlc"):
        with pytest.raises(SystemExit) as e:
            main(["--paths", "decoders/fields.py", bad])
        assert e.value.code == 2
    assert capture.read_bytes() == b"kept"
