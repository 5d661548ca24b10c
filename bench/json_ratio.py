"""Issue 24's target 2 in one run: `trace-decode CAPTURE --json` of a long real job against
captures/launch-loop-10k, kernel launches per wall second, alternated rep by rep (this
machine's speed drifts by tens of percent over minutes: only a ratio taken side by side
means anything). Each rep runs the CLI as a user does (a fresh process, its output to a
file); kernel launches are counted once per capture, from the JSON it wrote.

    python3 bench/json_ratio.py CAPTURE [--reps 5] [--ref captures/launch-loop-10k/capture.tlc.gz]
        [--env VAR=VALUE ...] [--out FILE.json]

Prints one line per rep and the medians; --out writes them as JSON.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REF = ROOT / "captures" / "launch-loop-10k" / "capture.tlc.gz"


def decode(capture, out, env):
    """(wall s, CPU s of the decode's processes, peak RSS KiB of the largest) of one CLI run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    with open(out, "wb") as f:
        rc = subprocess.call([sys.executable, "-m", "tracer.cli_main", "trace-decode",
                              str(capture), "--json"], stdout=f, env=env, cwd=ROOT)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if rc not in (0, 2):
        raise SystemExit(f"trace-decode {capture}: exit status {rc}")
    return wall, cpu, after.ru_maxrss


def kernel_launches(path):
    with open(path) as f:
        return sum(1 for launch in json.load(f)["launches"] if launch.get("kernel"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", type=Path)
    ap.add_argument("--ref", type=Path, default=REF)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(v.split("=", 1) for v in args.env)
    caps = {"job": args.capture, "ref": args.ref}
    runs = {k: [] for k in caps}
    counts = {}
    with tempfile.TemporaryDirectory(prefix="json-ratio-") as tmp:
        for rep in range(args.reps):
            for name, cap in caps.items():
                out = Path(tmp) / f"{name}.json"
                wall, cpu, rss = decode(cap, out, env)
                if name not in counts:
                    counts[name] = kernel_launches(out)
                runs[name].append({"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)})
                print(f"rep {rep} {name}: {wall:.2f} s wall, {cpu:.2f} CPU s, "
                      f"{counts[name]} kernel launches", flush=True)
    med = {k: statistics.median(r["wall_s"] for r in v) for k, v in runs.items()}
    rate = {k: counts[k] / med[k] for k in caps}
    result = {"captures": {k: str(v) for k, v in caps.items()}, "env": args.env,
              "cpus": len(os.sched_getaffinity(0)), "kernel_launches": counts, "runs": runs,
              "median_wall_s": med, "kernel_launches_per_s": {k: round(v) for k, v in rate.items()},
              "ratio": round(rate["job"] / rate["ref"], 3)}
    print(f"medians: job {med['job']:.2f} s ({rate['job']:.0f} kernel launches/s), "
          f"ref {med['ref']:.2f} s ({rate['ref']:.0f}/s): ratio {result['ratio']}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
