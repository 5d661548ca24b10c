"""How decoding scales with the length of a run: captures of one program at several lengths
(e.g. 20, 100 and 500 training steps: scripts/record_scaling.py), each decoded through the
real CLI path in a fresh process, `trace-decode CAPTURE --json` to /dev/null and the text
report (and, with --views timeline, `trace-decode timeline CAPTURE -o /dev/null`), with
captures/launch-loop-10k in the same run as the yardstick. Per run: launches
(QMDs) and kernel launches, wall and CPU seconds, launches per CPU second, peak RSS (the
decoding process and the render workers it waits for). A decode that is linear keeps
launches/s and peak RSS flat from one length to the next (STYLE 13: ratios, not absolutes).

usage: python3 bench/scaling.py CAPTURE... [--out results.json] [--views json text timeline]
                                [--baseline CAPTURE | --no-baseline] [--timeout S]
  CAPTURE: shortest first is not required (they are sorted by size); default --out
  bench/results-scaling.json.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LOOP = os.path.join(ROOT, "captures", "launch-loop-10k", "capture.tlc.gz")
VIEWS = {"json": ["--json"], "text": [], "timeline": None}     # timeline: its own subcommand
_STAT = re.compile(r"^  (launches|records|submissions)\s+(\d+)$", re.M)
_KERNELS = re.compile(r"kernel launches: (\d+) verified[^,]*, (\d+) with differences, "
                      r"(\d+) not checked(?:, (\d+) graph node)?")


def run(capture, view, timeout):
    """One decode in a fresh process: its counts, seconds and peak RSS (os.wait4: the
    child and the workers it waited for)."""
    cmd = [sys.executable, "-m", "tracer.cli_main", "trace-decode", capture, *VIEWS[view]] \
        if VIEWS[view] is not None else \
        [sys.executable, "-m", "tracer.cli_main", "trace-decode", view, capture, "-o", os.devnull]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(os.devnull, "wb") as null:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out if view == "text" else null,
                                stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                return {"capture": capture, "view": view, "timed_out": timeout}
            time.sleep(0.05)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        row = {"capture": capture, "view": view, "rc": proc.returncode, "wall_s": round(wall, 3),
               "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
               "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
               "stderr_lines": len(err.read().splitlines())}
        if view == "text":
            out.seek(max(0, os.fstat(out.fileno()).st_size - (256 << 10)))
            tail = out.read().decode("utf-8", "replace")
            row.update({k: int(v) for k, v in _STAT.findall(tail)})
            out.seek(0)
            m = _KERNELS.search(out.read(4 << 20).decode("utf-8", "replace")) or \
                _KERNELS.search(tail)
            if m:
                row["kernel_launches"] = sum(int(x or 0) for x in m.groups())
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("captures", nargs="+")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results-scaling.json"))
    ap.add_argument("--views", nargs="+", default=["json", "text"], choices=sorted(VIEWS))
    ap.add_argument("--baseline", default=LOOP if os.path.exists(LOOP) else None)
    ap.add_argument("--no-baseline", dest="baseline", action="store_const", const=None)
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args(argv)
    caps = sorted((os.path.abspath(c) for c in args.captures), key=os.path.getsize)
    if args.baseline:
        caps.append(os.path.abspath(args.baseline))
    rows = []
    for cap in caps:
        counts = {}
        # text first: its stats give the counts the JSON run (to /dev/null) is rated by
        for view in sorted(args.views, key=lambda v: (v != "text", v)):
            row = run(cap, view, args.timeout)
            row["capture_bytes"] = os.path.getsize(cap)
            if view == "text":
                counts = {k: row[k] for k in ("launches", "kernel_launches", "records",
                                              "submissions") if k in row}
            row.update({k: v for k, v in counts.items() if k not in row})
            if row.get("cpu_s") and row.get("launches"):
                row["launches_per_cpu_s"] = round(row["launches"] / row["cpu_s"], 1)
            if row.get("wall_s") and row.get("launches"):
                row["launches_per_wall_s"] = round(row["launches"] / row["wall_s"], 1)
            rows.append(row)
            print(f"{os.path.relpath(cap, ROOT):60s} {view:4s} "
                  + " ".join(f"{k}={row[k]}" for k in ("launches", "wall_s", "cpu_s",
                                                       "launches_per_cpu_s", "peak_rss_mib",
                                                       "rc", "timed_out") if k in row),
                  flush=True)
    for view in args.views:     # each length against the shortest
        mine = [r for r in rows if r["view"] == view and r.get("launches_per_cpu_s")
                and r["capture"] != os.path.abspath(args.baseline or "")]
        for r in mine:
            r["rate_vs_shortest"] = round(r["launches_per_cpu_s"] / mine[0]["launches_per_cpu_s"], 3)
            if r.get("peak_rss_mib") and mine[0].get("peak_rss_mib"):
                r["rss_vs_shortest"] = round(r["peak_rss_mib"] / mine[0]["peak_rss_mib"], 3)
    result = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()},
              "git": subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                    capture_output=True, text=True).stdout.strip(),
              "runs": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}")
    return 0 if all(r.get("rc") == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
