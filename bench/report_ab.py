"""trace-launch with its default report, this tree against another revision, on one real job
in one run (GPU machine): per rep, the job natively, then under each tree's trace-launch, then
(first rep of the longest length) this tree's with the decode after the program instead of
during it (TRACE_LAUNCH_LIVE=0). Each run says when the program printed its last line and
when trace-launch said the capture was written (scripts/record_scaling.py run), so the time
after the program shows.

    python3 bench/report_ab.py --old DIR --out results.json [--steps 100 500] [--reps 2]
  DIR: a checkout of the other revision (git archive REV | tar x -C DIR) with its shim built
  (cd DIR && python3 setup.py build_ext --inplace). Its tracer is the one `python -m` finds
  there: each run's working directory is its tree.
"""
import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import record_scaling as R  # noqa: E402

PROGRAM = ROOT / "scripts" / "corpus" / "train_transformer.py"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, nargs="+", default=[100, 500])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=150)
    args = ap.parse_args()
    results = {}
    for steps in args.steps:
        prog = [sys.executable, str(PROGRAM), str(steps)]
        rows = {"native": [], "new": [], "old": [], "new_nolive": []}
        want = None
        for rep in range(args.reps):
            nat = R.run(prog, args.timeout)
            want = nat["stdout"] if want is None else want
            nat["stdout_same"] = nat.pop("stdout") == want
            rows["native"].append(nat)
            modes = [("new", ROOT, None), ("old", args.old.resolve(), None)]
            if steps == max(args.steps) and rep == 0:
                modes.append(("new_nolive", ROOT, dict(os.environ, TRACE_LAUNCH_LIVE="0")))
            for which, tree, env in modes:
                cap = Path(f"/tmp/report-ab-{which}-{steps}.tlc")
                cap.unlink(missing_ok=True)
                R.ROOT = tree        # `python -m tracer.cli_main` imports the tree it runs in
                try:
                    r = R.run([sys.executable, "-m", "tracer.cli_main", "trace-launch", "-o",
                               str(cap), "--"] + prog, args.timeout, env=env)
                finally:
                    R.ROOT = ROOT
                r["stdout_same"] = r.pop("stdout") == want
                rows[which].append(r)
            print(steps, rep, {k: (rows[k][-1]["wall_s"], rows[k][-1].get("program_output_done_s"),
                                   rows[k][-1].get("capture_written_s"))
                               for k in ["native"] + [m[0] for m in modes]}, flush=True)
        nat = statistics.median(r["wall_s"] for r in rows["native"])
        results[steps] = {"native_wall_s": nat, "runs": rows, **{
            f"{k}_ratio": round(statistics.median(r["wall_s"] for r in rows[k]) / nat, 3)
            for k in ("new", "old", "new_nolive") if rows[k]}}
        args.out.write_text(json.dumps(results, indent=1))      # what is done, if cut short
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "runs"}
                      for k, v in results.items()}))


if __name__ == "__main__":
    main()
