"""Entry point: one IOCTL record of a capture -> a Node tree, a one-line summary, coverage.

Generic layer (STYLE.md 11): fd -> path, escape name (NV_ESC_*, UVM_*), RM class or control
name, status with its NV_ERR name, failed calls flagged. The family decoder renders params:
inputs from the before-copy (`ioctl.in.*`, `ioctl.params.in.*`), then outputs `=>` from the
after-copy (`ioctl.out.*`, `ioctl.params.out.*`: fields whose value changed, and status).
An unknown command prints class/category/index, its size and a hex dump (`ioctl.raw`).

Records are TL_IOCTL bodies (decoders/capture/format.py): fd, request, arg, ret, err,
arg_size, nbufs, flags, path, before, after, buffers[role, size, addr, flags, before, after].
Branch: "580" (default), "595"; a version string "580.159.04" gives its branch. For a branch
without tables (570, 610) names are used only where 580 and 595 agree, and that is noted.
"""
import errno as _errno
from dataclasses import dataclass, field

from decoders.escapes import numbers as ESC
from decoders.escapes.render import changed, hexdump, render
from decoders.escapes.structs import (NV_DMABUF_EXPORT_MAPPING_TYPE, NV_IOCTL_NUMA_STATUS,
                                      NV_RM_API_VERSION_CMD, NV_RM_API_VERSION_REPLY)
from decoders.errors import TraceLaunchError
from decoders.fields import bits, place
from decoders.node import Node
from decoders.rm import allocparams as AP
from decoders.rm import ctrlparams as CP
from decoders.rm.classes import class_name
from decoders.rm.controls import control_info, control_display, numbers_display
from decoders.rm.nvos import nv_ioctl_xfer_t
from decoders.rm.pointers import follow as follow_pointers
from decoders.rm.status import is_error, status_name
from decoders.uvm.ioctls import UVM_TOOLS_COMMANDS, uvm_command

TL_IF_ARG_BEFORE, TL_IF_ARG_AFTER, TL_IF_UVM_SIZE_UNKNOWN = 0x1, 0x2, 0x4
TL_BUF_RM_CONTROL_PARAMS, TL_BUF_RM_ALLOC_PARAMS, TL_BUF_XFER_ARGS = 1, 2, 3
TL_BF_BEFORE, TL_BF_AFTER, TL_BF_TRUNCATED, TL_BF_SIZE_FROM_CLASS = 0x1, 0x2, 0x4, 0x8

KNOWN_BRANCHES = ("580", "595")


def branch_of(version):
    """'580' for '580', '580.159.04' or 'r580'; None for an empty value."""
    if not version:
        return None
    text = str(version).strip().lstrip("rR")
    return text.split(".", 1)[0]


@dataclass
class Info:
    """What the generic layer identified (for coverage and the object tree)."""
    family: str = "unknown"          # nv, uvm, unknown
    escape: str = None               # NV_ESC_* / UVM_* name or None
    nr: int = None
    control: int = None
    control_public: bool = False
    control_named: bool = False      # class and category identified at least
    hclass: int = None
    class_named: bool = False
    params_decoded: bool = False
    failed: bool = False
    status: int = None
    args_before: dict = field(default_factory=dict)
    args_after: dict = field(default_factory=dict)
    params_before: dict = field(default_factory=dict)
    params_after: dict = field(default_factory=dict)
    inner_nr: int = None
    notes: list = field(default_factory=list)
    pointers: list = field(default_factory=list)    # outcome per followed NvP64 (rm/pointers.py)
    params_public: bool = None       # the params layout is one the public headers define


_SIZES = {}     # id(struct) -> (struct, its size): construct's sizeof() walks it each time


def _sizeof(st):
    entry = _SIZES.get(id(st))
    if entry is None or entry[0] is not st:
        if len(_SIZES) >= 4096:
            _SIZES.clear()
        entry = _SIZES[id(st)] = (st, st.sizeof())
    return entry[1]


def _get(rec, name, default=None):
    try:
        value = getattr(rec, name)
    except AttributeError:
        try:
            value = rec[name]
        except (KeyError, TypeError, IndexError):
            return default
    return default if value is None else value


def _path(rec):
    p = _get(rec, "path", b"")
    if isinstance(p, (bytes, bytearray)):
        p = bytes(p).split(b"\0", 1)[0].decode("utf-8", "replace")
    return str(p)


def _is_uvm(path):
    return "nvidia-uvm" in path


def escape_name(request, path):
    """NV_ESC_* or UVM_* name of an ioctl request on a file, or a `..._???` token."""
    path = path.decode("utf-8", "replace") if isinstance(path, (bytes, bytearray)) else (path or "")
    if _is_uvm(path):
        name, _, _ = uvm_command(request)
        return name or f"UVM_{request:#x}_???"
    if bits(request, *ESC.IOC_TYPE) == ESC.NV_IOCTL_MAGIC:
        nr = bits(request, *ESC.IOC_NR)
        row = ESC.ESCAPES.get(nr)
        return row[0] if row else f"NV_ESC_{nr:#04x}_???"
    return f"IOCTL_{request:#x}_???"


def _buffer(rec, role):
    for buf in _get(rec, "buffers", []) or []:
        if _get(buf, "role") == role:
            return buf
    return None


def _values(nodes):
    """{field: raw} of a node list; fields of nested structs are added by their own name."""
    out = {}
    for n in nodes:
        out[n.name] = n.raw
    for n in nodes:
        if n.raw is None and n.children and not n.name.endswith("]"):
            for k, v in _values(n.children).items():
                out.setdefault(k, v)
    return out


def _render_pair(st, before, after, have_before, have_after, prefix, hints=None, tables=None):
    """(input nodes, output nodes, notes) of one struct from its before/after copies."""
    notes = []
    ins, outs = [], []
    if have_before:
        ins, note = render(st, before, f"{prefix}.in", hints, tables)
        if note:
            notes.append(f"{prefix} before: {note}")
    if have_after:
        after_nodes, note = render(st, after, f"{prefix}.out", hints, tables)
        if note:
            notes.append(f"{prefix} after: {note}")
        outs = changed(ins, after_nodes) if have_before else after_nodes
        return ins, outs, notes, after_nodes
    notes.append(f"{prefix}: no after-copy (call did not complete)")
    return ins, outs, notes, []


def _errno_text(err):
    name = _errno.errorcode.get(err, "")
    return f"errno={err}" + (f" ({name})" if name else "")


class _Builder:
    def __init__(self, rec, branch):
        self.rec = rec
        self.branch = branch_of(branch) or "580"
        self.info = Info()
        self.path = _path(rec)
        self.request = _get(rec, "request", 0)
        self.root = Node("ioctl", "ioctl", self.request, "")
        self.flags = _get(rec, "flags", 0)

    def add(self, path, name, raw=None, display="", note=""):
        return self.root.add(Node(path, name, raw, display, None, [], note))

    def group(self, path, name, nodes, display=""):
        g = Node(path, name, None, display, None, list(nodes))
        self.root.add(g)
        return g

    def note(self, text):
        self.info.notes.append(text)

    # -- generic ------------------------------------------------------------------------
    def head(self):
        fd = _get(self.rec, "fd", -1)
        self.add("ioctl.fd", "fd", fd, f"{fd} {self.path or '?'}")
        req = self.request
        if _is_uvm(self.path):
            self.add("ioctl.request", "request", req, f"{req:#x} (UVM plain number)")
        else:
            self.add("ioctl.request", "request", req,
                     f"{req:#010x} (type {bits(req, *ESC.IOC_TYPE):#04x} nr {bits(req, *ESC.IOC_NR):#04x} "
                     f"size {bits(req, *ESC.IOC_SIZE)})")

    def finish(self):
        ret, err = _get(self.rec, "ret", 0), _get(self.rec, "err", 0)
        parts = [f"ret={ret}"]
        if ret < 0:
            parts.append(_errno_text(err))
            self.info.failed = True
        st = self.info.status
        if st is not None:
            parts.append(status_name(st))
            if is_error(st):
                self.info.failed = True
        node = self.add("ioctl.status", "status", st if st is not None else ret, " ".join(parts))
        if self.info.failed:
            node.note = "FAILED"
            self.root.note = "FAILED"
        if self.info.notes:
            self.add("ioctl.notes", "notes", None, "; ".join(self.info.notes))
        self.root.name = self.info.escape or escape_name(self.request, self.path)
        self.root.display = summarize_info(self)
        return self.root

    def raw_dump(self, data, size, why):
        shown = bytes(data or b"")
        self.add("ioctl.raw", "raw", shown, hexdump(shown), note=f"{why}; size {size} B")

    # -- NV 'F' escapes ------------------------------------------------------------------
    def nv(self):
        self.info.family = "nv"
        nr = bits(self.request, *ESC.IOC_NR)
        size = bits(self.request, *ESC.IOC_SIZE)
        before = _get(self.rec, "before", b"") if self.flags & TL_IF_ARG_BEFORE else None
        after = _get(self.rec, "after", b"") if self.flags & TL_IF_ARG_AFTER else None
        if nr == ESC.ESCAPE_BY_NAME["NV_ESC_IOCTL_XFER_CMD"] and size == _sizeof(nv_ioctl_xfer_t):
            self.xfer(before, after)
            return
        self.escape(nr, size, before, after, "ioctl")

    def xfer(self, before, after):
        self.info.escape = "NV_ESC_IOCTL_XFER_CMD"
        ins, outs, notes, _ = _render_pair(nv_ioctl_xfer_t, before or b"", after or b"",
                                           before is not None, after is not None, "ioctl.xfer")
        self.group("ioctl.xfer", "nv_ioctl_xfer_t", ins)
        vals = _values(ins) or {}
        cmd, size = vals.get("cmd"), vals.get("size")
        if cmd is None:
            self.note("xfer args not captured: inner escape unknown")
            return
        buf = _buffer(self.rec, TL_BUF_XFER_ARGS)
        if buf is None:
            self.note(f"inner args ({size} B at {vals.get('ptr', 0):#x}) not captured")
            # the request an NV_ESC_* ioctl with this NR would have had ('F', no size)
            request = place(ESC.NV_IOCTL_MAGIC, *ESC.IOC_TYPE) + place(cmd, *ESC.IOC_NR)
            self.info.escape = f"{escape_name(request, self.path)} (via XFER)"
            self.info.inner_nr = cmd
            return
        inner_before = buf.before if buf.flags & TL_BF_BEFORE else None
        inner_after = buf.after if buf.flags & TL_BF_AFTER else None
        if buf.flags & TL_BF_TRUNCATED:
            self.note(f"inner args truncated by the shim to {buf.size} B")
        self.info.inner_nr = cmd
        self.escape(bits(cmd, 0, 8), size, inner_before, inner_after, "ioctl", via_xfer=True)

    def escape(self, nr, size, before, after, prefix, via_xfer=False):
        row = ESC.ESCAPES.get(nr)
        self.info.nr = nr
        if row is None:
            self.info.escape = f"NV_ESC_{nr:#04x}_???"
            self.add("ioctl.escape", "escape", nr, f"{self.info.escape} (unknown escape)")
            self.raw_dump(before if before is not None else after, size, "unknown escape")
            return
        name, structs, where, branches, enote = row
        self.info.escape = name + (" (via XFER)" if via_xfer else "")
        self.info.params_public = True      # nv-ioctl.h / nvos.h; RM families refine it
        if branches is not None and self.branch not in branches:
            enote = (enote + "; " if enote else "") + (
                f"not defined on branch {self.branch} (only {'/'.join(branches)})")
        dev = "/dev/nvidiactl" if "nvidiactl" in self.path else "/dev/nvidiaN"
        if (where == "ctl" and dev != "/dev/nvidiactl") or (where == "dev" and dev == "/dev/nvidiactl"):
            if self.path:
                enote = (enote + "; " if enote else "") + f"issued on {self.path}, driver expects {where}"
        self.add("ioctl.escape", "escape", nr, self.info.escape, note=enote)
        st = structs.get(size)
        if st is None and "array" in structs:
            elem = structs["array"]
            esize = elem.sizeof()
            if size and size % esize == 0:
                from construct import Array, Struct
                st = Struct("entries" / Array(size // esize, elem))
        if st is None:
            why = (f"argument size {size} not one of {sorted(k for k in structs if isinstance(k, int))}"
                   if structs else "argument struct not declared")
            self.raw_dump(before if before is not None else after, size, why)
            return
        hints = ESC_HINTS.get(name, {})
        ins, outs, notes, after_nodes = _render_pair(
            st, before or b"", after or b"", before is not None, after is not None, prefix, hints,
            ESC_TABLES)
        for n in notes:
            self.note(n)
        self.group(f"{prefix}.in", "in", ins, st_name(st, name))
        self.group(f"{prefix}.out", "=>", outs)
        self.info.args_before = _values(ins)
        self.info.args_after = _values(after_nodes)
        self.info.params_decoded = True
        allv = {**self.info.args_before, **self.info.args_after}
        for sname in ("status", "Status"):
            if sname in self.info.args_after and name not in _STATUS_NOT_RM:
                self.info.status = self.info.args_after[sname]
        handler = FAMILY.get(name)
        if handler is not None:
            handler(self, allv)

    # -- RM families --------------------------------------------------------------------
    def rm_control(self, args):
        cmd = args.get("cmd")
        if cmd is None:
            return
        info = control_info(cmd, self.branch)
        self.info.control = cmd
        self.info.control_public = info.public
        self.info.control_named = info.public or info.cls_name is not None
        self.info.params_public = info.public
        self.add("ioctl.control", "control", cmd,
                 info.name or control_display(cmd, self.branch),
                 note=info.note if not info.public else (info.note or ""))
        size = args.get("paramsSize", 0)
        self.params(TL_BUF_RM_CONTROL_PARAMS, args.get("params", 0), size,
                    CP.ctrl_params(cmd, size), CP.TABLES)

    def rm_alloc(self, args):
        hclass = args.get("hClass")
        if hclass is None:
            return
        name, note = class_name(hclass, self.branch)
        self.info.hclass = hclass
        self.info.class_named = name is not None
        self.info.params_public = name is not None
        self.add("ioctl.class", "class", hclass, name or f"{hclass:#06x} CLASS_???", note=note)
        size = args.get("paramsSize", 0)
        st = AP.alloc_params_struct(hclass)
        spec = None
        if st is not None:
            spec = (AP.struct_name(st), st, AP.HINTS.get(id(st), {}), "")
        self.params(TL_BUF_RM_ALLOC_PARAMS, args.get("pAllocParms", 0), size, spec, AP.TABLES,
                    optional=True)

    def rm_alloc_memory(self, args):
        hclass = args.get("hClass")
        if hclass is not None:
            name, note = class_name(hclass, self.branch)
            self.info.hclass = hclass
            self.info.class_named = name is not None
            self.add("ioctl.class", "class", hclass, name or f"{hclass:#06x} CLASS_???", note=note)

    def check_version(self, args):
        ver = args.get("versionString")
        if isinstance(ver, (bytes, bytearray)):
            text = bytes(ver).split(b"\0", 1)[0].decode("ascii", "replace")
            self.add("ioctl.version", "version", text, f"{text} (branch {branch_of(text)})")

    def params(self, role, pointer, size, spec, tables, optional=False):
        buf = _buffer(self.rec, role)
        if buf is None:
            if pointer:
                self.note(f"params ({size} B at {pointer:#x}) not captured")
                self.info.params_decoded = False
            elif not optional and size:
                self.note("params pointer is NULL")
            if spec is None and not pointer:
                self.info.params_decoded = True
            return
        bsize = _get(buf, "size", 0)
        bflags = _get(buf, "flags", 0)
        before = _get(buf, "before", b"") if bflags & TL_BF_BEFORE else None
        after = _get(buf, "after", b"") if bflags & TL_BF_AFTER else None
        if bflags & TL_BF_TRUNCATED:
            self.note(f"params truncated by the shim to {bsize} of {size} B")
        if bflags & TL_BF_SIZE_FROM_CLASS and not size:
            # libcuda's RM_ALLOC passes paramsSize 0 (seen on the H100, captures/builtin-vadd);
            # the shim copied the class's params size from its table (shim/abi.h).
            self.note(f"paramsSize 0: {bsize} B copied by class size")
            size = bsize
        if before is None:
            self.note("params before-copy failed")
        if spec is None:
            self.info.params_decoded = False
            self.raw_dump(before if before is not None else after, size, "params not declared")
            return
        sname, st, hints, note = spec
        if note:
            self.note(note)
        if _sizeof(st) != size:
            # A layout that disagrees with the caller's size is not trusted as decoded.
            self.note(f"paramsSize {size} != sizeof({sname}) {_sizeof(st)}: decoded what is whole")
            self.info.params_decoded = False
        ins, outs, notes, after_nodes = _render_pair(
            st, before or b"", after or b"", before is not None, after is not None,
            "ioctl.params", hints, tables)
        for n in notes:
            self.note(n)
        self.group("ioctl.params.in", "params", ins, sname)
        self.group("ioctl.params.out", "=>", outs)
        self.info.params_before = _values(ins)
        self.info.params_after = _values(after_nodes)
        if role == TL_BUF_RM_CONTROL_PARAMS and self.info.control in CP.POINTERS:
            for node, outcome in follow_pointers(self.info.control, st, self.info.params_before,
                                                 _get(self.rec, "buffers", []), self.flags,
                                                 tables):
                self.root.add(node)
                self.info.pointers.append(outcome)

    # -- UVM ----------------------------------------------------------------------------
    def uvm(self):
        self.info.family = "uvm"
        name, st, note = uvm_command(self.request, self.branch)
        tools = "uvm-tools" in self.path
        if tools and self.request not in UVM_TOOLS_COMMANDS and name:
            note = (note + "; " if note else "") + "not a tools command"
        self.info.escape = name or f"UVM_{self.request:#x}_???"
        self.info.params_public = name is not None
        self.add("ioctl.escape", "escape", self.request, self.info.escape, note=note)
        size = _get(self.rec, "arg_size", 0)
        before = _get(self.rec, "before", b"") if self.flags & TL_IF_ARG_BEFORE else None
        after = _get(self.rec, "after", b"") if self.flags & TL_IF_ARG_AFTER else None
        if self.flags & TL_IF_UVM_SIZE_UNKNOWN:
            self.note("shim had no size for this UVM command: arguments not copied")
        if st is None:
            if name is None:
                self.raw_dump(before if before is not None else after, size, "unknown UVM command")
            elif before or after:
                self.raw_dump(before if before is not None else after, size, note or "layout unknown")
            return
        if size and size != _sizeof(st):
            self.note(f"arg_size {size} != sizeof {_sizeof(st)}: decoded what is whole")
        if before is None and after is None:
            return
        ins, outs, notes, after_nodes = _render_pair(
            st, before or b"", after or b"", before is not None, after is not None, "ioctl")
        for n in notes:
            self.note(n)
        self.group("ioctl.in", "in", ins, f"{name}_PARAMS")
        self.group("ioctl.out", "=>", outs)
        self.info.args_before = _values(ins)
        self.info.args_after = _values(after_nodes)
        self.info.params_decoded = True
        if "rmStatus" in self.info.args_after:
            self.info.status = self.info.args_after["rmStatus"]


def st_name(st, escape):
    """The module-level name a declared escape struct has (nvos, escapes.structs)."""
    names = _ST_NAMES.get(id(st))
    if names is None or names[0] is not st:
        names = None
    if names is None:
        from decoders.escapes import structs as S
        from decoders.rm import nvos
        found = next((n for mod in (nvos, S) for n, v in vars(mod).items() if v is st), None)
        if len(_ST_NAMES) >= 256:
            _ST_NAMES.clear()
        names = _ST_NAMES[id(st)] = (st, found)     # st kept: its id stays its own
    return names[1] if names[1] is not None else escape + " args"


_ST_NAMES = {}      # id(struct) -> (struct, its name in nvos / escapes.structs or None)


# Escapes whose `status` field is not an NV_STATUS (nv-ioctl-numa.h: the NUMA memory state).
_STATUS_NOT_RM = frozenset(("NV_ESC_NUMA_INFO", "NV_ESC_SET_NUMA_STATUS"))
ESC_HINTS = {
    "NV_ESC_CHECK_VERSION_STR": {"versionString": "str", "cmd": "enum:CMD", "reply": "enum:REPLY"},
    "NV_ESC_NUMA_INFO": {"nid": "dec", "status": "enum:NUMA_STATUS", "memblock_size": "hex",
                         "numa_mem_addr": "hex", "numa_mem_size": "hex",
                         "use_auto_online": "bool",
                         "offline_addresses.": {"addresses[]": "hex",
                                                "numEntries": "count_of:addresses"}},
    "NV_ESC_SET_NUMA_STATUS": {"status": "enum:NUMA_STATUS"},
    "NV_ESC_EXPORT_TO_DMABUF_FD": {"fd": "dec", "hClient": "handle", "totalSize": "hex",
                                   "mappingType": "enum:DMABUF_MAPPING_TYPE",
                                   "bAllowMmap": "bool", "numObjects": "count_of:handles",
                                   "handles[]": "handle", "offsets[]": "hex", "sizes[]": "hex"},
    "NV_ESC_RM_CONTROL": {"params": "ptr", "cmd": lambda v: control_display(v)},
}
ESC_TABLES = {"CMD": NV_RM_API_VERSION_CMD, "REPLY": NV_RM_API_VERSION_REPLY,
              "NUMA_STATUS": NV_IOCTL_NUMA_STATUS,
              "DMABUF_MAPPING_TYPE": NV_DMABUF_EXPORT_MAPPING_TYPE}
FAMILY = {
    "NV_ESC_RM_CONTROL": _Builder.rm_control,
    "NV_ESC_RM_ALLOC": _Builder.rm_alloc,
    "NV_ESC_RM_ALLOC_MEMORY": _Builder.rm_alloc_memory,
    "NV_ESC_RM_ALLOC_OBJECT": _Builder.rm_alloc_memory,
    "NV_ESC_CHECK_VERSION_STR": _Builder.check_version,
}
_LAST = [None, None, None]     # (record body, branch, result) of the last _decode


def _decode(rec, branch="580"):
    # The session decodes each ioctl twice in a row, for its summary and for the object
    # tree: the second asks for the same body (the same object) and gets the same result.
    last = _LAST
    if last[0] is rec and last[1] == branch:
        return last[2]
    out = last[2] = _decode_new(rec, branch)
    last[0], last[1] = rec, branch
    return out


def _decode_new(rec, branch):
    b = _Builder(rec, branch)
    b.head()
    try:
        if _is_uvm(b.path):
            b.uvm()
        elif bits(b.request, *ESC.IOC_TYPE) == ESC.NV_IOCTL_MAGIC:
            b.nv()
        else:
            b.info.escape = f"IOCTL_{b.request:#x}_???"
            size = _get(rec, "arg_size", 0)
            data = _get(rec, "before", b"") or _get(rec, "after", b"")
            b.raw_dump(data, size, "not an NVIDIA ioctl")
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:  # defensive
        b.note(f"decode stopped: {type(exc).__name__}: {exc}")
    return b.finish(), b


def decode_ioctl(rec, branch="580"):
    """Node tree of one TL_IOCTL record body (see module docstring for paths)."""
    return _decode(rec, branch)[0]


# -- summary -----------------------------------------------------------------------------
def _fmt(v):
    if isinstance(v, int):
        return f"{v:#x}" if v > 9 else str(v)
    if isinstance(v, (bytes, bytearray)):
        t = bytes(v).split(b"\0", 1)[0]
        return repr(t.decode("utf-8", "replace")) if t and t.isascii() else f"<{len(v)} B>"
    if isinstance(v, list):
        vals = list(v)
        while vals and vals[-1] == 0:
            vals.pop()
        return "[" + ",".join(_fmt(x) for x in vals[:8]) + (",..." if len(vals) > 8 else "") + "]"
    return str(v)


def _brief_nodes(nodes, limit=6, skip=()):
    parts = []
    for n in nodes:
        if n.name in skip or n.name.startswith("reserved"):
            continue
        if n.children and n.raw is None:
            inner = _brief_nodes(n.children, limit=3, skip=skip)
            if inner:
                parts.append(f"{n.name}{{{inner}}}")
            continue
        if n.raw in (0, None, b"", []) and n.name not in ("status", "rmStatus"):
            continue
        parts.append(f"{n.name}={n.display}")
        if len(parts) >= limit:
            parts.append("...")
            break
    return " ".join(parts)


def _group(root, path):
    return root.find(path)


def summarize_info(b):
    info, root = b.info, b.root
    esc = info.escape or "?"
    short = ESC.short_name(esc)
    ins = _group(root, "ioctl.in")
    outs = _group(root, "ioctl.out")
    pin = _group(root, "ioctl.params.in")
    pout = _group(root, "ioctl.params.out")
    a = {**info.args_before, **info.args_after}
    p = {**info.params_before, **info.params_after}
    tail = ""
    if info.failed:
        tail = " FAILED " + (status_name(info.status) if info.status is not None else
                             _errno_text(_get(b.rec, "err", 0)))
    if esc.startswith("NV_ESC_RM_ALLOC") and info.hclass is not None and "hObjectNew" in a:
        cname = class_name(info.hclass, b.branch)[0] or f"{info.hclass:#06x}"
        head = f"{short} {cname} {a.get('hObjectNew', 0):#x} under {a.get('hObjectParent', 0):#x}"
        body = _alloc_brief(info.hclass, p) if p else ""
        if not body and pin is not None:
            body = _brief_nodes(pin.children)
        return head + (f": {body}" if body else "") + tail
    if esc.startswith("NV_ESC_RM_CONTROL") and info.control is not None:
        head = f"{short} {control_display(info.control, b.branch)} on {a.get('hObject', 0):#x}"
        body_in = _brief_nodes(pin.children) if pin is not None else ""
        body_out = _brief_nodes(pout.children, skip=()) if pout is not None else ""
        body = " ".join(x for x in (body_in, f"=> {body_out}" if body_out else "") if x)
        for n in root.children:         # followed params pointers (rm/pointers.py): RM's answer
            if n.name.startswith("*") and n.children:
                shown = n.children[-1].display
                body += f" {n.name}=[{shown[:96]}{'...' if len(shown) > 96 else ''}]"
        return head + (f": {body.strip()}" if body.strip() else "") + tail
    if esc.startswith("NV_ESC_RM_FREE"):
        return f"{short} {a.get('hObjectOld', 0):#x} under {a.get('hObjectParent', 0):#x}" + tail
    body_in = _brief_nodes(ins.children) if ins is not None else ""
    body_out = _brief_nodes(outs.children, skip=("status", "rmStatus", "Status")) if outs is not None else ""
    body = " ".join(x for x in (body_in, f"=> {body_out}" if body_out else "") if x)
    if not body.strip():
        raw = root.find("ioctl.raw")
        if raw is not None:
            body = raw.note
    return f"{short}" + (f": {body}" if body.strip() else "") + tail


def _alloc_brief(hclass, p):
    from decoders.rm.classes import ROLE
    role = ROLE.get(hclass)
    if role == "channel" and "gpFifoOffset" in p:
        userd = (p.get("hUserdMemory") or [0])[0]
        uoff = (p.get("userdOffset") or [0])[0]
        eng = AP.NV2080_ENGINE_TYPE.get(p.get("engineType"), p.get("engineType"))
        return (f"gpFifoOffset={p['gpFifoOffset']:#x} entries={p.get('gpFifoEntries')} "
                f"userd={userd:#x}+{uoff:#x} engine={eng}")
    if role == "memory" and "size" in p:
        loc = AP.memory_location(hclass, p.get("attr"))
        return f"size={p['size']:#x} {loc or ''} attr={p.get('attr', 0):#x}".replace("  ", " ")
    if role == "virtual" and "limit" in p:
        return f"offset={p.get('offset', 0):#x} limit={p['limit']:#x}"
    parts = [f"{k}={_fmt(v)}" for k, v in p.items() if v not in (0, None, b"", []) and not isinstance(v, (bytes, bytearray, list)) and v is not None]
    return " ".join(parts[:6])


def summarize(rec, branch="580"):
    """One line, e.g. `RM_ALLOC HOPPER_CHANNEL_GPFIFO_A 0x5c00001c under 0x5c000012: ...`."""
    return decode_ioctl(rec, branch).display


def to_text(node, indent="  "):
    """Multi-line text view of a decode_ioctl node (strace-like; inputs then `=>` outputs)."""
    lines = [node.display + (f"  [{node.note}]" if node.note else "")]

    def walk(n, depth):
        for c in n.children:
            if c.name == "=>" and not c.children:
                continue
            label = c.name
            text = c.display
            if c.children and c.raw is None and c.path.count(".") <= 2:
                lines.append(f"{indent * depth}{label}: {text}" if text else f"{indent * depth}{label}:")
                walk(c, depth + 1)
                continue
            extra = f"  [{c.note}]" if c.note else ""
            if "\n" in text:
                lines.append(f"{indent * depth}{label}:{extra}")
                lines.extend(f"{indent * (depth + 1)}{t}" for t in text.splitlines())
            else:
                lines.append(f"{indent * depth}{label}={text}{extra}")
    walk(node, 1)
    return "\n".join(lines)


# -- branch and coverage -----------------------------------------------------------------
def detect_branch(records, default=None):
    """Branch from the first NV_ESC_CHECK_VERSION_STR in `records` (IOCTL bodies), else default."""
    for rec in records:
        path = _path(rec)
        req = _get(rec, "request", 0)
        if _is_uvm(path) or bits(req, *ESC.IOC_TYPE) != ESC.NV_IOCTL_MAGIC:
            continue
        if bits(req, *ESC.IOC_NR) != ESC.ESCAPE_BY_NAME["NV_ESC_CHECK_VERSION_STR"]:
            continue
        data = _get(rec, "before", b"") or _get(rec, "after", b"")
        text = bytes(data[8:72]).split(b"\0", 1)[0].decode("ascii", "replace")
        if text:
            return branch_of(text)
    return default


def opaque_key(info):
    """What an ioctl without a public params layout is counted under in `params_opaque`."""
    if info.control is not None:
        return f"{info.control:#010x}"
    if info.hclass is not None:
        return f"class {info.hclass:#06x}"
    return info.escape or "?"


# facts(): one ioctl's tuple, these fields in this order (a plain tuple: marshal writes it to
# the decode's file with the entry)
FACT_FIELDS = ("family", "escape_named", "params_decoded", "params_public", "opaque_key",
               "pointers", "control", "control_named", "control_public", "class",
               "class_named", "control_name", "class_name", "class_id")
COUNTED = slice(0, 11)      # what coverage_of counts
NAMES = slice(11, 14)       # (control name, class name, class id): what --ioctl NAME matches


def facts(rec, branch="580"):
    """What the naming coverage and a selection by name read of one ioctl (FACT_FIELDS): a
    decode keeps it with the ioctl's entry, in memory or in its file, and needs the body no
    more. None for a record too damaged to decode."""
    try:
        node, b = _decode(rec, branch)
    except TraceLaunchError:
        return None
    info = b.info
    named = (None, None, None)
    if info.escape and info.escape.startswith("NV_ESC_RM_"):
        c, k = node.find("ioctl.control"), node.find("ioctl.class")
        named = (c.display if c is not None else None,
                 k.display if k is not None else None, k.raw if k is not None else None)
    return (info.family, bool(info.escape and "???" not in info.escape),
            bool(info.params_decoded), bool(info.params_public),
            None if info.params_public else opaque_key(info), tuple(info.pointers),
            info.control, bool(info.control_named), bool(info.control_public),
            info.hclass, bool(info.class_named)) + named


def coverage(records, branch="580"):
    """coverage_of the records' facts (each record an IOCTL body)."""
    return coverage_of(facts(rec, branch) for rec in records)


def coverage_of(all_facts):
    """Fractions (0..1) of ioctls named and decoded, from their facts() (docs/json.md
    `stats`): params_decoded over every ioctl; params_decoded_public over the ioctls whose
    params layout the public headers define (a known escape or UVM command, a public control
    number, a public class); params_opaque counts the others by control (or class,
    escape); params_pointers counts the NvP64 fields of followed controls by outcome."""
    n = {"escapes": [0, 0], "controls_public": [0, 0], "controls": [0, 0], "classes": [0, 0],
         "uvm": [0, 0], "controls_not_public": [0, 0]}
    decoded, public = [0, 0], [0, 0]
    opaque, pointers = {}, {}
    for f in all_facts:
        if f is None:
            continue
        (family, escape_named, params_decoded, params_public, opaque_as, outcomes, control,
         control_named, control_public, hclass, class_named) = f[COUNTED]
        decoded[1] += 1
        decoded[0] += params_decoded
        if params_public:
            public[1] += 1
            public[0] += params_decoded
        else:
            opaque[opaque_as] = opaque.get(opaque_as, 0) + 1
        for outcome in outcomes:
            pointers[outcome] = pointers.get(outcome, 0) + 1
        if family in ("nv", "uvm"):
            n["escapes" if family == "nv" else "uvm"][1] += 1
            n["escapes" if family == "nv" else "uvm"][0] += escape_named
        if control is not None:
            n["controls"][1] += 1
            n["controls"][0] += control_named
            # of the commands the public 580 headers define, the share named by that name;
            # the others (GSP legacy pass-through, bit 15) count in `controls_not_public`
            n["controls_not_public"][1] += 1
            n["controls_not_public"][0] += not control_public
            if control_public:
                n["controls_public"][1] += 1
                n["controls_public"][0] += control_named
        if hclass is not None:
            n["classes"][1] += 1
            n["classes"][0] += class_named
    frac = lambda pair: (pair[0] / pair[1]) if pair[1] else 1.0  # noqa: E731
    return {"named": {k: frac(v) for k, v in n.items()}, "params_decoded": frac(decoded),
            "params_decoded_public": frac(public),
            "params_opaque": dict(sorted(opaque.items())),
            "params_pointers": dict(sorted(pointers.items()))}
