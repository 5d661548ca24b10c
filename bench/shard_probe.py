"""Would the front's submission decode shard by time? (A design probe for issue 24's whole-
job target: the default report's tail after a long job is the decode of its steps, spread
over two processes; a third and fourth would need the SUBMISSION records cut into blocks,
each decoded by a fresh decoder that starts some submissions early to warm up.)

For each cut point R (every --every SUBMISSION records), a fresh SubmissionDecoder is fed
from R - W on, handed only each channel stream's byte count there (the counter that the
launches' pushbuffer and semaphore offsets come from), and the events it hands its sink
(decoders/session/front.py Recorder) for the submissions from R on are compared with those
of the one decoder that saw everything: launch serials renumbered from the cut, the
submission counter left out, and the SINK/LATE events of launches that arrived before R
dropped on both sides. Prints, per warm-up W, how many cut points agree on the next --span
submissions, and the first difference of one that does not. Memory: every event of the
whole decode is kept (~0.8 GB for a 500-step transformer capture).

    python3 bench/shard_probe.py CAPTURE [--warmup 0 1 4 16 64] [--every 2000] [--span 500]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from decoders.capture.reader import CaptureReader, open_capture  # noqa: E402
from decoders.session.front import ARRIVED, LATE, SINK, Recorder  # noqa: E402
from decoders.session.launches import gpu_family  # noqa: E402
from decoders.submissions import SubmissionDecoder  # noqa: E402


def submissions(path):
    with open_capture(path) as f:
        reader = CaptureReader(f, name=path)
        gpu = gpu_family(reader.meta)
        subs = [(r.index, r.body, r.pid) for r in reader.records(only=("SUBMISSION",))
                if r.type == "SUBMISSION"]
    return gpu, subs


def events(gpu, subs, start, stop, positions=None, snapshots=None):
    """[(record index, events)] of a fresh decoder fed subs[start:stop]. `positions`: each
    channel stream's byte count where it starts ({key: (position, host class)}), the one
    counter a shard would be handed; `snapshots`: a set of indices into subs at which the
    streams' positions are recorded, into snapshots[i] (the whole decode's)."""
    rec = Recorder()
    dec = SubmissionDecoder(gpu=gpu, sink=rec.sink, arrived=rec.arrived, late=rec.late,
                            sync=rec.sync, copy=rec.copy)
    rec.decoder = dec
    for key, (position, host) in (positions or {}).items():
        st = dec._streams[key] = dec._stream_cls(gpu=gpu, host_class=host)
        st.position = position
        dec.channels[key] = {"pid": key[0], "token": key[3], "hChannel": key[2],
                             "hClient": key[1], "host_class": st.host_class, "submissions": 0,
                             "bytes": 0, "binding": st.binding}
        dec._seen_problems[key] = 0
    out = []
    for n, (index, body, pid) in enumerate(subs[start:stop], start):
        if snapshots is not None and n in snapshots:
            snapshots[n] = {k: (st.position, st.host_class) for k, st in dec._streams.items()}
        key = rec.key = (pid, body["hClient"], body["hChannel"], body["token"])
        ch = dec.decoder(pid)._channels.get(key)
        last = ch.last_launch if ch is not None else None
        rec.had = len(last._summary["semaphores"]) if last is not None else None
        dec.feed(index, body, pid)
        out.append((index, rec.take()))
    return out


def normal(groups):
    """The events with launch serials renumbered from the first one met; the record
    indices the summaries carry dropped (a fresh decoder counts submissions from 0)."""
    seen = {}

    def serial(n):
        return seen.setdefault(n, len(seen))
    out = []
    for index, evs in groups:
        norm = []
        for ev in evs:
            if ev[0] == ARRIVED:
                s = dict(ev[2][0])
                s.pop("submission_index", None)
                rest = list(ev[2][1:])
                rest[3] = None      # its submission_index (model._launch_dump): a counter
                norm.append((ARRIVED, serial(ev[1]), (s,) + tuple(rest), ev[3], ev[4]))
            elif ev[0] in (SINK, LATE):
                norm.append((ev[0], serial(ev[1])) + tuple(ev[2:]))
            else:
                norm.append(ev)
        out.append((index, norm))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--warmup", type=int, nargs="+", default=[0, 1, 4, 16, 64])
    ap.add_argument("--every", type=int, default=2000)
    ap.add_argument("--span", type=int, default=500)
    args = ap.parse_args()
    gpu, subs = submissions(args.capture)
    cuts = list(range(args.every, len(subs) - args.span, args.every))
    snaps = {r - w: None for r in cuts for w in args.warmup}
    whole = events(gpu, subs, 0, len(subs), snapshots=snaps)
    print(f"{args.capture}: {len(subs)} SUBMISSION records, {len(cuts)} cut points")
    for w in args.warmup:
        agree, first = 0, None
        for r in cuts:
            # SINK/LATE of launches that arrived before R name serials the other side never
            # had: both sides drop them
            mine = events(gpu, subs, r - w, r + args.span, positions=snaps[r - w])[w:]
            theirs = whole[r:r + args.span]
            old_mine = {ev[1] for _, evs in events(gpu, subs, r - w, r, positions=snaps[r - w])
                        for ev in evs if ev[0] == ARRIVED}
            a = normal([(i, [e for e in evs if not (e[0] in (SINK, LATE) and e[1] in old_mine)])
                        for i, evs in mine])
            b = normal([(i, [e for e in evs if not (e[0] in (SINK, LATE) and
                                                    e[1] < _first_serial(theirs))])
                        for i, evs in theirs])
            if a == b:
                agree += 1
            elif first is None:
                first = _diff(r, a, b)
        print(f"  warm-up {w:>4}: {agree}/{len(cuts)} cut points agree"
              + (f"; first difference: {first}" if first else ""))


def _first_serial(groups):
    for _, evs in groups:
        for ev in evs:
            if ev[0] == ARRIVED:
                return ev[1]
    return 1 << 62


def _diff(r, a, b):
    for (ia, ea), (ib, eb) in zip(a, b):
        if ea != eb:
            for x, y in zip(ea, eb):
                if x != y:
                    if x[0] == ARRIVED and y[0] == ARRIVED:
                        keys = [k for k in set(x[2][0]) | set(y[2][0])
                                if x[2][0].get(k) != y[2][0].get(k)]
                        if keys:
                            k = sorted(keys)[0]
                            xv, yv = x[2][0].get(k), y[2][0].get(k)
                            if isinstance(xv, list) and isinstance(yv, list):
                                for m, (p, q) in enumerate(zip(xv, yv)):
                                    if p != q:
                                        sub = sorted(kk for kk in set(p) | set(q)
                                                     if p.get(kk) != q.get(kk))
                                        return (f"cut {r}, record {ia}: {k}[{m}] keys {sub}: "
                                                f"{[p.get(kk) for kk in sub]} vs "
                                                f"{[q.get(kk) for kk in sub]}")
                                return f"cut {r}, record {ia}: {k} lengths {len(xv)} vs {len(yv)}"
                            return (f"cut {r}, record {ia}: launch summary keys "
                                    f"{sorted(keys)[:6]}: {k} {str(x[2][0].get(k))[:200]} vs "
                                    f"{str(y[2][0].get(k))[:200]}")
                        parts = [k for k in range(len(x[2])) if x[2][k] != y[2][k]]
                        return (f"cut {r}, record {ia}: launch parts {parts}: "
                                f"{str([x[2][k] for k in parts])[:150]} vs "
                                f"{str([y[2][k] for k in parts])[:150]}; latch/last "
                                f"{x[3:]} vs {y[3:]}")
                    if x[0] == y[0] and isinstance(x[1], dict) and isinstance(y[1], dict):
                        keys = sorted(k for k in set(x[1]) | set(y[1]) if x[1].get(k) != y[1].get(k))
                        return (f"cut {r}, record {ia}: event {x[0]} keys {keys}: "
                                f"{[str(x[1].get(k))[:80] for k in keys]} vs "
                                f"{[str(y[1].get(k))[:80] for k in keys]}")
                    return f"cut {r}, record {ia}: {str(x)[:120]} vs {str(y)[:120]}"
            return (f"cut {r}, record {ia}: {len(ea)} events vs {len(eb)}: "
                    f"{[str(e)[:60] for e in ea]} vs {[str(e)[:60] for e in eb]}")
    return f"cut {r}: lengths {len(a)} vs {len(b)}"


if __name__ == "__main__":
    main()
