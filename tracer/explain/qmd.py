"""The story's sections on what the GPU is handed to read: the QMD (its fields as the
decoders' tables name them, the addresses split into LOWER and UPPER put back together)
and constant bank 0 (the driver's constants and the kernel's arguments)."""
import re

from decoders.pick import full_summary as _summary
from tracer.explain.story import Line, Section, _dim_values, _hex, _t, _v, _where


# -- the QMD -----------------------------------------------------------------------------
_QMD_SHOWN = (
    (r"QMD_TYPE$", "qmd-type", "the kind of QMD"),
    (r"QMD_MAJOR_VERSION$", "qmd-version", "the layout version"),
    (r"(GRID|CTA_RASTER)_WIDTH$", "grid-x", "grid x"),
    (r"(GRID|CTA_RASTER)_HEIGHT$", "grid-y", "grid y"),
    (r"(GRID|CTA_RASTER)_DEPTH$", "grid-z", "grid z"),
    (r"CTA_THREAD_DIMENSION0$", "block-x", "block x"),
    (r"CTA_THREAD_DIMENSION1$", "block-y", "block y"),
    (r"CTA_THREAD_DIMENSION2$", "block-z", "block z"),
    (r"REGISTER_COUNT(_V)?$", "registers", "registers per thread"),
    (r"SHARED_MEMORY_SIZE$", "shared-memory", "shared memory per block, bytes"),
    (r"PROGRAM_ADDRESS_(LOWER|UPPER)(_SHIFTED\d+)?$", "program", "the program's address"),
    (r"CONSTANT_BUFFER_ADDR_(LOWER|UPPER)(_SHIFTED\d+)?\(0\)$", "cbank0",
     "constant bank 0's address"),
    (r"CONSTANT_BUFFER_SIZE(_SHIFTED\d+)?\(0\)$", "cbank0-size", "constant bank 0's size"),
    (r"(RELEASE_SEMAPHORE0_ADDR|RELEASE0_ADDRESS)_(LOWER|UPPER)$", "semaphore",
     "the release semaphore's address"),
    (r"(RELEASE_SEMAPHORE0|RELEASE0)_PAYLOAD_LOWER$", "release-payload",
     "the value written there when the grid is done"),
    (r"DEPENDENT_QMD0?_POINTER(\(0\))?$", "dependent", "the QMD to take up when this one ends"),
)


def qmd_fields(launch):
    """[(NVIDIA name, byte offset, raw, display, key, meaning)] of the QMD fields the story
    shows, in QMD order (from the launch's node tree: decoders/launch.py build_node)."""
    rules = [(re.compile(p), k, m) for p, k, m in _QMD_SHOWN]
    out = []
    for n in launch.node.walk():
        if not n.path.startswith("qmd.") or n.path.count(".") != 2:
            continue
        for rx, key, meaning in rules:
            if rx.match(n.name):
                shown = str(n.raw) if key in _COUNTS and isinstance(n.raw, int) else n.display
                out.append((n.name, n.offset, n.raw, shown, key, meaning))
                break
    return out


_COUNTS = ("grid-x", "grid-y", "grid-z", "block-x", "block-y", "block-z", "registers",
           "shared-memory", "release-payload", "qmd-version")


def _joined(rows):
    """{key: (names, value)} for the addresses a QMD splits into LOWER and UPPER fields,
    put back together (and shifted left where the name says SHIFTEDn)."""
    parts = {}
    for name, _, raw, _, key, _ in rows:
        half = "UPPER" if "UPPER" in name else "LOWER" if "LOWER" in name else None
        if half and isinstance(raw, int):
            parts.setdefault(key, {})[half] = (name, raw)
    out = {}
    for key, p in parts.items():
        if set(p) != {"LOWER", "UPPER"}:
            continue
        m = re.search(r"SHIFTED(\d+)", p["LOWER"][0])
        shift = int(m.group(1)) if m else 0
        out[key] = ((p["UPPER"][1] << 32 | p["LOWER"][1]) << shift, shift)
    return out


def _qmd(rd, facts):
    s = rd.s
    sec = Section("qmd", f"The QMD: the launch descriptor ({s.get('qmd_version')})",
                  f"QMD {s.get('qmd_version')}")
    written = s.get("qmd_written_by")
    how = ("written by the inline-to-memory upload above" if written == rd.launch.record_index
           else f"written by the submission at record {written}" if written is not None
           else "whose writing the capture did not see")
    res = (s.get("resolved") or {}).get("qmd_address")
    sec.lines.append(Line([
        "The ", _t("QMD"), " at ", _v("qmd", _hex(s.get("qmd_address"))), " (", how, "; ",
        _where(res), ") holds, among its fields:"]))
    rows = qmd_fields(rd.launch)
    facts["qmd_fields"] = {name: raw for name, _, raw, _, _, _ in rows}
    for name, offset, raw, display, key, meaning in rows:
        sec.lines.append(Line([f"+{offset:#05x} " if offset is not None else "", name, " = ",
                               _v(key, display), f"   ({meaning})"], indent=1, code=True))
    for key, (value, shift) in _joined(rows).items():
        meaning = next(m for _, _, _, _, k, m in rows if k == key)
        sec.lines.append(Line([
            meaning[0].upper() + meaning[1:], ": UPPER and LOWER together",
            f", shifted left by {shift}" if shift else "", " = ", _v(key, _hex(value)), "."],
            indent=1))
    sec.lines.append(Line([
        "The launch summary reads them as grid ", *_dim_values("grid", s.get("grid")),
        ", block ", *_dim_values("block", s.get("block")), ", ",
        _v("registers", s.get("registers")), " registers per thread, ",
        _v("shared-memory", s.get("shared_memory_bytes")), " bytes of shared memory per block",
        *_smem_note(s), ", program at ", _v("program", _hex(s.get("program_address"))), " (",
        _where((s.get("resolved") or {}).get("program_address")), ")."]))
    for d in s.get("dependents") or []:
        target = rd.launch_at_qmd(d.get("pointer"))
        sec.lines.append(Line([
            "Its dependent pointer names the QMD at ", _v("dependent", _hex(d.get("pointer"))),
            f" (launch {target}" + (", the GRID_NULL QMD" if target is not None and
                                   not _summary(rd.model.launches[target]).get("kernel")
                                   else "") + ")" if target is not None else "", "."]))
    pdl = s.get("programmatic")
    if pdl:
        after = pdl.get("after_launch")
        sec.lines.append(Line([
            "It waits on latch ", _v("latch", pdl.get("waits_on_latch")),
            " (WAIT_ON_LATCH_VALID, WAIT_ON_LATCH_ID)",
            f", which launch {after}'s QMD arrives at (ARRIVE_AT_LATCH_ID)" if after is not None
            else "", ": a programmatic dependent launch. The scheduler may start this grid "
            "before that one ends, once that one's blocks have all run "
            "griddepcontrol.launch_dependents or exited; this kernel's griddepcontrol.wait "
            "holds until that grid is done and its memory visible."]))
    if s.get("memory_sync_domain"):
        sec.lines.append(Line([
            "It runs in memory synchronization domain ",
            _v("sync-domain", s["memory_sync_domain"]), " (SYNC_DOMAIN_ID; the call's "
            "MEM_SYNC_DOMAIN launch attribute): a memory fence in this grid orders the "
            "traffic of that domain only, so it need not wait for the compute kernels of "
            "domain 0 (NCCL asks for it)."]))
    joined = _joined(rows)
    sec.brief.append(Line(["at ", _v("qmd", _hex(s.get("qmd_address")))]))
    for name, _, _, display, key, _ in rows:
        if key in joined:
            if "LOWER" in name:
                value, _ = joined[key]
                sec.brief.append(Line([re.sub(r"_LOWER", "", name), " ", _v(key, _hex(value))],
                                      code=True))
        elif key not in ("qmd-version", "cbank0-size"):
            sec.brief.append(Line([name, " ", _v(key, display)], code=True))
    return sec


def _smem_note(s):
    sm = (s.get("attribution") or {}).get("shared_memory")
    if not sm:
        return []
    return [" (the call asked for ", _v("shared-requested", sm["requested"]), ", the driver "
            "adds ", _v("shared-reserve", sm["reserve"]), " and rounds up to ",
            _v("shared-granule", sm["granule"]), ")"]


# -- constant bank 0 ---------------------------------------------------------------------
def _cbank0(rd, facts):
    s = rd.s
    cb0 = next((c for c in s.get("constant_buffers") or [] if c.get("index") == 0), None)
    if cb0 is None:
        return None
    sec = Section("cbank0", "Constant bank 0: where the arguments went", "constant bank 0")
    params = s.get("params") or {}
    base = params.get("offset")
    sec.lines.append(Line([
        "The QMD's constant bank 0 is at ", _v("cbank0", _hex(cb0["address"])), ", ",
        _v("cbank0-size", cb0["size"]), " bytes. The kernel reads it as c[0x0][offset]:"]))
    drv = s.get("cbank0_driver") or {}
    for name, value in (drv.get("fields") or {}).items():
        key = {"blockDim": "block", "gridDim": "grid"}.get(name.split(".")[0])
        key = f"{key}-{name.split('.')[1]}" if key and "." in name else f"cb0-{name}"
        sec.lines.append(Line([f"{name} = ", _v(key, value)], indent=1))
    a = s.get("attribution") or {}
    args = a.get("args") or []
    facts["args"] = [{"index": x["index"], "offset": x["offset"], "size": x["size"],
                      "value": x["value"], "hex": x["hex"]} for x in args]
    if base is not None:
        sec.lines.append(Line([
            "The arguments start at c[0x0][", _v("param-base", _hex(base)), "] (",
            _v("param-bytes", params.get("size")), " bytes uploaded):"]))
    for x in args:
        v = x["value"]
        shown = f"{v:#x}" if isinstance(v, int) and x["size"] == 8 else \
            (str(v) if v is not None else x["hex"])
        where = x.get("points_to") or {}
        sec.lines.append(Line([
            f"param {x['index']}", f" ({x['type']})" if x.get("type") else "",
            f", {x['size']} bytes at c[0x0][{(base or 0) + x['offset']:#x}] = ",
            _v(f"arg-{x['index']}", shown, True),
            f"  -> {where['what']}" if where.get("what") else ""], indent=1, code=True))
    if args and all(not x.get("type") for x in args):
        sec.lines.append(Line([
            "(the kernel is extern \"C\": its binary names neither the parameters nor their "
            "types, only their offsets and sizes)"], indent=1))
    if a.get("verified") is True:
        sec.lines.append(Line([
            "Verified: the grid, block, shared memory and every argument byte equal what ",
            _v("api-name", (a.get("api_call") or {}).get("name") or "the call", True),
            " was given."]))
    elif a.get("verified") is False:
        sec.lines.append(Line(["Differs from the call: " + "; ".join(
            f"{d['field']}: call {d['api']}, QMD {d['qmd']}" for d in a.get("differences") or [])]))
    sec.brief.append(Line(["args at c[0x0][", _v("param-base", _hex(base)), "]"]))
    return sec
