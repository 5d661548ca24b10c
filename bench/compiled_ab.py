"""The compiled decode against the same sources as pure Python, on one capture, alternating
(setup.py COMPILED): CPU seconds and wall time of the split decode's front alone
(decoders/session/front.py, its events written to /dev/null), and of the text report's two
processes. The pure tree is a copy of decoders/ and tracer/ without their extension
modules. Says which Python ran it and how it was built: the gain differs by version (the
specializing interpreter caches attribute lookups that compiled code makes in full).

    python3 bench/compiled_ab.py CAPTURE [--reps 3] [--out result.json]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def pure_copy(into):
    """decoders/ and tracer/ of this tree without extension modules (the shim's library
    stays: it is not a decode module)."""
    for top in ("decoders", "tracer"):
        shutil.copytree(os.path.join(ROOT, top), os.path.join(into, top),
                        ignore=lambda d, names: [n for n in names if n.endswith(EXT)
                                                 or n == "__pycache__"])
    return into


def _env(tree, **extra):
    """os.environ with `tree` first on PYTHONPATH (the rest stays: where the dependencies are)."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=tree + (os.pathsep + path if path else ""), **extra)


def _child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def front_alone(tree, capture):
    """(CPU s, wall s) of the front over the whole capture."""
    code = ("import os, sys; from decoders.session.front import main; "
            "fd = os.open(os.devnull, os.O_WRONLY); "
            f"sys.exit(main(['--out', str(fd), '--path', {capture!r}]))")
    env = _env(tree)
    before, t0 = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, check=True)
    return _child_cpu() - before, time.perf_counter() - t0


def report(tree, capture):
    """(CPU s of both processes, wall s) of the text report, split."""
    env = _env(tree, TRACE_LAUNCH_SPLIT="1")
    before, t0 = _child_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", capture], env=env,
                   cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return _child_cpu() - before, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    capture = os.path.abspath(args.capture)
    try:
        import Cython
        cython = Cython.__version__
    except ImportError:
        cython = None
    built = [os.path.relpath(os.path.join(d, n), ROOT) for top in ("decoders", "tracer")
             for d, _, names in os.walk(os.path.join(ROOT, top))
             for n in names if n.endswith(EXT) and not n.startswith("libtracelaunch")]
    result = {"python": sys.version.split()[0], "executable": sys.executable,
              "py_enable_shared": sysconfig.get_config_var("Py_ENABLE_SHARED"),
              "cython_here": cython, "extension_modules": len(built), "capture": capture,
              "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"compiled": ROOT, "pure": pure_copy(tmp)}
        for rep in range(args.reps):
            for name, tree in trees.items():
                for what, fn in (("front", front_alone), ("report", report)):
                    cpu, wall = fn(tree, capture)
                    run = {"rep": rep, "tree": name, "what": what, "cpu_s": round(cpu, 2),
                           "wall_s": round(wall, 2)}
                    result["runs"].append(run)
                    print(json.dumps(run), file=sys.stderr, flush=True)
    for what in ("front", "report"):
        med = {}
        for name in ("compiled", "pure"):
            med[name] = round(statistics.median(r["cpu_s"] for r in result["runs"]
                                                if r["tree"] == name and r["what"] == what), 3)
        result[f"{what}_median_cpu_s"] = med
        result[f"{what}_pure_over_compiled"] = round(med["pure"] / med["compiled"], 3)
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
