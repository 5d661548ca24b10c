"""Record one real program at several lengths, natively and under trace-launch, on the GPU
machine (issue 24's scaling run): for each length, a native run and a traced run
(`trace-launch --no-report -o`, the capture a user gets), interleaved, their wall times,
stdout and exit status compared, and a manifest beside each capture. With --report, also
`trace-launch` with its default report, timed against the native run of the same rep.

    python3 scripts/record_scaling.py --out DIR --steps 20 100 500 [--reps 1] [--report]
        [--program scripts/corpus/train_transformer.py]

Writes DIR/transformer-<steps>/{capture.tlc, manifest.json} and DIR/scaling-record.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tracer.run import gpu_meta  # noqa: E402

CLI = [sys.executable, "-m", "tracer.cli_main", "trace-launch"]


def run(argv, timeout, env=None):
    """Wall time, exit status, stdout and the tail of stderr; and when, from the start, the
    last stdout line came (the program's own end: train_transformer.py prints its result
    last) and trace-launch said the capture was written (its decode and exit step done)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace", env=env, cwd=ROOT)
    lines = {"out": [], "err": []}

    def pump(stream, into):
        for line in stream:
            into.append((time.perf_counter() - t0, line))
    threads = [threading.Thread(target=pump, args=(p.stdout, lines["out"]), daemon=True),
               threading.Thread(target=pump, args=(p.stderr, lines["err"]), daemon=True)]
    for t in threads:
        t.start()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = "timeout"
    wall = time.perf_counter() - t0
    for t in threads:
        t.join(5)
    out = "".join(line for _, line in lines["out"])
    err = "".join(line for _, line in lines["err"])
    written = [t for t, line in lines["err"] if line.startswith("trace-launch: capture written")]
    return {"wall_s": round(wall, 3), "rc": rc, "stdout": out, "stderr_tail": err[-2000:],
            "program_output_done_s": round(lines["out"][-1][0], 3) if lines["out"] else None,
            "capture_written_s": round(written[0], 3) if written else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, nargs="+", default=[20, 100, 500])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--report", action="store_true", help="also time the default report")
    ap.add_argument("--report-variant", action="append", default=[], metavar="NAME:VAR=VALUE",
                    help="with --report, also time it with VAR=VALUE in the environment, as "
                         "report_NAME (for example after:TRACE_LAUNCH_LIVE=0, the report "
                         "decoded after the program); repeatable")
    ap.add_argument("--program", default="scripts/corpus/train_transformer.py")
    ap.add_argument("--name", default="transformer")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--truth", type=Path, help="CUPTI of a native run of the first length "
                    "(scripts/corpus/_cupti.py), kept in its manifest as ground_truth.native_cupti")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {k: v for k, v in gpu_meta().items() if k != "gpu_error"}
    results = {"meta": meta, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "lengths": {}}
    for steps in args.steps:
        prog = [sys.executable, args.program, str(steps)]
        d = args.out / f"{args.name}-{steps}"
        d.mkdir(parents=True, exist_ok=True)
        cap = d / "capture.tlc"
        variants = [(v.split(":", 1)[0], v.split(":", 1)[1].split("=", 1))
                    for v in args.report_variant]
        runs = {"native": [], "traced": [], "report": []}
        runs.update({f"report_{name}": [] for name, _ in variants})
        for rep in range(args.reps):
            runs["native"].append(run(prog, args.timeout))
            if cap.exists():
                cap.unlink()
            runs["traced"].append(run(CLI + ["--no-report", "-o", str(cap), "--"] + prog,
                                      args.timeout))
            if args.report:
                rcap = args.out / f"report-{steps}.tlc"
                if rcap.exists():
                    rcap.unlink()
                r = run(CLI + ["-o", str(rcap), "--"] + prog, args.timeout)
                r["report_lines"] = r["stderr_tail"].count("\n")
                runs["report"].append(r)
                rcap.unlink(missing_ok=True)
                for name, (var, value) in variants:
                    r = run(CLI + ["-o", str(rcap), "--"] + prog, args.timeout,
                            env=dict(os.environ, **{var: value}))
                    r["report_lines"] = r["stderr_tail"].count("\n")
                    runs[f"report_{name}"].append(r)
                    rcap.unlink(missing_ok=True)
            print(f"steps={steps} rep={rep} " + " ".join(
                f"{k}={v[-1]['wall_s']}s/rc={v[-1]['rc']}" for k, v in runs.items() if v),
                flush=True)
        nat = statistics.median(r["wall_s"] for r in runs["native"])
        entry = {"steps": steps, "native_wall_s": nat,
                 "traced_wall_s": statistics.median(r["wall_s"] for r in runs["traced"]),
                 "stdout_same": all(r["stdout"] == runs["native"][0]["stdout"]
                                    for k, v in runs.items() if k != "native" for r in v),
                 "exit_same": all(r["rc"] == runs["native"][0]["rc"]
                                  for k, v in runs.items() if k != "native" for r in v),
                 "native_stdout": runs["native"][0]["stdout"],
                 "capture_bytes": cap.stat().st_size if cap.exists() else None,
                 "runs": {k: [{kk: vv for kk, vv in r.items() if kk != "stdout"} for r in v]
                          for k, v in runs.items()}}
        entry["traced_ratio"] = round(entry["traced_wall_s"] / nat, 3)
        if runs["report"]:
            entry["report_wall_s"] = statistics.median(
                r["wall_s"] for r in runs["report"] if r["rc"] != "timeout") \
                if any(r["rc"] != "timeout" for r in runs["report"]) else None
            if entry["report_wall_s"]:
                entry["report_ratio"] = round(entry["report_wall_s"] / nat, 3)
        for name, _ in variants:
            ok = [r["wall_s"] for r in runs[f"report_{name}"] if r["rc"] != "timeout"]
            entry[f"report_{name}_wall_s"] = statistics.median(ok) if ok else None
            if ok:
                entry[f"report_{name}_ratio"] = round(statistics.median(ok) / nat, 3)
        results["lengths"][steps] = entry
        manifest = {"name": f"{args.name}-{steps}", "command": prog, "mode": "full",
                    # what the program reads from its environment (train_transformer.py's
                    # TL_* options, PyTorch's allocator settings)
                    "env": {k: v for k, v in sorted(os.environ.items())
                            if k.startswith(("TL_", "PYTORCH_"))},
                    "git_commit": os.environ.get("TRACE_LAUNCH_GIT_COMMIT"),
                    "exit_status": runs["traced"][-1]["rc"], "date": results["date"],
                    "wall_s": runs["traced"][-1]["wall_s"],
                    "notes": f"{args.program} {steps} steps under trace-launch --no-report "
                             f"(scripts/record_scaling.py)",
                    "ground_truth": {"steps": steps,
                                     "native_stdout": runs["native"][0]["stdout"],
                                     "native_exit": runs["native"][0]["rc"]}}
        if args.truth and steps == args.steps[0] and args.truth.exists():
            manifest["ground_truth"]["native_cupti"] = json.loads(args.truth.read_text())
        if os.environ.get("TRACE_LAUNCH_IMAGE_MAX"):
            manifest["notes"] += (f"; TRACE_LAUNCH_IMAGE_MAX={os.environ['TRACE_LAUNCH_IMAGE_MAX']} "
                                  "(module images cut)")
        manifest.update(meta)
        if cap.exists():
            from scripts.record import summarize     # records, submissions, pids (as record.py)
            manifest["summary"] = summarize(cap)
        (d / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    (args.out / "scaling-record.json").write_text(json.dumps(results, indent=1, sort_keys=True))
    for steps, e in results["lengths"].items():
        print(f"steps={steps}: native {e['native_wall_s']} s, traced {e['traced_wall_s']} s "
              f"({e['traced_ratio']}x), report {e.get('report_wall_s')} "
              f"({e.get('report_ratio')}x), stdout same {e['stdout_same']}, "
              f"capture {e['capture_bytes']} B")


if __name__ == "__main__":
    main()
