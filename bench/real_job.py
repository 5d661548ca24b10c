"""The whole job on a real training loop (issue 17), measured in one run on the GPU machine:
scripts/corpus/train_loop.py natively, under `trace-launch --no-report`, and under
`trace-launch` with its default text report, interleaved over --reps; then `trace-decode`
of the capture (text and --json) with peak RSS, and the capture's size. Ratios are taken
against the native runs of the same invocation.

    python3 bench/real_job.py --steps 400 --reps 3 --json out.json
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROG = [sys.executable, str(ROOT / "scripts/corpus/train_loop.py")]
CLI = [sys.executable, "-m", "tracer.cli_main"]


def timed(argv, **kw):
    """(wall seconds, peak RSS MiB of the child, completed process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak, before) / 1024, p


def rss_of(argv):
    """Peak RSS (MiB) and wall of one command, measured in a fresh child of its own."""
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE);"
            "w=time.perf_counter()-t;"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,w,p.returncode,"
            "p.stderr[-300:].decode(errors='replace').replace(chr(10),' '))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                         env=dict(os.environ)).stdout.split(None, 3)
    return {"peak_rss_mib": float(out[0]), "wall_s": float(out[1]), "rc": int(out[2]),
            "stderr_tail": out[3] if len(out) > 3 else ""}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out-dir", type=Path, default=Path("/tmp/real-job"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    prog = PROG + [str(args.steps)]
    runs = {"native": [], "no_report": [], "report": []}
    stdout = {}
    for rep in range(args.reps):
        for mode in runs:
            cap = args.out_dir / f"{mode}-{rep}.tlc"
            if cap.exists():
                cap.unlink()
            argv = prog if mode == "native" else CLI + ["trace-launch", "-o", str(cap)] + \
                (["--no-report"] if mode == "no_report" else []) + prog
            wall, _, p = timed(argv)
            runs[mode].append(wall)
            stdout.setdefault(mode, (p.stdout, p.returncode))
            print(f"{mode} rep {rep}: {wall:.2f} s rc={p.returncode}", flush=True)
    med = {m: statistics.median(v) for m, v in runs.items()}
    cap = args.out_dir / "no_report-0.tlc"
    res = {"steps": args.steps, "reps": args.reps, "runs_s": runs, "median_s": med,
           "ratio_vs_native": {m: med[m] / med["native"] for m in med},
           "stdout_unchanged": len({v for v in stdout.values()}) == 1,
           "capture_bytes": cap.stat().st_size}
    res["decode_text"] = rss_of(CLI + ["trace-decode", str(cap)])
    res["decode_json"] = rss_of(CLI + ["trace-decode", str(cap), "--json"])
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
