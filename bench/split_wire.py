"""What a launch costs on the split decode's wire (decoders/session/split.py, front.py), per
launch, on one capture: the front's event (front.Recorder.arrived itself: model._launch_dump
and the summary's copy), marshal.dumps of the events in groups of front.FLUSH_GROUPS, and
in the decoding process marshal.loads and model._launch_load. The launches are those a
decode in one process makes, without what its sink adds (attribution, api_call, resolved),
as the front sends them. Best of --reps, the collector off as in the decode.

    python3 bench/split_wire.py CAPTURE [--reps 3] [--limit 20000]
"""
import argparse
import gc
import json
import marshal
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from decoders.session import decode_capture  # noqa: E402
from decoders.session.front import FLUSH_GROUPS, Recorder  # noqa: E402
from decoders.session.model import _launch_load  # noqa: E402

SINK_KEYS = ("attribution", "api_call", "resolved")


class _NoChannels:
    """What Recorder.arrived asks of the SubmissionDecoder (whether a launch is its channel's
    last): here none is, as for all but one launch of a channel in a decode."""
    _channels = {}

    def decoder(self, pid):
        return self


def best(fn, reps):
    t = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        t = dt if t is None else min(t, dt)
    return t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--limit", type=int, default=20000)
    args = ap.parse_args()
    model = decode_capture(args.capture, keep=None, split=False)
    gc.disable()
    launches = list(model.launches)[:args.limit]
    for launch in launches:
        for key in SINK_KEYS:
            launch._summary.pop(key, None)

    def events():
        rec = Recorder()
        rec.decoder = _NoChannels()
        for launch in launches:
            rec.arrived(launch)
        return rec.take()

    t_event, ev = best(events, args.reps)
    groups = [ev[i:i + FLUSH_GROUPS] for i in range(0, len(ev), FLUSH_GROUPS)]
    t_dumps, blobs = best(lambda: [marshal.dumps(g) for g in groups], args.reps)
    t_loads, back = best(lambda: [marshal.loads(b) for b in blobs], args.reps)
    flat = [e for g in back for e in g]
    t_load, _ = best(lambda: [_launch_load(e[2]) for e in flat], args.reps)
    n = len(launches)
    us = lambda t: round(t / n * 1e6, 2)    # noqa: E731
    print(json.dumps({
        "capture": os.path.abspath(args.capture), "python": sys.version.split()[0],
        "launches": n, "bytes_per_launch": round(sum(map(len, blobs)) / n),
        "us_per_launch": {"front_event": us(t_event), "marshal_dumps": us(t_dumps),
                          "marshal_loads": us(t_loads), "launch_load": us(t_load)}}, indent=1))


if __name__ == "__main__":
    main()
