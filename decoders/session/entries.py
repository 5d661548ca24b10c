"""One record -> the model's entry for it (an ioctl's summary, a submission's dict and the
bytes it is spilled as, an API call as kept), and a decoder's problem tied to its record."""
import re

from decoders.capture.reader import _FAST as _FAST_BODIES, cstr
from decoders.errors import CaptureError, TraceLaunchError
from decoders.gpfifo import segment_brief
from decoders.spill import SpillList


def _ioctl_path(b):
    return cstr(b.path)


def _ioctl_entry(rec, branch):
    from decoders import ioctl as I
    b = rec.body
    path = _ioctl_path(b)
    entry = {
        "index": rec.index, "pid": rec.pid, "tid": rec.tid, "fd": b.fd, "path": path,
        "request": b.request, "escape": I.escape_name(b.request, path),
        "ret": b.ret, "errno": b.err, "t_start": rec.t_start, "t_end": rec.t_end,
        "complete": rec.complete,
    }
    try:
        entry["summary"] = I.summarize(b, branch)
    except TraceLaunchError as exc:
        entry["summary"] = f"{entry['escape']} (not decoded: {exc})"
    entry["_body"] = b
    return entry


def _opaque(entry, body, branch, tree):
    """A control no public header defines: its size and the words that match the object
    tree, marked as guesses (decoders/rm/opaque.py), in entry["opaque"] and the summary."""
    from decoders import ioctl as I
    from decoders.rm.opaque import opaque_entry
    try:
        info = I._decode(body, branch)[1].info
        op = opaque_entry(info, body, tree)
    except TraceLaunchError:        # a damaged record: its summary already says so
        return
    if op is None:
        return
    entry["opaque"] = op
    hits = ", ".join(f"+{g['offset']:#x} {g['guess']}" for g in op["guesses"][:4])
    entry["summary"] += f" [opaque {op['size']} B" + (f"; guess: {hits}" if hits else "") + "]"


_GP_KEYS = ("kind", "address", "length_bytes", "level", "sync", "opcode", "operand")
_GP_ENTRY = {}      # raw GP entry -> its JSON keys (decode_entry is a pure function of it)


def _gp_entry(raw):
    seg = segment_brief(raw)
    if seg is not None:     # the usual entry: no full decode (same keys, same values)
        kind, address, length, level, sync = seg
        return {"raw": raw, "kind": kind, "address": address, "length_bytes": length,
                "level": level, "sync": sync}
    e = _GP_ENTRY.get(raw)
    if e is None:
        from decoders.gpfifo import decode_entry
        try:
            d = decode_entry(raw)
        except TraceLaunchError:
            d = {}
        e = tuple((k, v) for k, v in d.items() if k in _GP_KEYS)
        if len(_GP_ENTRY) >= 4096:
            _GP_ENTRY.clear()
        _GP_ENTRY[raw] = e
    out = {"raw": raw}
    out.update(e)
    return out


def _submission_entry(rec):
    return _submission_dict(rec.index, rec.pid, rec.tid, rec.t_start, rec.body)


# A spilled submission is its record's body bytes, parsed again when read: the same dict
# (the parse is the one the reader made), and nothing to build or marshal item by item.
_SUBMISSION_BODY = _FAST_BODIES.get("SUBMISSION")


def _submission_raw(rec):
    return (rec.index, rec.pid, rec.tid, rec.t_start, rec.raw)


def _submission_load(t):
    index, pid, tid, t_start, raw = t
    return _submission_dict(index, pid, tid, t_start, _SUBMISSION_BODY(raw)[0])


def _submission_dict(index, pid, tid, t_start, b):
    # "hex" holds the bytes; the JSON view renders bytes as hex (tracer/report.py _clean).
    return {
        "index": index, "pid": pid, "tid": tid, "t": t_start,
        "token": b["token"], "hClient": b["hClient"], "channel": b["hChannel"],
        "class": b["hClass"], "gp_put_prev": b["gp_put_prev"], "gp_put": b["gp_put"],
        "gp_entries": b["gp_entries"], "flags": b["flags"], "gpfifo_va": b["gpfifo_va"],
        "doorbell_addr": b["doorbell_addr"], "rip": b["rip"], "lost": b["lost"],
        "entries": [_gp_entry(raw) for raw in b["entries"]],
        "segments": [{"va": s["va"], "size": s["size"], "flags": s["flags"],
                      "hex": bytes(s["data"])} for s in b["segments"]],
    }



def _append_call(calls, call, kernel):
    """calls.append(call.to_json() + its "kernel" when kernel is (name,)); a SpillList gets
    the compact form and makes the dict only when the item is read."""
    compact = call.compact() if isinstance(calls, SpillList) else None
    if compact is not None:
        calls.append_dumped((compact, kernel))
        return
    d = call.to_json()
    if kernel:
        d["kernel"] = kernel[0]
    if isinstance(calls, SpillList):
        calls.append_dumped((None, d))
    else:
        calls.append(d)



def _at_record(exc, index, offset):
    """A decoder's problem that names no file offset, tied to its record's (the CLI's one
    line per problem always says where in the capture to look, STYLE 15)."""
    if getattr(exc, "offset", None) is not None or offset is None:
        return exc
    err = CaptureError(f"record {index} at offset {offset:#x}: {exc}")
    err.offset, err.record = offset, index
    return err


_RECORD_REF = re.compile(r"\brecord (\d+)\b")


def _launch_problems(model, result, record_offsets=None, since=0):
    """The launch decoder's problems (from the `since`th on: a block of a sharded decode
    leaves its warm-up's out) into model.problems, tied to their records' offsets."""
    for p in result.problems[since:]:
        # launch problems say "record N (channel ...)"; their offsets are pushbuffer offsets
        m = _RECORD_REF.search(str(p))
        off = (record_offsets or {}).get(int(m.group(1))) if m else None
        if off is not None and getattr(p, "offset", None) is None:
            err = CaptureError(f"{p} (record at offset {off:#x})")
            err.offset, err.record = off, int(m.group(1))
            p = err
        model.problems.append(p)




FAILED_KEPT = 1000      # failed API calls kept for the report (all are counted)


def _failed_call(model, call, kernel):
    """A call that returned an error: counted, and the first FAILED_KEPT kept as JSON."""
    model.failed_call_count += 1
    if len(model.failed_calls) < FAILED_KEPT:
        d = call.to_json()
        if kernel:
            d["kernel"] = kernel[0]
        model.failed_calls.append(d)
