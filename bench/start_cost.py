"""trace-launch's fixed cost at a program's start and exit, on the GPU machine: a program
that prints the time it started and exits, run natively and under `trace-launch
--no-report -o`, interleaved. Per run: the wall time, and how long after the launcher
started the program started (its first line). Also how long the tracer's own reading of
the GPU's facts takes (tracer/run.py gpu_meta: cuda-python's import and cuInit), in a
fresh process each time: since session 27 it runs beside the program's start.

    python3 bench/start_cost.py [--reps 5] > result.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAM = [sys.executable, "-c", "import time; print(repr(time.time()))"]
FACTS = ("import time; t = time.perf_counter(); from tracer.run import gpu_meta; "
         "m = gpu_meta(); print(repr(time.perf_counter() - t)); print(m.get('gpu'))")


def timed(argv, env):
    t0 = time.time()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    wall = time.time() - t0
    first = out.stdout.splitlines()[0] if out.stdout else None
    return {"wall_s": round(wall, 4), "rc": out.returncode,
            "program_started_s": round(float(first) - t0, 4) if first else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ)
    tmp = tempfile.mkdtemp()
    runs = {"native": [], "traced": []}
    facts = []
    for rep in range(args.reps):
        runs["native"].append(timed(PROGRAM, env))
        cap = os.path.join(tmp, f"start-{rep}.tlc")
        runs["traced"].append(timed([sys.executable, "-m", "tracer.cli_main", "trace-launch",
                                     "--no-report", "-o", cap, *PROGRAM], env))
        got = subprocess.run([sys.executable, "-c", FACTS], capture_output=True, text=True,
                             env=env, timeout=120).stdout.split("\n")
        facts.append({"s": round(float(got[0]), 4), "gpu": got[1]})
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall_s", "program_started_s")}
           for k, v in runs.items()}
    print(json.dumps({"runs": runs, "gpu_meta": facts, "medians": med,
                      "gpu_meta_median_s": statistics.median(f["s"] for f in facts)}, indent=1))


if __name__ == "__main__":
    main()
