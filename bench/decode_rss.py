"""Peak RSS and launches/s of a full decode, each run in a fresh child process.

The child runs decoders.session.decode_capture on the capture (framing, ioctls, object
tree, method stream, QMDs, constant bank 0, launch summaries) and, with --json, writes the
JSON report to /dev/null (tracer.report.render_json); it reports ru_maxrss (peak RSS) and
kernel launches per second of CPU time (process_time: the machine may be shared).

To show how peak RSS scales with length on a real recording, --records N makes the child
decode only the first N records of the capture (a prefix of the same recording, cut at a
record boundary, END missing: decoded exactly like a capture that was cut short). Nothing
is synthesised: every record is the recorded one.

usage: python3 bench/decode_rss.py [CAPTURE] [--records N ...] [--json] [--keep K]
default: captures/launch-loop-100k if present, else captures/launch-loop-10k, with
prefixes of 2,500, 5,000 and 10,000 launches' worth of records and the whole file.
"""
import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)


def child(path, as_json, keep):
    import io
    from decoders.session import decode_capture
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    model = decode_capture(path, keep=keep)
    t1 = time.process_time()
    kernels = sum(1 for l in model.launches if l.summary["kernel"])
    t2 = time.process_time()
    if as_json:
        from tracer.report import render_json
        with open(os.devnull, "w") as out:
            render_json(model, out)
    t3 = time.process_time()
    print(json.dumps({"records": model.records, "submissions": len(model.submissions),
                      "qmds": len(model.launches), "kernels": kernels,
                      "decode_s": t1 - t0, "json_s": t3 - t2 if as_json else None,
                      "launches_per_s": kernels / (t1 - t0) if t1 > t0 else None,
                      "rss_import_mib": rss0 / 1024,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def prefix(path, nrecords, out):
    """The first nrecords records of a capture, as a plain file (header and records as
    recorded; reading stops at the shim's cursor in the header, so it is set to the cut)."""
    from decoders.capture.reader import CaptureReader, open_capture
    reader = CaptureReader(open_capture(path))
    end = None
    for rec in reader.records():
        if rec.index == nrecords:
            end = rec.offset
            break
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as src:
        data = src.read(end) if end is not None else src.read()
    data = bytearray(data)
    data[0x10:0x18] = len(data).to_bytes(8, "little")    # TL_FILE_HEADER.cursor
    out.write(data)
    out.flush()


def records_for_launches(path, launches):
    """Record count of the prefix that holds the first `launches` kernel launches."""
    from decoders.session import decode_capture
    model = decode_capture(path)
    n = 0
    for l in model.launches:
        n += bool(l.summary["kernel"])
        if n == launches:
            return l.record_index + 1
    return None


def prepare(path, sizes, tmp):
    for n in sizes:
        nrec = records_for_launches(path, n)
        if nrec is not None:
            with open(os.path.join(tmp, f"prefix-{n}.tlc"), "wb") as out:
                prefix(path, nrec, out)


def run_child(path, as_json, keep):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path]
    if as_json:
        cmd.append("--json")
    if keep is not None:
        cmd += ["--keep", str(keep)]
    return json.loads(subprocess.check_output(cmd).decode().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--prepare", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help="also write the JSON report")
    ap.add_argument("--keep", type=int, default=None, help="SpillList keep (default: "
                    "decode_capture's); -1 keeps everything in memory")
    ap.add_argument("--launches", type=int, nargs="*", default=None,
                    help="decode prefixes holding this many kernel launches")
    args = ap.parse_args()
    keep = None if args.keep == -1 else args.keep
    if args.child:
        if args.keep is None:
            from decoders.session import DEFAULT_KEEP
            keep = DEFAULT_KEEP
        return child(args.capture, args.json, keep)
    path = args.capture
    if path is None:
        for name in ("launch-loop-100k", "launch-loop-10k"):
            p = os.path.join(ROOT, "captures", name, "capture.tlc.gz")
            if os.path.exists(p):
                path = p
                break
    sizes = args.launches if args.launches is not None else [2500, 5000, 10000]
    if args.prepare:
        return prepare(path, sizes, args.prepare)
    print(f"capture: {os.path.relpath(path, ROOT)}")
    print(f"{'what':28s} {'records':>8s} {'kernels':>8s} {'QMDs':>7s} {'launches/s':>11s} "
          f"{'peak RSS MiB':>13s} {'over imports MiB':>17s}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # The prefixes are cut in a child too: Linux carries a process's peak RSS across
        # fork+exec, so the parent must stay small for the children's figures to be theirs.
        subprocess.check_call([sys.executable, os.path.abspath(__file__), path, "--prepare",
                               tmp, "--launches", *map(str, sizes)])
        for n in sizes:
            cut = os.path.join(tmp, f"prefix-{n}.tlc")
            if os.path.exists(cut):
                rows.append((f"first {n} launches", run_child(cut, args.json, args.keep)))
        rows.append(("whole capture", run_child(path, args.json, args.keep)))
    for what, r in rows:
        per = r["peak_rss_mib"] - r["rss_import_mib"]
        print(f"{what:28s} {r['records']:8d} {r['kernels']:8d} {r['qmds']:7d} "
              f"{r['launches_per_s'] or 0:11,.0f} {r['peak_rss_mib']:13.1f} {per:17.1f}"
              + (f"  (JSON {r['json_s']:.1f} s)" if r["json_s"] is not None else ""))


if __name__ == "__main__":
    main()
