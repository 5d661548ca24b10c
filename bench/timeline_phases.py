"""The timeline's cost after the decode, with and without its worker processes, in one
run: CAPTURE decoded once as `trace-decode timeline` decodes it (every list, in blocks
where the CPUs allow), then write_timeline to /dev/null REPS times each way, alternated:
its views made in this process (decoders/timeline.py _each) and by worker processes
(tracer/parallel.py map_ranges, what the CLI passes). One JSON line per capture on stdout:
the decode's wall seconds, each write's, and the events written.

    python3 bench/timeline_phases.py [--reps N] CAPTURE [CAPTURE ...]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def one(path, reps):
    import decoders.timeline as tl
    from decoders.session import decode_capture
    from tracer.parallel import jobs, map_ranges
    t = time.perf_counter()
    model = decode_capture(path, full_blocks=True)
    row = {"capture": path, "split": getattr(model, "split", None),
           "decode_s": round(time.perf_counter() - t, 3), "workers": jobs(),
           "serial_s": [], "workers_s": []}
    for _ in range(reps):
        for key, each in (("serial_s", tl._each), ("workers_s", map_ranges)):
            t = time.perf_counter()
            with open(os.devnull, "w") as out:
                tl.write_timeline(model, out, None, each)
            row[key].append(round(time.perf_counter() - t, 3))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("captures", nargs="+")
    a = ap.parse_args()
    for path in a.captures:
        print(json.dumps(one(path, a.reps)), flush=True)


if __name__ == "__main__":
    main()
