"""The story's first sections, what the program and libcuda did on the CPU: the launch as
CUDA C++ reads it, the driver API call that made it (and where its function handle and
code came from), and the channel that RM made before it (its objects, GPFIFO, USERD,
token and the usermode page of the doorbell)."""
import re

from tracer.explain.story import Line, Section, _count, _dim_values, _hex, _t, _v


def _kernel_name(rd):
    from decoders.names import short_name
    a = rd.s.get("attribution") or {}
    k = a.get("kernel") or {}
    return short_name(k.get("name")) if k.get("name") else None


def _intro(model, rd, facts):
    s = rd.s
    sec = Section("launch", "The launch", "kernel<<<grid, block>>>")
    meta = model.meta or {}
    name = _kernel_name(rd)
    facts["kernel_name"] = name
    gpu = meta.get("gpu")
    sec.lines.append(Line([f"Launch {facts['launch']} of ", _v("capture", model.path, True),
                           " (", _v("gpu", gpu or "GPU ?", True), ", driver ",
                           _v("driver", meta.get("driver") or "?", True), ")."]))
    if not s.get("kernel"):
        sec.lines.append(Line([
            "This launch is a ", _t("GRID_NULL"), " ", _t("QMD"),
            ": it runs no kernel. `trace-decode explain` with no --launch tells a kernel's "
            "story, which includes this one."]))
        return sec
    grid, block = s.get("grid") or [], s.get("block") or []
    shape = [_t("grid"), " of ", _v("blocks", _count(grid)), " ", _t("block", "blocks"), " of ",
             _v("threads-per-block", _count(block)), " threads each, ",
             _v("threads", _count(grid) * _count(block)), " threads in all."]
    if name:
        sec.lines.append(Line([
            "In CUDA C++ it reads ", _v("kernel", name, True), "<<<", *_dim_values("grid", grid),
            ", ", *_dim_values("block", block), ">>>(...): run ", _v("kernel", name, True),
            " on a "] + shape))
    else:
        call = ((s.get("attribution") or {}).get("api_call") or {}).get("name")
        sec.lines.append(Line([
            "A kernel the capture does not name",
            *([" (the driver's own, run for ", _v("api-name", call, True), ")"] if call else []),
            ": a "] + shape))
    sec.brief.append(Line([_v("kernel", name or "kernel", True), "<<<",
                           *_dim_values("grid", grid), ", ", *_dim_values("block", block), ">>>"]))
    return sec


_DECIMAL_ARGS = re.compile(r"Dim|Bytes|Count|^N$|count|size|value")


def _arg_text(name, value):
    if isinstance(value, int):
        return str(value) if _DECIMAL_ARGS.search(name) or value < 10 else f"{value:#x}"
    return str(value)


_AXIS_KEYS = {"gridDimX": "grid-x", "gridDimY": "grid-y", "gridDimZ": "grid-z",
              "blockDimX": "block-x", "blockDimY": "block-y", "blockDimZ": "block-z",
              "sharedMemBytes": "shared-dynamic", "hStream": "stream"}


def _api(rd, facts):
    a = rd.s.get("attribution") or {}
    ref = a.get("api_call") or rd.s.get("api_call")
    sec = Section("api", "The driver API call", "driver API call")
    sec.lines.append(Line([
        "A `<<<...>>>` launch goes through the ", _t("runtime"), " to the ", _t("driver API"),
        ". The capture holds the driver API call:"]))
    if not ref:
        sec.lines.append(Line([
            "(this capture has no API records for this launch: it was recorded with "
            "--mode ioctl, or the launch came from a call the shim does not bracket)"]))
        facts["api_call"] = None
        return sec
    call = rd.api_call(ref["index"]) or {}
    args = call.get("args") or {}
    facts["api_call"] = {"name": ref["name"], "index": ref["index"], "args": dict(args)}
    parts = [_v("api-name", ref["name"], True), "("]
    for k, (name, value) in enumerate(args.items()):
        if k:
            parts.append(", ")
        parts += [f"{name}=", _v(_AXIS_KEYS.get(name, f"api-{name}"), _arg_text(name, value))]
    parts.append(")")
    if call.get("result_name"):
        parts += [" = ", _v("api-result", call["result_name"], True)]
    sec.lines.append(Line([f"record {ref['index']}: "] + parts, indent=1, code=True))
    sec.brief.append(Line([_v("api-name", ref["name"], True), "(", *_brief_args(args), ")"]))
    t0, t1 = call.get("t_start"), call.get("t_end")
    if t0 is not None and t1 is not None:
        sec.lines.append(Line(["It returned after ", _v("api-us", f"{(t1 - t0) / 1000:.1f}"),
                               " µs (pid ", _v("pid", call.get("pid")), ", thread ",
                               _v("tid", call.get("tid")), ")."], indent=1))
    _function_origin(rd, sec, args, a)
    return sec


def _brief_args(args):
    out = []
    for name in ("gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
                 "sharedMemBytes"):
        if name in args:
            if out:
                out.append(", ")
            out += [f"{name}=", _v(_AXIS_KEYS[name], _arg_text(name, args[name]))]
    return out


_LOOKUPS = ("cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction")


def _function_origin(rd, sec, args, a):
    """Where the function handle came from: the lookup call, then the module load."""
    f = args.get("f")
    if f is None:
        return
    look = next((c for c in rd.model.api_calls if c.get("out") == f and
                 (c.get("base") or c["name"]) in _LOOKUPS and c["index"] < a["api_call"]["index"]),
                None)
    if look is not None:
        sec.lines.append(Line([
            "f = ", _v("api-f", _hex(f)), " is the function handle that ",
            _v("lookup", look["name"], True), " (record ", _v("lookup-record", look["index"]),
            ") returned for ", _v("lookup-name", repr(look.get("string") or "?"), True), "."],
            indent=1))
    k = a.get("kernel") or {}
    if k.get("image_call") is not None:
        load = rd.api_call(k["image_call"]) or {}
        size = load.get("image_bytes")
        sec.lines.append(Line([
            "Its code came from the module image ", _v("load", load.get("name") or "?", True),
            " loaded (record ", _v("load-record", k["image_call"]), (", " if size else ""),
            *([_v("image-bytes", size), " bytes"] if size else []), "); the capture keeps the "
            "image", *([", and its ", _v("cubin-arch", k["cubin_arch"], True), " code"]
                       if k.get("cubin_arch") else []),
            " gives the kernel's name and parameter layout."], indent=1))


def _channel(rd, facts):
    sub = rd.sub
    sec = Section("channel", "Before the launch: the channel", "channel (set up before)")
    if sub is None:
        sec.lines.append(Line(["(the submission that carried this launch is not in the capture)"]))
        return sec
    h, token = sub["channel"], sub["token"]
    facts.update(channel=h, token=token, channel_class=sub["class"], client=sub["hClient"])
    sec.lines.append(Line([
        "libcuda made the GPU's objects once, when the program's CUDA context was created, "
        "with ", _t("ioctl"), "s to ", _t("RM"), ". Each ", _t("RM object"), " has a handle, "
        "a parent and an ", _t("RM class"), "; the first is an ", _t("RM client"), ". The "
        "objects this launch used:"]))
    chain, o = [], rd.obj(h)
    while o is not None and o.handle not in [c.handle for c in chain]:
        chain.append(o)
        o = rd.obj(o.parent)
    for o in reversed(chain):
        _object_line(rd, sec, o)
    ch = rd.tree.channels.get(h) if rd.tree is not None else None
    _channel_params(rd, sec, ch, facts)
    for c in (rd.tree.children(h) if rd.tree is not None else []):
        _object_line(rd, sec, c, indent=2)
    if any(c.role == "compute" for c in (rd.tree.children(h) if rd.tree is not None else [])):
        sec.lines.append(Line([
            "The compute object is what the channel's compute methods go to: the ",
            _t("subchannel"), " binding below names its class."], indent=2))
    tok = rd.ioctl_where("GET_WORK_SUBMIT_TOKEN", f"on {h:#x}")
    sec.lines.append(Line(
        [f"record {tok['index']}: " if tok else "", "RM gave the channel its ",
         _t("channel token"), " ", _v("token", _hex(token)),
         " (NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN)." if tok else "."], indent=1))
    _usermode(rd, sec, sub, facts)
    sec.brief.append(Line(["channel ", _v("channel", _hex(h)), " token ",
                           _v("token", _hex(token))]))
    return sec


def _object_line(rd, sec, o, indent=1):
    rec = rd.alloc_record(o.handle)
    head = f"record {rec['index']}: " if rec else ""
    extra = ""
    if o.size is not None:
        extra += f", {o.size:#x} bytes"
    if o.location:
        extra += f", {o.location}"
    # an object imported from another process, or duped from an object the process does not
    # hold, has no class here (decoders/rm/objects.py)
    made, cls = "RM_ALLOC ", f" (class {o.hclass:#06x}) " if o.hclass is not None else " "
    if "hObjectSrc" in o.params:
        made = "RM_DUP_OBJECT "
    elif o.hclass is None:
        made = "OS_UNIX_IMPORT_OBJECTS_FROM_FD "
    sec.lines.append(Line([head, made, _v("class-name", o.class_name, True),
                           cls, _v(f"handle-{o.handle:x}", _hex(o.handle)),
                           " under ", _hex(o.parent), extra], indent=indent, code=True))


def _channel_params(rd, sec, ch, facts):
    if ch is None:
        return
    facts.update(gpfifo_va=ch.gpfifo_va, gpfifo_entries=ch.entries,
                 userd_memory=ch.userd_memory, userd_offset=ch.userd_offset)
    sec.lines.append(Line([
        "The channel's alloc parameters (NV_CHANNEL_ALLOC_PARAMS) place its ", _t("GPFIFO"),
        " ring at GPU address ", _v("gpfifo", _hex(ch.gpfifo_va)), " with ",
        _v("gpfifo-entries", ch.entries), " entries, and its ", _t("USERD"), " at offset ",
        _v("userd-offset", _hex(ch.userd_offset)), " of memory object ",
        _v("userd-memory", _hex(ch.userd_memory)),
        f" (engine {ch.engine}" + (f", from {ch.engine_from}" if ch.engine_from else "") + ")."],
        indent=2))
    mem = rd.obj(ch.userd_memory)
    if mem is not None:
        _object_line(rd, sec, mem, indent=2)
        for m in mem.cpu_mappings:
            mm = rd.mmap_at(m["addr"])
            sec.lines.append(Line([
                f"record {mm['index']}: " if mm else "", "mapped for the CPU at ",
                _v("userd-cpu-base", _hex(m["addr"])), f" ({m['length'] or 0:#x} bytes",
                f", {mm['path']}" if mm else "", "): the USERD is at ",
                _v("userd-cpu", _hex(m["addr"] + (ch.userd_offset or 0) - (m["offset"] or 0))),
                "."], indent=3))


def _usermode(rd, sec, sub, facts):
    o, m = rd.cpu_object(sub["doorbell_addr"])
    if o is None:
        return
    rec = rd.alloc_record(o.handle)
    mm = rd.mmap_at(m["addr"])
    facts.update(usermode=o.handle, usermode_cpu=m["addr"],
                 doorbell_offset=sub["doorbell_addr"] - m["addr"])
    sec.lines.append(Line([
        f"record {rec['index']}: " if rec else "", "RM_ALLOC ",
        _v("usermode-class", o.class_name, True), f" (class {o.hclass:#06x}) ",
        _v("usermode", _hex(o.handle)), ": the GPU's usermode register page, where the ",
        _t("doorbell"), " is."], indent=1, code=True))
    sec.lines.append(Line([
        f"record {mm['index']}: " if mm else "", "mmap of it at ",
        _v("usermode-cpu", _hex(m["addr"])),
        f", {m['length'] or 0:#x} bytes", f" of {mm['path']}" if mm else "",
        f", prot {_prot(mm['prot'])}" if mm else "", "."], indent=2, code=True))


def _prot(p):
    return "".join(c for c, bit in (("R", 1), ("W", 2), ("X", 4)) if p & bit) or "none"
