"""`--cost`: the anatomy of launch overhead, measured per API call.

For each bracketed call: time inside it (API_ENTER to API_EXIT), time from its entry to
its first doorbell, the doorbells it rang, the GPFIFO entries and pushbuffer bytes they
handed over, the method headers and method writes in those bytes, and the kernel QMDs
decoded from them. Then the same summed per call name, so the corpus shows in numbers
why a graph replay costs fewer submissions than the launches it stands for.

A separate streaming pass over the capture (one StreamDecoder per channel, so a method
continued across segments is counted once); memory stays flat: a call's row is made when it
returns, and the rows are sorted into call order on disk (decoders/extsort.py).
"""
import statistics
from collections import defaultdict

from decoders.capture.reader import CaptureReader, open_capture
from decoders.cuda.calls import ApiCalls
from decoders.errors import TraceLaunchError
from decoders.extsort import ExternalSort
from decoders.pushbuf import StreamDecoder
from decoders.spill import SpillList


class CallCost:
    """One bracketed call's numbers, from its entry on: the call itself is let go at its
    exit (an ApiCall holds its arguments' bytes: every call of a 500-step job, 590 MB)."""
    __slots__ = ("call", "index", "pid", "tid", "name", "result", "t_start", "t_end",
                 "doorbells", "entries", "pb_bytes", "headers", "writes", "first_doorbell",
                 "kernels")

    def __init__(self, call):
        self.call = call
        self.index, self.pid, self.tid, self.name = call.index, call.pid, call.tid, call.name
        self.doorbells = self.entries = self.pb_bytes = self.headers = self.writes = 0
        self.first_doorbell = None
        self.kernels = 0

    def close(self):
        """What the call says at its end (or at the capture's, for one that never returned)."""
        c, self.call = self.call, None
        self.result, self.t_start, self.t_end = c.result_name, c.t_start, c.t_end

    def row(self):
        inside = (self.t_end - self.t_start) if self.t_end is not None else None
        to_db = (self.first_doorbell - self.t_start) if self.first_doorbell is not None \
            else None
        return {"index": self.index, "pid": self.pid, "tid": self.tid, "call": self.name,
                "result": self.result, "ns_inside": inside, "ns_to_doorbell": to_db,
                "doorbells": self.doorbells, "gpfifo_entries": self.entries,
                "pushbuffer_bytes": self.pb_bytes, "method_headers": self.headers,
                "method_writes": self.writes, "kernels": self.kernels}


SUMS = ("doorbells", "gpfifo_entries", "pushbuffer_bytes", "method_headers", "method_writes",
        "kernels")


class _ByName:
    """A call name's calls: counted, summed, and their times kept for the medians (two
    numbers a call)."""

    def __init__(self):
        self.calls = 0
        self.sums = dict.fromkeys(SUMS, 0)
        self.inside, self.to_db = [], []

    def add(self, r):
        self.calls += 1
        for k in SUMS:
            self.sums[k] += r[k]
        if r["ns_inside"] is not None:
            self.inside.append(r["ns_inside"])
        if r["ns_to_doorbell"] is not None:
            self.to_db.append(r["ns_to_doorbell"])

    def summary(self):
        def med(vals):
            return statistics.median(vals) if vals else None
        return {"calls": self.calls, "median_ns_inside": med(self.inside),
                "median_ns_to_doorbell": med(self.to_db), **self.sums}


def measure(path, gpu="hopper", launches=None):
    """{'calls': [row], 'by_name': {name: summary}, 'outside': {...}} for a capture.
    `launches` (decoded Launch objects) adds the kernel QMDs per call. The rows come in
    call order, from a list that keeps its first few in memory and the rest on disk
    (decoders/spill.py); a row is made when its call returns."""
    # each kernel QMD's submission record, in record order (sorted on disk)
    kernel_subs = ExternalSort()
    for launch in launches or ():
        if launch.kernel and isinstance(launch.record_index, int):
            kernel_subs.add(launch.record_index, None)
    kernels = iter(kernel_subs)
    next_kernel = next(kernels, None)
    rows = ExternalSort()           # (call index, row): the calls in order
    by_name = defaultdict(_ByName)

    def done(cc):
        cc.close()
        r = cc.row()
        rows.add(r["index"], r)
    stream = open_capture(path)
    try:
        reader = CaptureReader(stream, name=str(path))
        api = ApiCalls()
        costs = {}                  # call index -> CallCost, from its entry to its exit
        decoders = {}
        outside = {"doorbells": 0, "gpfifo_entries": 0, "pushbuffer_bytes": 0,
                   "method_headers": 0, "method_writes": 0}
        for rec in reader.records():
            t = rec.type
            if t == "API_ENTER":
                costs[rec.index] = CallCost(api.enter(rec))
            elif t == "API_EXIT":
                c = api.exit(rec)
                cc = costs.pop(c.index, None) if c is not None else None
                if cc is not None:
                    done(cc)
            elif t == "SUBMISSION":
                b = rec.body
                dec = decoders.get((rec.pid, b.token))
                if dec is None:
                    dec = decoders[(rec.pid, b.token)] = StreamDecoder(gpu=gpu)
                headers = writes = nbytes = 0
                for seg in b.segments:
                    data = bytes(seg.data)
                    nbytes += len(data)
                    try:
                        for pkt in dec.feed(data, va=seg.va):
                            if not pkt.continued:
                                headers += 1
                            writes += len(pkt.data)
                    except TraceLaunchError:
                        pass
                qmds = 0
                while next_kernel is not None and next_kernel[0] <= rec.index:
                    qmds += next_kernel[0] == rec.index
                    next_kernel = next(kernels, None)
                call = api.current(rec.pid, rec.tid)
                cc = costs.get(call.index) if call is not None else None
                if cc is None:
                    outside["doorbells"] += 1
                    outside["gpfifo_entries"] += len(b.entries)
                    outside["pushbuffer_bytes"] += nbytes
                    outside["method_headers"] += headers
                    outside["method_writes"] += writes
                    continue
                cc.doorbells += 1
                cc.entries += len(b.entries)
                cc.pb_bytes += nbytes
                cc.headers += headers
                cc.writes += writes
                cc.kernels += qmds
                if cc.first_doorbell is None:
                    cc.first_doorbell = rec.t_start
        for cc in costs.values():       # calls that never returned
            done(cc)
    finally:
        stream.close()
        kernel_subs.close()
    calls = SpillList(ROWS_KEPT)
    for _, r in rows:
        calls.append(r)
        by_name[r["call"]].add(r)       # (named in call order, as the JSON lists them)
    return {"calls": calls, "by_name": {name: n.summary() for name, n in by_name.items()},
            "outside_calls": outside}


ROWS_KEPT = 256     # rows in memory (the text shows the first 40); the rest on disk


def render(cost, out, limit=40):
    """The text table: per call (first `limit`), then per call name."""
    w = out.write
    w("launch cost per API call (times in microseconds)\n")
    w(f"  {'record':>7} {'call':28} {'inside':>9} {'to bell':>9} {'bells':>5} {'GP':>4} "
      f"{'PB bytes':>9} {'hdrs':>5} {'writes':>6} {'QMDs':>4}\n")
    for r in cost["calls"][:limit]:
        w(f"  {r['index']:>7} {r['call'][:28]:28} {_us(r['ns_inside']):>9} "
          f"{_us(r['ns_to_doorbell']):>9} {r['doorbells']:>5} {r['gpfifo_entries']:>4} "
          f"{r['pushbuffer_bytes']:>9} {r['method_headers']:>5} {r['method_writes']:>6} "
          f"{r['kernels']:>4}\n")
    if len(cost["calls"]) > limit:
        w(f"  ... {len(cost['calls']) - limit} more calls (--json has every one)\n")
    w("per call name (medians of time, sums of the rest)\n")
    for name, s in sorted(cost["by_name"].items()):
        w(f"  {name:28} x{s['calls']:<6} {_us(s['median_ns_inside']):>9} "
          f"{_us(s['median_ns_to_doorbell']):>9} {s['doorbells']:>5} {s['gpfifo_entries']:>4} "
          f"{s['pushbuffer_bytes']:>9} {s['method_headers']:>5} {s['method_writes']:>6} "
          f"{s['kernels']:>4}\n")
    o = cost["outside_calls"]
    w(f"  {'(outside bracketed calls)':28} {'':7} {'':>9} {'':>9} {o['doorbells']:>5} "
      f"{o['gpfifo_entries']:>4} {o['pushbuffer_bytes']:>9} {o['method_headers']:>5} "
      f"{o['method_writes']:>6}\n")


def _us(ns):
    return "-" if ns is None else f"{ns / 1000:.1f}"
