"""The timeline (decoders/timeline.py) of an older tree against this one, in one process on
the same decoded models: seconds each and whether the two trace-event JSON texts are the
same byte for byte, as `trace-decode timeline` writes them (session 29: the doorbells'
kernel names, asked of every API call at every doorbell, made the timeline quadratic;
session 30: the events sorted on disk, written one at a time).

    git show REV:decoders/timeline.py > /tmp/timeline_old.py
    python3 bench/timeline_ab.py --old /tmp/timeline_old.py CAPTURE|NAME... [--out F.json]

NAME: a folder of captures/. Exit status 1 when any text differs.
"""
import argparse
import importlib.util
import io
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from decoders.session import decode_capture  # noqa: E402
import decoders.timeline as new  # noqa: E402


def _written(module, model):
    """What `trace-decode timeline` writes (write_timeline), as text."""
    out = io.StringIO()
    module.write_timeline(model, out)
    return out.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--out")
    ap.add_argument("captures", nargs="+")
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("timeline_old", args.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    rows = []
    for name in args.captures:
        path = name if os.path.exists(name) else next(
            (p for p in (os.path.join(ROOT, "captures", name, f)
                         for f in ("capture.tlc.gz", "capture.tlc.zst")) if os.path.exists(p)),
            os.path.join(ROOT, "captures", name, "capture.tlc.gz"))
        model = decode_capture(path)
        t0 = time.perf_counter()
        a = _written(old, model)
        t1 = time.perf_counter()
        b = _written(new, model)
        t2 = time.perf_counter()
        row = {"capture": name, "launches": len(model.launches), "old_s": round(t1 - t0, 2),
               "new_s": round(t2 - t1, 2), "same": a == b, "bytes": len(b)}
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"python": sys.version.split()[0], "cpus": os.cpu_count(), "runs": rows},
                      f, indent=1)
            f.write("\n")
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
