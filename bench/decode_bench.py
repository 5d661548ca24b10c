"""Launches decoded per second on real H100 capture data (one core).

1. captures/launch-loop-10k: a real recording of 100 + 10,000 cuLaunchKernel of an empty
   kernel; every SUBMISSION record (all channels) is read into memory first, then timed
   through decode_submissions. This is the headline figure.
2. captures/builtin-vadd replayed: every submission of the capture
up to the MARK BEGIN is decoded once (SET_OBJECT, module uploads, the first launch: the
state a process has before it launches), then the real launch submission between the
marks (one GP entry, 1560 bytes, channel token 0xa) is replayed N times through the same
decoder, exactly as recorded (same VAs, same QMD ring slots). The output says so.

Each cuLaunchKernel on the H100 schedules two QMDs (a GRID_NULL QMD and the kernel's own,
h100-measured.md 1), so QMDs = 2 x launches. Timed: decode_submissions' full path (method
stream, I2M reconstruction, QMD decode with every field, cbank0 driver constants and
parameters, semaphores); node trees are built lazily and not counted.

usage: python3 bench/decode_bench.py [launches] [--profile]
"""
import cProfile
import gc
import os
import pstats
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from decoders.capture.reader import read_capture  # noqa: E402
from decoders.launch import SubmissionDecoder  # noqa: E402

CAPTURE = os.path.join(ROOT, "captures", "builtin-vadd", "capture.tlc.gz")


def load(path=CAPTURE):
    """(submissions before the BEGIN mark, the marked launch submission(s))."""
    _, records = read_capture(path)
    begin = next(r.index for r in records if r.type == "MARK" and r.body.kind == 1)
    end = next(r.index for r in records if r.type == "MARK" and r.body.kind == 2)
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"]
    before = [s for s in subs if s[0] < begin]
    marked = [s for s in subs if begin < s[0] < end]
    return before, marked


def run(before, marked, launches):
    dec = SubmissionDecoder(gpu="hopper")
    for index, body, pid in before:
        dec.feed(index, body, pid)
    n0 = len(dec.launches)
    t0 = time.perf_counter()
    for k in range(launches):
        for index, body, pid in marked:
            dec.feed(index, body, pid)
    dt = time.perf_counter() - t0
    result = dec.finish()
    return dt, result, len(result.launches) - n0


LOOP = os.path.join(ROOT, "captures", "launch-loop-10k", "capture.tlc.gz")


def run_loop(path=LOOP, repeat=3, materialize=False):
    """(seconds, result) for decode_submissions over a whole real capture's submissions."""
    from decoders.launch import decode_submissions
    _, records = read_capture(path)
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"]
    best, result = None, None
    for _ in range(repeat):
        result = None            # the previous repeat's launches must not stay alive
        gc.collect()
        t0 = time.perf_counter()
        result = decode_submissions(subs, gpu="hopper")
        if materialize:
            for l in result.launches:
                l.summary["qmd_fields"]
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, result, len(subs)


def main_loop(repeat=3):
    if not os.path.exists(LOOP):
        print("captures/launch-loop-10k not present")
        return None
    dt, result, nsubs = run_loop(repeat=repeat)
    dtm, _, _ = run_loop(repeat=repeat, materialize=True)
    kernels = len(result.kernels)
    assert not result.problems, result.problems[:3]
    print(f"real: captures/launch-loop-10k, {nsubs} submissions, {kernels} kernel launches "
          f"({len(result.launches)} QMDs)")
    print(f"launches/s: {kernels / dt:,.0f}  (best of {repeat}, {dt:.3f} s)")
    print(f"launches/s with every summary's qmd_fields materialized: {kernels / dtm:,.0f}")
    return kernels / dt


def main(launches=20000, repeat=3, profile=False):
    before, marked = load()
    nbytes = sum(s.size for _, b, _ in marked for s in b.segments)
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        run(before, marked, launches)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return None
    best = None
    for _ in range(repeat):
        dt, result, nqmd = run(before, marked, launches)
        best = dt if best is None else min(best, dt)
    assert not result.problems, result.problems[:3]
    assert nqmd == 2 * launches
    kernels = sum(1 for l in result.launches[-nqmd:] if l.summary["kernel"])
    assert kernels == launches
    print(f"real-replayed: captures/builtin-vadd launch submission (record {marked[0][0]}, "
          f"{nbytes} bytes) replayed {launches} times after the capture's "
          f"{len(before)} earlier submissions (no long real capture yet)")
    print(f"{launches} launches ({nqmd} QMDs) in {best:.3f} s, best of {repeat}")
    print(f"launches/s: {launches / best:,.0f}")
    print(f"QMDs/s: {nqmd / best:,.0f}")
    print(f"MB/s: {launches * nbytes / best / 1e6:,.1f}")
    return launches / best


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--profile" not in sys.argv:
        main_loop()
    main(int(args[0]) if args else 20000, profile="--profile" in sys.argv)
