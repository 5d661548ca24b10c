"""`trace-decode explain CAPTURE [--launch N] [--html FILE]`: one launch's story, told with
the capture's own numbers, for people learning what a kernel launch is (issue 27).

    <<<grid, block>>> -> runtime -> driver API call -> pushbuffer -> QMD -> doorbell -> SMs

`build_story(model, n)` reads the decoded model (decoders/session.py CaptureModel: the
launch summary and its attribution, the API calls, the submission that carried the
launch, the ioctls and the RM object tree) and returns a `Story`: its `facts` (every
number the story tells, as data: what the tests compare with a capture's manifest) and
its sections, each a list of lines made of text, values and terms. `render_text` and
`render_html` are two views of that one story. No number is written here: each comes
from the capture, or from the decoders' tables (a method's or a QMD field's name, a
shift named in a field's name).

Each term (TERMS) is defined once, where the story first uses it: the text prints the
definition under that line; the HTML page shows it on hover and in a glossary.
Every string from the capture is escaped: decoders/text.py printable() for the text,
html.escape() for the page.
"""
import html
import re
import textwrap
from dataclasses import dataclass, field

from decoders.errors import TraceLaunchError

WIDTH = 100         # text lines are wrapped here (TextOut cuts at 300 anyway)

# Plain-words definitions. No value of a capture appears here (the story gives them);
# only the widths the formats fix (a 32-bit store, 8-byte GPFIFO entries, 8 subchannels).
TERMS = {
    "runtime": "the CUDA runtime library (libcudart): `kernel<<<grid, block>>>(args)` in CUDA "
               "C++ compiles to a call of its cudaLaunchKernel. The runtime, and libraries "
               "such as cuda-python, PyTorch or JAX, end in a call of the driver API.",
    "driver API": "the functions of libcuda.so, NVIDIA's user-space driver (cuLaunchKernel, "
                  "cuMemAlloc, ...). The shim records each call, its arguments and its result.",
    "grid": "how many thread blocks the kernel runs, in up to three dimensions (x, y, z).",
    "block": "a group of threads that run together on one SM and can share memory; its size "
             "is given in up to three dimensions.",
    "ioctl": "a system call that hands a request to a kernel driver through an open device "
             "file (/dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm).",
    "RM": "the Resource Manager: the part of NVIDIA's kernel driver that owns the GPU's "
          "objects. A program asks it for objects with ioctls (RM_ALLOC, RM_CONTROL, ...).",
    "RM client": "the root object a process allocates first; every other RM object it makes "
                 "hangs below it, and RM frees them all when the client goes.",
    "RM object": "something RM made on the program's behalf (a device, a memory block, a "
                 "channel), named by a 32-bit handle and placed under a parent object.",
    "RM class": "the number that says what kind of object an RM object is, e.g. a memory "
                "class, a channel class or a compute class; NVIDIA's headers name each one.",
    "channel": "a queue of commands from one process to the GPU: the GPU's host engine reads "
               "it in order and hands the commands to an engine (compute, copy).",
    "GPFIFO": "the channel's ring of 8-byte entries in GPU-visible memory; each entry gives "
              "the address and length of a piece of pushbuffer for the GPU to read.",
    "USERD": "a small block of memory per channel that the CPU and the GPU both see; it holds "
             "GP_PUT (written by the CPU) and GP_GET (written by the GPU).",
    "GP_PUT": "the index of the next free GPFIFO entry: the CPU writes new entries, then "
              "advances GP_PUT past them. GP_GET is how far the GPU has read.",
    "doorbell": "a 32-bit store to a register page of the GPU (the usermode page, mapped into "
                "the process) that tells the GPU a channel has new GPFIFO entries.",
    "channel token": "the number written to the doorbell to say which channel has work (RM "
                     "hands it out for each channel: the work-submit token).",
    "pushbuffer": "memory the driver fills with commands (methods) for the GPU; GPFIFO entries "
                  "point into it.",
    "method": "one command in the pushbuffer: a method number (a register offset of an "
              "engine's class) and a 32-bit value, written after a header word that gives the "
              "subchannel, the method and how many values follow.",
    "subchannel": "one of eight slots of a channel, each bound (by the SET_OBJECT method) to "
                  "one engine object, such as the compute class; a method header names the "
                  "subchannel its methods go to.",
    "inline-to-memory": "methods that copy data carried in the pushbuffer itself to a GPU "
                        "address: OFFSET_OUT_UPPER/OFFSET_OUT (where), LINE_LENGTH_IN and "
                        "LINE_COUNT (how much), LAUNCH_DMA (go), then LOAD_INLINE_DATA words.",
    "constant bank 0": "a block of memory every thread of a kernel reads through c[0x0][...]: "
                       "the driver puts blockDim, gridDim and other constants at its start, "
                       "and the kernel's arguments after them.",
    "QMD": "Queue Meta Data: the launch descriptor the GPU's compute scheduler reads. It "
           "holds the grid and block sizes, the registers and shared memory per block, the "
           "program's address, the constant banks, and what to signal when the grid is done.",
    "PCAS": "the compute engine's scheduling methods (SEND_PCAS_A, SEND_SIGNALING_PCAS*_B): "
            "they hand the scheduler the address of a QMD to take up.",
    "GRID_NULL": "a QMD type with no grid and no program: the driver schedules one before each "
                 "kernel's own QMD on this GPU; the kernel's QMD names it as its dependent.",
    "semaphore": "a memory word the GPU writes a value (the payload) to when its work reaches "
                 "a point; the CPU reads it to learn what has finished.",
    "SM": "streaming multiprocessor: one of the GPU's processors; the scheduler hands each "
          "block of the grid to an SM, which runs its threads.",
}


class ExplainError(TraceLaunchError):
    """No launch to explain: an index that is not in the capture."""


# -- the story as data --------------------------------------------------------------------
@dataclass
class Term:
    name: str           # a key of TERMS
    shown: str          # the words in the line


@dataclass
class Value:
    key: str            # what it is (grid-x, token, ...): the same key links it across boxes
    text: str           # as shown
    capture: bool = False   # a string from the capture (escaped on output)


@dataclass
class Line:
    parts: list
    indent: int = 0
    code: bool = False      # a record or a byte listing: kept on one line in the text


@dataclass
class Section:
    key: str
    title: str
    box: str = ""       # the picture's box title
    lines: list = field(default_factory=list)
    brief: list = field(default_factory=list)   # a few lines for the picture's box


@dataclass
class Story:
    path: str
    index: int
    facts: dict
    sections: list


def _t(name, shown=None):
    return Term(name, shown or name)


def _v(key, value, capture=False):
    return Value(key, value if isinstance(value, str) else str(value), capture)


def _hex(value):
    return "?" if value is None else f"{value:#x}"


def _summary(launch):
    return launch.summary if hasattr(launch, "summary") else launch


# -- which launch ------------------------------------------------------------------------
def pick_launch(model, index=None):
    """The launch to explain: `index` (as the report numbers launches), else the first
    kernel launch whose submission rang between marks (the built-in launch), else the
    first kernel launch (decoders/diff.py default_launch); where that one runs no kernel
    the program named (a memset the driver runs as a kernel of its own), the first launch
    of a named kernel."""
    count = len(model.launches)
    if index is None:
        if not count:
            raise ExplainError("no launch decoded in this capture: nothing to explain")
        from decoders.diff import default_launch
        first = default_launch(model)
        if _named(model.launches[first]):
            return first
        return next((n for n, l in enumerate(model.launches) if _named(l)), first)
    if not 0 <= index < count:
        raise ExplainError(f"no launch {index}: the capture has {count} launch(es), "
                           f"numbered from 0 (`trace-decode CAPTURE` lists them)")
    return index


def _named(launch):
    s = _summary(launch)
    return bool(s.get("kernel") and ((s.get("attribution") or {}).get("kernel") or {}).get("name"))


# -- reading the model -------------------------------------------------------------------
_ALLOC = re.compile(r"^RM_ALLOC\S* (\S+) (0x[0-9a-f]+) under (0x[0-9a-f]+)")


class _Reader:
    """Look-ups into the model for one launch; each walks a list once."""

    def __init__(self, model, launch):
        self.model = model
        self.launch = launch
        self.s = _summary(launch)
        self.pid = launch.pid
        self.sub = next((s for s in model.submissions if s["index"] == launch.record_index),
                        None)
        self.tree = model.objects
        self._ioctls = [i for i in model.ioctls if self.pid is None or i["pid"] == self.pid]

    def obj(self, handle):
        return self.tree.objects.get(handle) if self.tree is not None and handle else None

    def alloc_record(self, handle, before=None):
        """The RM_ALLOC ioctl that made `handle` (the last before `before`)."""
        found = None
        for i in self._ioctls:
            if before is not None and i["index"] >= before:
                break
            m = _ALLOC.match(i.get("summary") or "")
            if m and int(m.group(2), 16) == handle and i["ret"] == 0:
                found = i
        return found

    def ioctl_where(self, *words, before=None):
        """The last ioctl (before `before`) whose summary holds every one of `words`."""
        found = None
        for i in self._ioctls:
            if before is not None and i["index"] >= before:
                break
            text = i.get("summary") or ""
            if all(w in text for w in words):
                found = i
        return found

    def mmap_at(self, addr):
        return next((m for m in self.model.mmaps if m.get("addr") == addr and
                     not m.get("munmap") and not m.get("mremap") and
                     (self.pid is None or m["pid"] == self.pid)), None)

    def cpu_object(self, addr):
        """(object, mapping) whose CPU mapping holds `addr`."""
        if self.tree is None:
            return None, None
        for o in self.tree.objects.values():
            if self.pid is not None and o.pid not in (None, self.pid):
                continue
            for m in o.cpu_mappings:
                if m["addr"] <= addr < m["addr"] + (m["length"] or 0):
                    return o, m
        return None, None

    def resolution(self, va):
        return self.tree.resolution(va) if self.tree is not None and va is not None else None

    def api_call(self, index):
        return next((c for c in self.model.api_calls if c["index"] == index), None)

    def api_calls_after(self, index):
        for c in self.model.api_calls:
            if c["index"] > index and (self.pid is None or c["pid"] == self.pid):
                yield c


def _where(r):
    """A resolved GPU VA (docs/json.md `resolved`) in words."""
    if not r:
        return "in no memory object the capture saw mapped"
    size = f", {r['size']:#x} bytes" if r.get("size") is not None else ""
    cpu = (f", visible to the CPU at {r['cpu']:#x}" if r.get("cpu") is not None
           else ", not mapped for the CPU")
    return (f"offset {r['offset']:#x} of RM object {r['handle']:#x} ({r['class_name']}"
            f"{size}, {r.get('memory') or 'location ?'}{cpu})")


# -- building ----------------------------------------------------------------------------
def build_story(model, index):
    """The Story of launch `index` of a decoded capture."""
    launch = model.launches[index]
    rd = _Reader(model, launch)
    s = rd.s
    facts = {"launch": index, "capture": model.path, "kernel": bool(s.get("kernel")),
             "qmd_version": s.get("qmd_version"), "qmd_address": s.get("qmd_address"),
             "qmd_type": s.get("qmd_type"), "grid": s.get("grid"), "block": s.get("block"),
             "cluster": s.get("cluster"), "registers": s.get("registers"),
             "shared_memory_bytes": s.get("shared_memory_bytes"),
             "program_address": s.get("program_address"), "record_index": launch.record_index}
    sections = [_intro(model, rd, facts), _api(rd, facts), _channel(rd, facts),
                _pushbuffer(rd, facts), _qmd(rd, facts), _cbank0(rd, facts),
                _doorbell(rd, facts), _gpu(rd, facts)]
    return Story(model.path, index, facts, [x for x in sections if x is not None])


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


def _count(d):
    n = 1
    for x in d or []:
        n *= x
    return n


def _dim_values(key, dims):
    """(x, y, z) as values keyed grid-x, grid-y, ... so each links to its QMD field."""
    out = ["("]
    for k, (axis, d) in enumerate(zip("xyz", dims or [])):
        if k:
            out.append(", ")
        out.append(_v(f"{key}-{axis}", d))
    out.append(")")
    return out


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
    sec.lines.append(Line([head, "RM_ALLOC ", _v("class-name", o.class_name, True),
                           f" (class {o.hclass:#06x}) ", _v(f"handle-{o.handle:x}", _hex(o.handle)),
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
    """The submission's method calls, decoded with the channel's earlier submissions fed
    first (so the subchannel's class comes from the channel's own SET_OBJECT), and the
    first SET_OBJECT seen per subchannel (record, class)."""
    from decoders.methods import method_table
    from decoders.pushbuf import StreamDecoder
    from decoders.diff import _gpu
    sub = rd.sub
    dec = StreamDecoder(gpu=_gpu(rd.model), host_class=sub["class"])
    bound = {}
    for s in rd.model.submissions:
        if s["index"] >= sub["index"]:
            break
        if s["pid"] == sub["pid"] and s["token"] == sub["token"]:
            for g in s["segments"]:
                for pkt in dec.feed(bytes(g["hex"]), g["va"]):
                    for m, v in pkt.calls():
                        if pkt.describe(m, v)[0] == "SET_OBJECT":
                            bound.setdefault(pkt.subchannel, (s["index"], v))
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
    for n, other in _same_submission(rd):
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


def _same_submission(rd):
    for n, l in enumerate(rd.model.launches):
        if l is not rd.launch and l.record_index == rd.launch.record_index:
            yield n, l


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
            f", bound by SET_OBJECT in the channel's submission at record {how[0]}" if how else
            (" (assumed: no SET_OBJECT in view)" if assumed else "")], indent=1))
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
    others = {_summary(l).get("qmd_address") for _, l in _same_submission(rd)
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
         else f"the QMD of launch {n}" for n, l in _same_submission(rd)
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
        target = next((n for n, l in enumerate(rd.model.launches)
                       if _summary(l).get("qmd_address") == d.get("pointer")), None)
        sec.lines.append(Line([
            "Its dependent pointer names the QMD at ", _v("dependent", _hex(d.get("pointer"))),
            f" (launch {target}" + (", the GRID_NULL QMD" if target is not None and
                                   not _summary(rd.model.launches[target]).get("kernel")
                                   else "") + ")" if target is not None else "", "."]))
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


# -- the doorbell ------------------------------------------------------------------------
def _doorbell(rd, facts):
    sub = rd.sub
    if sub is None:
        return None
    from decoders.gpfifo import ENTRY
    sec = Section("doorbell", "The doorbell: telling the GPU", "doorbell")
    entry_bytes = ENTRY.nwords * 4
    facts.update(gp_put_prev=sub["gp_put_prev"], gp_put=sub["gp_put"],
                 doorbell_addr=sub["doorbell_addr"], submission_record=sub["index"])
    for k, e in enumerate(sub["entries"]):
        slot = (sub["gp_put_prev"] + k) % max(sub["gp_entries"] or 1, 1)
        sec.lines.append(Line([
            "libcuda wrote ", _t("GPFIFO"), " entry ", _v("gp-slot", slot), " at ",
            _v("gp-entry-addr", _hex((sub["gpfifo_va"] or 0) + slot * entry_bytes)), ": ",
            _v("gp-entry", f"{e['raw']:#018x}"),
            *([" = pushbuffer segment ", _v("segment", _hex(e.get("address"))), ", ",
               _v("segment-bytes", e.get("length_bytes")), " bytes"]
              if e.get("kind") == "segment" else [f" ({e.get('kind')} entry)"]), "."]))
    sec.lines.append(Line([
        "Then it advanced ", _t("GP_PUT"), " in the channel's USERD from ",
        _v("gp-put-prev", sub["gp_put_prev"]), " to ", _v("gp-put", sub["gp_put"]),
        f" (of {sub['gp_entries']} entries)."]))
    off = facts.get("doorbell_offset")
    sec.lines.append(Line([
        f"record {sub['index']}: the doorbell: a store of the channel token ",
        _v("token", _hex(sub["token"])), " to ", _v("doorbell", _hex(sub["doorbell_addr"])),
        *([" (usermode page ", _v("usermode-cpu", _hex(facts.get("usermode_cpu"))), " + ",
           _v("doorbell-offset", _hex(off)), ")"] if off is not None else []),
        ", by the instruction at ", _v("rip", _hex(sub["rip"])), "."]))
    call = (rd.s.get("attribution") or {}).get("api_call") or {}
    if call.get("t_start") is not None and sub.get("t") is not None:
        sec.lines.append(Line([
            "It rang ", _v("doorbell-us", f"{(sub['t'] - call['t_start']) / 1000:.1f}"),
            " µs after ", _v("api-name", call.get("name"), True), " was entered."], indent=1))
    sec.brief.append(Line(["token ", _v("token", _hex(sub["token"])), " to ",
                           _v("doorbell", _hex(sub["doorbell_addr"]))]))
    sec.brief.append(Line(["GP_PUT ", _v("gp-put-prev", sub["gp_put_prev"]), " -> ",
                           _v("gp-put", sub["gp_put"])]))
    return sec


# -- on the GPU --------------------------------------------------------------------------
def _gpu(rd, facts):
    s = rd.s
    sec = Section("gpu", "On the GPU", "SMs")
    sec.lines.append(Line([
        "The capture ends at the doorbell: what follows is the GPU's side, told from the "
        "methods and the QMD above. The host engine reads GPFIFO entries up to GP_PUT, "
        "fetches the pushbuffer bytes they point to and runs the methods; the compute "
        "engine takes up each QMD the PCAS methods name, and its scheduler hands the ",
        _v("blocks", _count(s.get("grid"))), " blocks to the ", _t("SM"), "s."]))
    facts["semaphores"] = []
    seen, more = set(), 0
    for k, sem in enumerate(s.get("semaphores") or []):
        if not isinstance(sem, dict):
            continue
        if sem.get("source") in seen:     # the later reports of a long submission
            more += 1
            continue
        seen.add(sem.get("source"))
        facts["semaphores"].append({"source": sem.get("source"), "address": sem.get("address"),
                                    "payload": sem.get("payload")})
        res = (s.get("resolved") or {}).get("semaphores") or []
        sec.lines.append(Line([
            f"{sem.get('source')}: the GPU writes ", _v(f"sem-{k}-payload", sem.get("payload")),
            " to ", _v(f"sem-{k}", _hex(sem.get("address"))), " (",
            _where(res[k] if k < len(res) else None), ")."], indent=1))
    if more:
        sec.lines.append(Line([f"({more} more semaphore write(s) follow in this submission, "
                               "for the work after this launch)"], indent=1))
    nxt = next(rd.api_calls_after((s.get("api_call") or {}).get("index", rd.launch.record_index)),
               None)
    if nxt is not None:
        dur = (nxt["t_end"] - nxt["t_start"]) / 1000 if nxt.get("t_end") and nxt.get("t_start") \
            else None
        sec.lines.append(Line([
            "The program's next API call is ", _v("next-call", nxt["name"], True), " (record ",
            _v("next-record", nxt["index"]), ")",
            *([", which returned after ", _v("next-us", f"{dur:.1f}"), " µs"] if dur else []),
            "."]))
    sec.brief.append(Line([_v("blocks", _count(s.get("grid"))), " blocks x ",
                           _v("threads-per-block", _count(s.get("block"))), " threads"]))
    return sec


# -- text --------------------------------------------------------------------------------
def _plain(part):
    from decoders.text import printable
    if isinstance(part, Term):
        return part.shown
    if isinstance(part, Value):
        return printable(part.text) if part.capture else part.text
    return part


def render_text(story, out):
    """The story as text: each section, its lines wrapped, each term's definition under
    the line that first uses it."""
    from decoders.text import TextOut
    text_out = TextOut(out)
    w = text_out.write
    defined = set()
    for k, sec in enumerate(story.sections):
        w(("\n" if k else "") + f"{k}. {sec.title}\n")
        for line in sec.lines:
            text = "".join(_plain(p) for p in line.parts)
            pad = "   " + "  " * line.indent
            if line.code:
                w(pad + text + "\n")
            else:
                w("\n".join(textwrap.wrap(text, WIDTH, initial_indent=pad,
                                          subsequent_indent=pad + "  ")) + "\n")
            for p in line.parts:
                if isinstance(p, Term) and p.name not in defined:
                    defined.add(p.name)
                    w("\n".join(textwrap.wrap(f"* {p.name}: {TERMS[p.name]}", WIDTH,
                                              initial_indent=pad + "    ",
                                              subsequent_indent=pad + "      ")) + "\n")
    text_out.flush()
    return defined


# -- HTML --------------------------------------------------------------------------------
_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafafa}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#5a6272;margin:0 0 18px}
.chain{display:flex;flex-wrap:wrap;align-items:stretch;gap:6px;margin:0 0 24px}
.box{background:#fff;border:1px solid #c9cfda;border-radius:8px;padding:8px 10px;min-width:150px}
.box h3{margin:0 0 4px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#3a4a6b}
.arrow{align-self:center;font-size:22px;color:#8a93a6}
.sec{background:#fff;border:1px solid #d7dce5;border-radius:8px;padding:10px 14px;margin:0 0 14px}
.sec h2{font-size:16px;margin:0 0 6px}
.line{margin:3px 0}
.code{font-family:ui-monospace,monospace;font-size:13px;white-space:pre-wrap;word-break:break-all}
.v{font-family:ui-monospace,monospace;background:#eef2fb;border-radius:3px;padding:0 2px}
.v.hl{background:#ffd76a}
.key-grid,.key-block{background:#d8f0dd}
.key-registers,.key-shared-memory,.key-program{background:#e9defa}
.key-token,.key-doorbell,.key-gp-put,.key-gp-put-prev{background:#fde2d2}
.key-args,.key-param-base,.key-cbank0{background:#d9ecfb}
.term{border-bottom:1px dotted #3a4a6b;cursor:help;position:relative}
.term:hover::after,.term:focus::after{content:attr(data-def);position:absolute;left:0;top:1.5em;
 z-index:9;width:340px;background:#1d2330;color:#fff;padding:6px 8px;border-radius:6px;
 font:13px/1.4 system-ui,sans-serif;white-space:normal}
dl{margin:0}dt{font-weight:600;margin-top:6px}dd{margin:0 0 0 16px}
"""

_JS = """
document.querySelectorAll('.v[data-k]').forEach(function(el){
  var k=el.getAttribute('data-k');
  function set(on){document.querySelectorAll('.v[data-k="'+k+'"]').forEach(function(o){
    o.classList.toggle('hl',on);});}
  el.addEventListener('mouseenter',function(){set(true);});
  el.addEventListener('mouseleave',function(){set(false);});
});
"""


def _key_class(key):
    head = key.split("-")[0] if key.split("-")[0] in ("grid", "block") else key
    return f" key-{head}" if head in ("grid", "block", "registers", "shared-memory", "program",
                                       "token", "doorbell", "gp-put", "gp-put-prev", "args",
                                       "param-base", "cbank0") else ""


def _html_part(part):
    from decoders.text import printable
    e = html.escape
    if isinstance(part, Term):
        return (f'<span class="term" tabindex="0" data-term="{e(part.name)}" '
                f'data-def="{e(part.name)}: {e(TERMS[part.name])}">'
                f'{e(part.shown)}</span>')
    if isinstance(part, Value):
        text = printable(part.text) if part.capture else part.text
        return (f'<span class="v{_key_class(part.key)}" data-k="{e(part.key)}">'
                f'{e(text)}</span>')
    return e(part)


def _html_line(line):
    cls = "line code" if line.code else "line"
    pad = f' style="margin-left:{line.indent * 18}px"' if line.indent else ""
    return f'<div class="{cls}"{pad}>{"".join(_html_part(p) for p in line.parts)}</div>'


def _safe(text):
    """Escaped for the page: controls as printable() shows them, then html.escape."""
    from decoders.text import printable
    return html.escape(printable(text))


def render_html(story, out):
    """One self-contained page: the chain of boxes (API call -> channel -> pushbuffer ->
    QMD -> constant bank 0 -> doorbell -> GPU) with the key fields, each section in full
    below, definitions on hover and in a glossary. No external resource."""
    e = html.escape
    from decoders.text import printable
    used = []
    for sec in story.sections:
        for line in sec.lines + sec.brief:
            for p in line.parts:
                if isinstance(p, Term) and p.name not in used:
                    used.append(p.name)
    title = f"explain: launch {story.index} of {printable(story.path)}"   # escaped below
    w = out.write
    w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
    w(f"<title>{e(title)}</title>\n<style>{_CSS}</style></head><body>\n")
    w(f"<h1>{e(title)}</h1>\n<p class=\"sub\">Every number on this page comes from the "
      f"capture. Hover a dotted word for its meaning, a value to see where else it "
      f"appears.</p>\n<div class=\"chain\" id=\"chain\">\n")
    boxes = [sec for sec in story.sections if sec.brief]
    for k, sec in enumerate(boxes):
        if k:
            w('<div class="arrow">&rarr;</div>\n')
        w(f'<div class="box" id="box-{e(sec.key)}"><h3>{_safe(sec.box or sec.title)}</h3>'
          + "".join(_html_line(l) for l in sec.brief) + "</div>\n")
    w("</div>\n")
    for k, sec in enumerate(story.sections):
        w(f'<div class="sec" id="sec-{e(sec.key)}"><h2>{k}. {_safe(sec.title)}</h2>\n')
        for line in sec.lines:
            w(_html_line(line) + "\n")
        w("</div>\n")
    w('<div class="sec" id="glossary"><h2>Words</h2><dl>\n')
    for name in used:
        w(f"<dt id=\"term-{e(name)}\">{e(name)}</dt><dd>{e(TERMS[name])}</dd>\n")
    w(f"</dl></div>\n<script>{_JS}</script>\n</body></html>\n")


# -- the command -------------------------------------------------------------------------
def explain(path, out, launch=None, html_path=None):
    """Decode `path`, tell launch `launch` (default: pick_launch) on `out`, or write the
    page to `html_path`. Returns the model's problems (the CLI prints them)."""
    import os
    from decoders.session import decode_capture
    model = decode_capture(path)
    index = pick_launch(model, launch)
    story = build_story(model, index)
    if html_path:
        tmp = f"{html_path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            render_html(story, f)
        os.replace(tmp, html_path)
    else:
        render_text(story, out)
        out.flush()
    return model.problems
