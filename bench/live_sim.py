"""The decode during the run, without a GPU: a writer process reveals a real capture's records
into a new file at a given rate (moving the header's cursor as the shim does), while a
second process decodes it as trace-launch does (tracer/live.py LiveDecode, the default
report's brief decode); then the same bytes decoded offline (decode_capture, brief) in a
fresh process. Per rep: when the writer finished, when the live decode finished (the
report's wait after the program: `tail`), and each decode's wall and CPU seconds (its own
and its front's). Ratios in one run: the live decode's length against the offline one's.

Why: trace-launch's default report waits for the decode to catch up after the program
exits (issue 24: a 500-step job writes ~240 MB in ~5 s). This separates the decode's
speed from the GPU machine's program and measures it on any machine.

    python3 bench/live_sim.py CAPTURE [--rate 45] [--reps 2] [--block N] [--out results.json]
  CAPTURE: any capture (a compressed one is expanded first); --rate: MB/s of records.
"""
import argparse
import json
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, ROOT)

from decoders.capture import format as F                     # noqa: E402
from decoders.capture.reader import CaptureReader, open_capture  # noqa: E402

STEP = 1 << 20      # bytes of whole records revealed at a time
BRIEF = 200         # tracer/cli_common.py SHOWN_LAUNCHES: what the default report decodes in full


def expand(capture, into):
    """The capture as its raw bytes in file `into` (a compressed capture decompressed)."""
    with open_capture(capture) as src, open(into, "wb") as dst:
        shutil.copyfileobj(src, dst, 8 << 20)


def boundaries(path):
    """(header size, ends of runs of whole records every ~STEP bytes up to the END record),
    framed by the decode's own reader (every body left unparsed)."""
    with open(path, "rb") as f:
        reader = CaptureReader(f)
        ends, last = [], reader.header.header_size
        at = last
        for rec in reader.records(lazy=tuple(F.TL_REC.values())):
            if rec.type == "END":
                break
            at = rec.offset + rec.length
            if at - last >= STEP:
                ends.append(at)
                last = at
        if not ends or ends[-1] != at:
            ends.append(at)
        return reader.header.header_size, ends


def writer(src, dst, rate, hsize, ends):
    """Reveal src's records in dst at `rate` bytes/s: bytes first, then the cursor."""
    fd_in = os.open(src, os.O_RDONLY)
    fd = os.open(dst, os.O_WRONLY)
    os.pwrite(fd, os.pread(fd_in, hsize, 0), 0)
    os.pwrite(fd, struct.pack("<Q", hsize), F.TL_CURSOR_OFFSET)
    t0 = time.monotonic()
    done = hsize
    for end in ends:
        os.pwrite(fd, os.pread(fd_in, end - done, done), done)
        os.pwrite(fd, struct.pack("<Q", end), F.TL_CURSOR_OFFSET)
        done = end
        wait = t0 + (done - hsize) / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    os.close(fd)
    os.close(fd_in)


def live(dst, block=None):
    """The live decode of dst: starts now, finishes when a line comes on stdin (the writer is
    done and END appended); prints the monotonic time it finished and the launches.
    `block`: SUBMISSION records per block of a decode in blocks (decoders/session/shard.py
    BLOCK), to compare sizes in one run."""
    from tracer.live import LiveDecode
    if block:
        from decoders.session import shard
        shard.BLOCK = block

    class Out:
        def __init__(self, path):
            self.path, self.fd = path, os.open(path, os.O_RDWR)

        def __fspath__(self):
            return self.path

        def __str__(self):
            return self.path
    decode = LiveDecode(Out(dst), brief=BRIEF).start()
    print("ready", flush=True)
    sys.stdin.readline()
    model = decode.finish()
    print(json.dumps({"finished": time.monotonic(), "launches": len(model.launches) if model
                      else None, "split": getattr(model, "split", None)}), flush=True)


def offline(path):
    from decoders.session import decode_capture
    t0 = time.monotonic()
    model = decode_capture(path, brief=BRIEF)
    print(json.dumps({"wall_s": round(time.monotonic() - t0, 3), "launches": len(model.launches),
                      "split": model.split}), flush=True)


def _cpu(usage):
    return round(usage.ru_utime + usage.ru_stime, 2)


def rep(raw, rate, hsize, ends, work, block=None):
    """One live decode against a writer at `rate`, then one offline decode of the same bytes."""
    dst = os.path.join(work, "live.tlc")
    open(dst, "wb").close()
    me = [sys.executable, os.path.abspath(__file__)]
    dec = subprocess.Popen(me + ["--live", dst] + ([str(block)] if block else []),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, cwd=ROOT)
    dec.stdout.readline()                   # imported and started, as before a program writes
    t0 = time.monotonic()
    w = subprocess.run(me + ["--writer", raw, dst, str(rate), str(hsize),
                             ",".join(map(str, ends))], cwd=ROOT)
    t_w = time.monotonic() - t0
    from decoders.capture.writer import append_end
    append_end(dst, w.returncode)
    dec.stdin.write("finished\n")
    dec.stdin.flush()
    got = json.loads(dec.stdout.readline())
    _, status, usage = os.wait4(dec.pid, 0)
    row = {"rate_mb_s": rate / 1e6, "writer_s": round(t_w, 3),
           "live_done_s": round(got["finished"] - t0, 3),
           "tail_s": round(got["finished"] - t0 - t_w, 3), "live_cpu_s": _cpu(usage),
           "launches": got["launches"], "split": got["split"]}
    t1 = time.monotonic()
    p = subprocess.Popen(me + ["--offline", raw], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    off = json.loads(p.stdout.readline())
    _, status, usage = os.wait4(p.pid, 0)
    row.update(offline_wall_s=round(time.monotonic() - t1, 3), offline_decode_s=off["wall_s"],
               offline_cpu_s=_cpu(usage), offline_launches=off["launches"],
               offline_split=off["split"])
    # the live decode's length from the first byte written, against the offline decode's
    row["live_vs_offline"] = round(row["live_done_s"] / off["wall_s"], 3)
    return row


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        src, dst, rate, hsize, ends = sys.argv[2:7]
        return writer(src, dst, float(rate), int(hsize), [int(x) for x in ends.split(",")])
    if len(sys.argv) > 1 and sys.argv[1] == "--live":
        return live(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
    if len(sys.argv) > 1 and sys.argv[1] == "--offline":
        return offline(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("capture")
    ap.add_argument("--rate", type=float, nargs="+", default=[45.0], help="MB/s")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--block", type=int, help="SUBMISSION records per block of the live "
                    "decode in blocks (default: decoders/session/shard.py BLOCK)")
    ap.add_argument("--out")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="live-sim-") as work:
        raw = os.path.join(work, "raw.tlc")
        expand(args.capture, raw)
        hsize, ends = boundaries(raw)
        rows = []
        for r in range(args.reps):
            for rate in args.rate:
                row = rep(raw, rate * 1e6, hsize, ends, work, args.block)
                row["block"] = args.block
                row["rep"] = r + 1
                rows.append(row)
                print(json.dumps(row), flush=True)
        size = os.path.getsize(raw)
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "capture": args.capture, "raw_bytes": size,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
           "git": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                 capture_output=True, text=True).stdout.strip(),
           "runs": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
