"""`--cost`: the anatomy of launch overhead, measured per API call.

For each bracketed call: time inside it (API_ENTER to API_EXIT), time from its entry to
its first doorbell, the doorbells it rang, the GPFIFO entries and pushbuffer bytes they
handed over, the method headers and method writes in those bytes, and the kernel QMDs
decoded from them. Then the same summed per call name, so the corpus shows in numbers
why a graph replay costs fewer submissions than the launches it stands for.

A separate streaming pass over the capture (one StreamDecoder per channel, so a method
continued across segments is counted once); memory stays flat.
"""
import statistics
from collections import defaultdict

from decoders.capture.reader import CaptureReader, open_capture
from decoders.cuda.calls import ApiCalls
from decoders.errors import TraceLaunchError
from decoders.pushbuf import StreamDecoder


class CallCost:
    __slots__ = ("call", "doorbells", "entries", "pb_bytes", "headers", "writes",
                 "first_doorbell", "kernels")

    def __init__(self, call):
        self.call = call
        self.doorbells = self.entries = self.pb_bytes = self.headers = self.writes = 0
        self.first_doorbell = None
        self.kernels = 0

    def row(self):
        c = self.call
        inside = (c.t_end - c.t_start) if c.t_end is not None else None
        to_db = (self.first_doorbell - c.t_start) if self.first_doorbell is not None else None
        return {"index": c.index, "pid": c.pid, "tid": c.tid, "call": c.name,
                "result": c.result_name, "ns_inside": inside, "ns_to_doorbell": to_db,
                "doorbells": self.doorbells, "gpfifo_entries": self.entries,
                "pushbuffer_bytes": self.pb_bytes, "method_headers": self.headers,
                "method_writes": self.writes, "kernels": self.kernels}


def measure(path, gpu="hopper", launches=None):
    """{'calls': [row], 'by_name': {name: summary}, 'outside': {...}} for a capture.
    `launches` (decoded Launch objects) adds the kernel QMDs per call."""
    stream = open_capture(path)
    try:
        reader = CaptureReader(stream, name=str(path))
        api = ApiCalls()
        costs = {}
        decoders = {}
        outside = {"doorbells": 0, "gpfifo_entries": 0, "pushbuffer_bytes": 0,
                   "method_headers": 0, "method_writes": 0}
        sub_to_cost = {}
        for rec in reader.records():
            t = rec.type
            if t == "API_ENTER":
                costs[rec.index] = CallCost(api.enter(rec))
            elif t == "API_EXIT":
                api.exit(rec)
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
                call = api.current(rec.pid, rec.tid)
                cc = costs.get(call.index) if call is not None else None
                if cc is None:
                    outside["doorbells"] += 1
                    outside["gpfifo_entries"] += len(b.entries)
                    outside["pushbuffer_bytes"] += nbytes
                    outside["method_headers"] += headers
                    outside["method_writes"] += writes
                    continue
                sub_to_cost[rec.index] = cc
                cc.doorbells += 1
                cc.entries += len(b.entries)
                cc.pb_bytes += nbytes
                cc.headers += headers
                cc.writes += writes
                if cc.first_doorbell is None:
                    cc.first_doorbell = rec.t_start
    finally:
        stream.close()
    for launch in launches or ():
        cc = sub_to_cost.get(launch.record_index)
        if cc is not None and launch.kernel:
            cc.kernels += 1
    rows = [costs[i].row() for i in sorted(costs)]
    by_name = defaultdict(list)
    for r in rows:
        by_name[r["call"]].append(r)
    summary = {}
    for name, rs in by_name.items():
        def med(key):
            vals = [r[key] for r in rs if r[key] is not None]
            return statistics.median(vals) if vals else None
        summary[name] = {"calls": len(rs), "median_ns_inside": med("ns_inside"),
                         "median_ns_to_doorbell": med("ns_to_doorbell"),
                         **{k: sum(r[k] for r in rs) for k in (
                             "doorbells", "gpfifo_entries", "pushbuffer_bytes",
                             "method_headers", "method_writes", "kernels")}}
    return {"calls": rows, "by_name": summary, "outside_calls": outside}


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
