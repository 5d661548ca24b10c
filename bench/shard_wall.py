"""The default text report of a capture (trace-decode CAPTURE) decoded with each number of
blocks (decoders/session/shard.py, TRACE_LAUNCH_SHARDS; 1: not sharded, the split decode
of two processes), each in a fresh process: its wall time, peak RSS of the decoding
process (this one, which skims, when sharded), how it was decoded (model.split: the blocks, or why not), and whether its report
is byte for byte the one the first setting gave.

    python3 bench/shard_wall.py CAPTURE [--shards 1 1 8 12] [--json OUT]
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_ONE = r"""
import sys, time
from tracer.cli_common import print_report
import decoders.session as S
seen = []
real = S.decode_capture
def decode(*a, **k):
    m = real(*a, **k)
    seen.append(m.split)
    return m
S.decode_capture = decode
with open(sys.argv[2], "w") as out:
    rc = print_report(sys.argv[1], out, launch_limit=200)
import resource
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)
print(repr(seen[0] if seen else None), file=sys.stderr)
sys.exit(rc)
"""


def one(path, k, out):
    env = dict(os.environ, TRACE_LAUNCH_SHARDS=str(k))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-c", _ONE, path, out], env=env, cwd=ROOT,
                       capture_output=True, text=True)
    wall = time.monotonic() - t
    with open(out, "rb") as f:
        digest = hashlib.blake2b(f.read(), digest_size=16).hexdigest()
    lines = p.stderr.strip().splitlines()
    return {"shards": k, "wall_s": round(wall, 3), "rc": p.returncode,
            "how": lines[-1] if lines else None, "report_digest": digest,
            "max_rss_mib": int(lines[-2]) if len(lines) > 1 and lines[-2].isdigit() else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--shards", type=int, nargs="+", default=[1, 1, 8, 12])
    ap.add_argument("--json")
    ap.add_argument("--tmp", default="/tmp")
    args = ap.parse_args()
    runs = []
    for n, k in enumerate(args.shards):
        r = one(args.capture, k, os.path.join(args.tmp, f"shard-wall-{n}.txt"))
        r["same_report"] = r["report_digest"] == (runs[0]["report_digest"] if runs
                                                  else r["report_digest"])
        runs.append(r)
        print(f"shards={k}: {r['wall_s']:.2f} s wall, {r['max_rss_mib']} MiB, rc {r['rc']}, report "
              f"{'the same' if r['same_report'] else 'DIFFERS'}; {r['how']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"capture": args.capture, "cpus": len(os.sched_getaffinity(0)),
                       "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
