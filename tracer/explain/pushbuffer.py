"""The story's pushbuffer section: the methods libcuda wrote for this launch, decoded with
the channel's subchannel bindings and grouped into steps (an inline-to-memory upload, a
PCAS send, a report semaphore, an inline QMD load, another method), each told in words."""
import re
from dataclasses import dataclass, field

from decoders.pick import full_summary as _summary
from tracer.explain.story import Line, Section, _hex, _t, _v, _where


# -- the pushbuffer ----------------------------------------------------------------------
_I2M_SETUP = ("OFFSET_OUT_UPPER", "OFFSET_OUT", "LINE_LENGTH_IN", "LINE_COUNT", "LAUNCH_DMA")


@dataclass
class _Call:
    offset: int         # the packet's stream offset
    va: int             # the packet's GPU VA (None when not known)
    subch: int
    cls: int
    method: int
    value: int
    name: str
    base: str
    assumed: bool
    fields: list        # [(field, value, display)]


@dataclass
class _Step:
    kind: str           # upload, pcas, report, inline-qmd, other
    va: int             # GPU VA of its first method header
    calls: list = field(default_factory=list)
    data: list = field(default_factory=list)
    regs: dict = field(default_factory=dict)


def _calls(rd):
    """The submission's method calls, decoded after the channel's earlier submissions (so
    a subchannel's class comes from the channel's own SET_OBJECT, and a method sequence
    that one submission leaves open goes on in the next), and {subchannel: the record of
    the earlier submission that first bound it by SET_OBJECT}.

    The earlier submissions only set the decoder's state, so they go through feed_raw
    without packets, as decode_capture feeds them: a segment shaped like one parsed before
    is not parsed again, and no method is named. SET_OBJECT is the one method that binds
    a subchannel (StreamDecoder._set_object): a subchannel's binding that is no longer
    `assumed` after a submission was bound by it there."""
    from decoders.methods import method_table
    from decoders.pushbuf import StreamDecoder
    from decoders.session import gpu_family
    sub = rd.sub
    dec = StreamDecoder(gpu=gpu_family(rd.model.meta), host_class=sub["class"])
    bound = {}
    for s in rd.channel_before():
        for g in s["segments"]:
            dec.feed_raw(bytes(g["hex"]), g["va"], packets=False)
        if len(bound) < len(dec.binding):
            for subch, (_, assumed) in dec.binding.items():
                if not assumed and subch not in bound:
                    bound[subch] = s["index"]
    out = []
    for g in sub["segments"]:
        for pkt in dec.feed(bytes(g["hex"]), g["va"]):
            for m, v in pkt.calls():
                name, _ = pkt.describe(m, v)
                cls = pkt.class_for(m)
                table = method_table(cls) if cls is not None else None
                mdef = table.get(m) if table is not None else None
                out.append(_Call(pkt.offset, pkt.va, pkt.subchannel, cls, m, v, name,
                                 name.split("(")[0], pkt.assumed,
                                 mdef.decode(v) if mdef is not None else []))
    return out, bound


def _steps(calls):
    """Method calls grouped into what they do: an inline-to-memory upload, a PCAS send, a
    report semaphore, an inline QMD load, or one other method."""
    steps, cur = [], None
    for c in calls:
        b = c.base
        if b in _I2M_SETUP:
            if cur is None or cur.kind != "upload" or cur.data:
                cur = _Step("upload", c.va)
                steps.append(cur)
            cur.calls.append(c)
            cur.regs[b] = c.value
        elif b == "LOAD_INLINE_DATA" and cur is not None and cur.kind == "upload":
            if not cur.data:
                cur.calls.append(c)
            cur.data.append(c.value)
        elif b == "LOAD_INLINE_QMD_DATA" and cur is not None and cur.kind == "inline-qmd":
            cur.data.append(c.value)
        elif b.startswith("SET_INLINE_QMD_ADDRESS") or b == "LOAD_INLINE_QMD_DATA":
            if cur is None or cur.kind != "inline-qmd" or cur.data:
                cur = _Step("inline-qmd", c.va)
                steps.append(cur)
            cur.calls.append(c)
            cur.regs[b] = c.value
            if b == "LOAD_INLINE_QMD_DATA":
                cur.data.append(c.value)
        elif b == "SEND_PCAS_A":
            cur = _Step("pcas", c.va, [c])
            steps.append(cur)
        elif b.startswith("SEND_SIGNALING_PCAS") and cur is not None and cur.kind == "pcas":
            cur.calls.append(c)
        elif b.startswith("SET_REPORT_SEMAPHORE"):
            if cur is None or cur.kind != "report" or b.endswith("_A"):
                cur = _Step("report", c.va)
                steps.append(cur)
            cur.calls.append(c)
            cur.regs[b] = c.value
        else:
            cur = _Step("other", c.va, [c])
            steps.append(cur)
    return steps


def _shifted(fields):
    """(value, shift) of the first field whose name says SHIFTEDn."""
    for name, value, _ in fields:
        m = re.search(r"SHIFTED(\d+)", name)
        if m:
            return value, int(m.group(1))
    return None, 0


def _upload_target(rd, dst, size, data):
    """What an upload to `dst` wrote, in words, and its link key (None: unknown)."""
    s = rd.s
    cb0 = next((c for c in s.get("constant_buffers") or [] if c.get("index") == 0), None)
    params = s.get("params") or {}
    if cb0 and dst == cb0["address"]:
        return "key", "cbank0", ["the driver's part of ", _t("constant bank 0"),
                                 " (blockDim, gridDim, ...)"]
    if cb0 and params and dst == cb0["address"] + params.get("offset", 0):
        return "key", "args", ["the kernel's arguments, at constant bank 0 + ",
                               _v("param-base", _hex(params["offset"]))]
    if dst == s.get("qmd_address"):
        return "key", "qmd", ["this launch's ", _t("QMD")]
    for n, other in rd.same_submission():
        o = _summary(other)
        if dst == o.get("qmd_address"):
            kind = (["the ", _t("GRID_NULL"), " QMD of launch ", _v(f"launch-{n}", n)]
                    if not o.get("kernel") else ["the QMD of launch ", _v(f"launch-{n}", n)])
            return "other", f"qmd-{n}", kind
    for k, sem in enumerate(s.get("semaphores") or []):
        if isinstance(sem, dict) and sem.get("address") == dst:
            value = int.from_bytes(bytes(data)[:4], "little") if data else None
            return "key", "semaphore", [
                f"the {sem.get('source')} ", _t("semaphore"), " of this launch, set to ",
                _v("semaphore-seed", value), " before the grid runs"]
    return None, None, [_where(rd.resolution(dst))]


def _pushbuffer(rd, facts):
    sub = rd.sub
    sec = Section("pushbuffer", "The pushbuffer: what libcuda wrote for this launch", "pushbuffer")
    if sub is None:
        return None
    if not sub["segments"]:
        sec.lines.append(Line(["(the capture holds no pushbuffer bytes for this submission)"]))
        return sec
    calls, bound = _calls(rd)
    facts["pushbuffer_bytes"] = sum(g["size"] for g in sub["segments"])
    for g in sub["segments"]:
        sec.lines.append(Line([
            "The ", _t("pushbuffer"), " segment at ", _v("segment", _hex(g["va"])), ", ",
            _v("segment-bytes", g["size"]), " bytes, ", _where(rd.resolution(g["va"])), ", holds ",
            _v("methods", len(calls)), " ", _t("method"), " calls."]))
    used = sorted({(c.subch, c.cls, c.assumed) for c in calls if c.method >= 0x100 and c.cls})
    for subch, cls, assumed in used:
        from decoders.methods import class_info
        info = class_info(cls)
        how = bound.get(subch)
        sec.lines.append(Line([
            "On ", _t("subchannel"), f" {subch}: class ", _v(f"subch-{subch}", f"{cls:#06x}"),
            f" ({info.name if info else '?'})",
            f", bound by SET_OBJECT in the channel's submission at record {how}"
            if how is not None else (" (assumed: no SET_OBJECT in view)" if assumed else "")],
            indent=1))
    steps = _steps(calls)
    mine = _my_steps(rd, steps)
    facts["pushbuffer_steps"] = []
    for st in mine:
        _step_lines(rd, sec, st, facts)
    left = len(steps) - len(mine)
    if left:
        sec.lines.append(Line([f"({left} more step(s) of this submission belong to other "
                               "launches; `trace-decode CAPTURE --launch N` lists every method)"]))
    sec.brief.insert(0, Line([_v("segment-bytes", facts["pushbuffer_bytes"]), " bytes, ",
                              _v("methods", len(calls)), " methods at ",
                              _v("segment", _hex(sub["segments"][0]["va"]))]))
    return sec


def _my_steps(rd, steps):
    """The steps of this launch: after the previous kernel QMD's SEND_PCAS in the same
    submission, up to this one's, then the semaphore steps that follow it."""
    shift = None
    others = {_summary(l).get("qmd_address") for _, l in rd.same_submission()
              if _summary(l).get("kernel")}
    mine_qmd = rd.s.get("qmd_address")
    start, end = 0, len(steps)
    for k, st in enumerate(steps):
        if st.kind != "pcas":
            continue
        value, shift = _shifted(st.calls[0].fields)
        qmd = value << shift if value is not None else None
        if qmd == mine_qmd:
            end = k + 1
            while end < len(steps) and steps[end].kind == "report":
                end += 1
            break
        if qmd in others:
            start = k + 1
    return steps[start:end]


def _step_lines(rd, sec, st, facts):
    """A step of the pushbuffer: a line that says what it does, a line of its methods by
    name, and a line for the picture's box."""
    seg = rd.sub["segments"][0]["va"]
    off = f"+{st.va - seg:#05x}" if st.va is not None and st.va >= seg else "+?"
    fact, said, brief = _STEP_TELLERS.get(st.kind, _other_step)(rd, st)
    facts["pushbuffer_steps"].append(fact)
    sec.lines.append(Line([off, " "] + said, indent=1))
    if st.kind != "other":
        sec.lines.append(Line(["   " + _methods_text(st.calls, len(st.data))], indent=2,
                              code=True))
    sec.brief.append(Line(brief, code=True))


_TARGETS = {"cbank0": "constant bank 0", "args": "the arguments", "qmd": "this QMD",
            "semaphore": "the release semaphore"}


def _upload_step(rd, st):
    r = st.regs
    dst = (r.get("OFFSET_OUT_UPPER", 0) << 32) | r.get("OFFSET_OUT", 0)
    size = r.get("LINE_LENGTH_IN", 0) * max(r.get("LINE_COUNT", 1), 1)
    data = b"".join(w.to_bytes(4, "little") for w in st.data)[:size]
    _, key, what = _upload_target(rd, dst, size, data)
    said = [_t("inline-to-memory"), ": ", _v(f"upload-{key or 'x'}-bytes", size), " bytes to ",
            _v(f"upload-{key or 'x'}", _hex(dst)), ": "] + what + ["."]
    label = _TARGETS.get(key) or (f"the QMD of launch {key[4:]}" if key and
                                  key.startswith("qmd-") else _hex(dst))
    brief = ["LOAD_INLINE_DATA ", _v(f"upload-{key or 'x'}-bytes", size), " B -> ", label]
    return {"kind": "upload", "dst": dst, "size": size, "target": key}, said, brief


def _pcas_step(rd, st):
    c = st.calls[0]
    value, shift = _shifted(c.fields)
    qmd = value << shift if value is not None else None
    mine = qmd == rd.s.get("qmd_address")
    who = "this launch's QMD" if mine else next(
        (f"the GRID_NULL QMD of launch {n}" if not _summary(l).get("kernel")
         else f"the QMD of launch {n}" for n, l in rd.same_submission()
         if _summary(l).get("qmd_address") == qmd), "a QMD")
    key = "qmd" if mine else "pcas-other"
    said = [_t("PCAS"), ": ", c.name, " = ", _hex(value), f" (the address >> {shift})"
            " hands the scheduler ", who, " at ", _v(key, _hex(qmd)), "."]
    brief = [c.name, " -> ", _v(key, _hex(qmd))]
    return {"kind": "pcas", "qmd": qmd}, said, brief


def _report_step(rd, st):
    r = st.regs
    addr = (r.get("SET_REPORT_SEMAPHORE_A", 0) << 32) | r.get("SET_REPORT_SEMAPHORE_B", 0)
    payload = r.get("SET_REPORT_SEMAPHORE_C")
    said = ["a report ", _t("semaphore"), ": when the work before it is done, the GPU writes ",
            _v("report-payload", payload), " to ", _v("report-address", _hex(addr)), " (",
            _where(rd.resolution(addr)), ")."]
    brief = ["SET_REPORT_SEMAPHORE ", _v("report-payload", payload)]
    return {"kind": "report", "address": addr, "payload": payload}, said, brief


def _inline_qmd_step(rd, st):
    said = ["the ", _t("QMD"), " itself, loaded inline: ",
            _v("inline-qmd-words", len(st.data)), " words."]
    brief = ["LOAD_INLINE_QMD_DATA x", _v("inline-qmd-words", len(st.data))]
    return {"kind": "inline-qmd", "words": len(st.data)}, said, brief


def _other_step(rd, st):
    c = st.calls[0]
    return {"kind": "other", "method": c.name}, [_methods_text(st.calls, 0)], [c.name]


_STEP_TELLERS = {"upload": _upload_step, "pcas": _pcas_step, "report": _report_step,
                 "inline-qmd": _inline_qmd_step}


def _methods_text(calls, words):
    """The methods by name: a one-field method as NAME=value, another as NAME=raw and its
    fields that are not zero (a zero field is its header's default)."""
    parts = []
    for c in calls:
        if c.base in ("LOAD_INLINE_DATA", "LOAD_INLINE_QMD_DATA"):
            parts.append(f"{c.name} x{words}")
        elif len(c.fields) == 1:
            parts.append(f"{c.name}={c.fields[0][2]}")
        else:
            set_ = ", ".join(f"{n}={d}" for n, v, d in c.fields if v)
            parts.append(f"{c.name}={_hex(c.value)}" + (f" ({set_})" if set_ else ""))
    return "; ".join(parts)
