"""Where the wall time of `trace-decode --json CAPTURE` goes, phase by phase, in one run:
the decode as the CLI makes it (decode_capture full_blocks=True), then render_json to
/dev/null (without --all-fields, as the CLI). For a decode in blocks (decoders/session/shard.py) the decode is cut further:
counting the SUBMISSION records (cuts), this process's skim while the blocks decode, the
wait for the last blocks, their merge, and the end (_finish). Wall seconds per phase,
and CPU seconds of this process and of its children, as one JSON line on stdout.

    python3 bench/json_phases.py CAPTURE [CAPTURE ...]

Each phase is timed by wrapping the function that makes it (module attributes looked up
at call time, so the compiled modules see the wrappers too)."""
import json
import os
import resource
import sys
import time


def _cpu():
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def _timed(module, name, phases, label):
    fn = getattr(module, name)

    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            phases[label] = phases.get(label, 0.0) + time.perf_counter() - t0
    setattr(module, name, wrapper)


def one(path):
    from decoders.session import decode_capture
    from decoders.session import shard
    from tracer.report_json import render_json
    phases = {}
    _timed(shard, "cuts", phases, "cuts")
    _timed(shard, "merge", phases, "merge")
    _timed(shard, "_finish", phases, "finish")
    follower = shard._Follower
    marks = {}

    class Timed(follower):      # the first next(): this process's skim has ended
        def next(self, wait=None):
            marks.setdefault("skim_end", time.perf_counter())
            return super().next(wait)
    shard._Follower = Timed
    t0 = time.perf_counter()
    c0 = _cpu()
    model = decode_capture(path, full_blocks=True)
    t1 = time.perf_counter()
    with open(os.devnull, "w") as out:
        render_json(model, out, all_fields=False)     # the CLI's default
    t2 = time.perf_counter()
    c2 = _cpu()
    shard._Follower = follower
    out = {"capture": path, "split": model.split, "launches": len(model.launches),
           "decode_s": round(t1 - t0, 3), "render_s": round(t2 - t1, 3),
           "cpu_self_s": round(c2[0] - c0[0], 3), "cpu_children_s": round(c2[1] - c0[1], 3)}
    for k, v in phases.items():
        out[k + "_s"] = round(v, 3)
    if "skim_end" in marks:
        out["skim_s"] = round(marks["skim_end"] - t0 - phases.get("cuts", 0.0), 3)
        out["wait_blocks_s"] = round(t1 - marks["skim_end"] - phases.get("merge", 0.0)
                                     - phases.get("finish", 0.0), 3)
    return out


def main(argv):
    for path in argv:
        print(json.dumps(one(path)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
