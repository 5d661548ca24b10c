"""What differs between two launches: QMD fields, constant bank 0 words, pushbuffer methods.

`diff_launches(model_a, index_a, model_b, index_b)` compares launch `index_a` of one
decoded capture with launch `index_b` of another (or of the same one) and returns a
list of `Difference`s in three groups:

- `qmd`: every QMD field by its NVIDIA name (`launch.summary["qmd_fields"]`), e.g.
  `GRID_WIDTH`;
- `cbank0`: constant bank 0 as 32-bit little-endian words, the driver's area
  (`cbank0[0xc]`, with the name launch.ARCH_CBANK0 gives it: `gridDim.x`) and the
  kernel arguments (`cbank0[0x210+0x18]`: parameter base + offset);
- `method`: the method calls of the submission that carried the launch (decoded with the
  channel's earlier submissions fed first, so the subchannel binding is the channel's
  own), aligned by (class, method, n-th call of that method in the submission). The data
  words of inline uploads (LOAD_INLINE_DATA, LOAD_INLINE_QMD_DATA) are left out: they
  are the bytes of the QMD and of constant bank 0, which the two groups above show
  decoded and aligned.

Addresses: each difference carries `address` = True when it is a virtual address (or a
half or shifted form of one): a QMD field named `*ADDR*`/`*POINTER*`, a method whose
name or fields say ADDR/OFFSET/POINTER/UPPER/LOWER, or a cbank0 word (not one of the
named 32-bit fields) whose aligned 64-bit value, on both sides, either lies in memory its
capture mapped or reserved (the RM object tree: UVM/RM GPU mappings, CPU mappings,
virtual ranges) or lies in [2^46, 2^47), the top quarter of the 47-bit user address space
where Linux places mappings and CUDA its VA windows (the shared and local memory windows
in the driver's cbank0 area are in no mapping). Limitation: two packed 32-bit counts
whose upper one is 16384 or more read as an address there.
Two runs of one program allocate at different addresses, so these differ between any
two captures; they are real differences and are reported, in their own group (the CLI's
`--ignore-addresses` drops them).
"""
import re
from dataclasses import asdict, dataclass

from decoders.errors import TraceLaunchError
from decoders.fields import align_down

ADDRESS_LO, ADDRESS_HI = 1 << 32, 1 << 48
HIGH_BAND = (1 << 46, 1 << 47)
_QMD_ADDRESS = re.compile(r"ADDR|POINTER")
_METHOD_ADDRESS = re.compile(r"ADDR|OFFSET|POINTER|UPPER|LOWER")
_INLINE_PAYLOAD = ("LOAD_INLINE_DATA", "LOAD_INLINE_QMD_DATA")


class DiffError(TraceLaunchError):
    """A launch index that is not in the capture."""


@dataclass
class Difference:
    group: str          # "qmd", "cbank0" or "method"
    name: str           # GRID_WIDTH, cbank0[0xc] gridDim.x, CBC0 OFFSET_OUT_UPPER
    a: object           # value in the first launch (None: absent there)
    b: object
    address: bool = False

    def to_json(self):
        return asdict(self)

    def text(self):
        def show(v):
            if v is None:
                return "(absent)"
            if self.group == "qmd" and not self.address:
                return str(v)
            return f"{v:#x}" if isinstance(v, int) else str(v)
        label = self.name if self.name.startswith(self.group) else f"{self.group} {self.name}"
        return f"{label}: {show(self.a)} -> {show(self.b)}"


def _summary(launch):
    return launch.summary if hasattr(launch, "summary") else launch


def default_launch(model):
    """The launch `trace-decode diff` compares when none is named: the first kernel
    launch whose submission rang between a BEGIN and END mark (the built-in launch marks
    its cuLaunchKernel), else the first kernel launch (not the driver's GRID_NULL
    scheduling QMD), else launch 0 (decoders/pick.py)."""
    from decoders.pick import PickError, choose
    try:
        return choose(model)
    except PickError:
        raise DiffError(f"{model.path}: no launch decoded in this capture") from None


def _launch(model, index):
    if not 0 <= index < len(model.launches):
        raise DiffError(f"{model.path}: no launch {index}: the capture has "
                        f"{len(model.launches)} launch(es), numbered from 0")
    return model.launches[index]


def _objects(model, launch):
    """The object tree of the launch's process (RM handles and VAs are per process)."""
    tree = model.objects
    return tree.view(launch.pid) if tree is not None and hasattr(tree, "view") else tree


# -- QMD --------------------------------------------------------------------------------
def qmd_differences(sa, sb):
    out = []
    if sa.get("qmd_version") != sb.get("qmd_version"):
        out.append(Difference("qmd", "version", sa.get("qmd_version"), sb.get("qmd_version")))
    fa, fb = sa.get("qmd_fields") or {}, sb.get("qmd_fields") or {}
    for name in list(fa) + [n for n in fb if n not in fa]:
        va, vb = fa.get(name), fb.get(name)
        if va != vb:
            out.append(Difference("qmd", name, va, vb, bool(_QMD_ADDRESS.search(name))))
    return out


# -- constant bank 0 --------------------------------------------------------------------
def _cbank0(s):
    """(bytes of cbank0 as far as known, parameter base, {offset: name}) of a summary."""
    from decoders.launch import ARCH_CBANK0
    drv, params = s.get("cbank0_driver"), s.get("params")
    if not drv and not params:
        return b"", None, {}
    base = params["offset"] if params else drv["size"]
    data = bytearray(bytes.fromhex(drv["hex"]) if drv else b"")
    data += bytes(max(0, base - len(data)))          # unknown driver bytes read as zero
    data = data[:base]
    if params:
        data += bytes.fromhex(params["hex"])
    spec = ARCH_CBANK0.get((params or {}).get("arch"), {})
    names = {off + k: (name if k == 0 else f"{name}+{k:#x}")
             for name, off, size in spec.get("fields", ()) for k in range(0, size, 4)}
    return bytes(data), base, names


def _pair_word(off):
    """The other 4-byte word of the 8-byte value that the word at `off` is half of."""
    return off + 4 if off % 8 == 0 else off - 4


def _qword(data, off):
    q = align_down(off, 8)
    return int.from_bytes(data[q:q + 8].ljust(8, b"\0"), "little") if q < len(data) else None


def _is_address(v, objects):
    """A 64-bit value that is a virtual address of the capture (see the module docstring)."""
    if v is None or not ADDRESS_LO <= v < ADDRESS_HI:
        return False
    if HIGH_BAND[0] <= v < HIGH_BAND[1]:
        return True
    if objects is None:
        return False
    if objects.resolve(v) is not None:
        return True
    return any(base <= v <= limit for base, limit, _ in getattr(objects, "virtual_ranges", ()))


def cbank0_differences(sa, sb, objects_a=None, objects_b=None):
    da, base_a, names = _cbank0(sa)
    db, base_b, _ = _cbank0(sb)
    out = []
    if base_a != base_b and base_a is not None and base_b is not None:
        out.append(Difference("cbank0", "parameter base", base_a, base_b))
    base = base_a if base_a is not None else base_b
    for off in range(0, max(len(da), len(db)), 4):
        wa = int.from_bytes(da[off:off + 4], "little") if off + 4 <= len(da) else None
        wb = int.from_bytes(db[off:off + 4], "little") if off + 4 <= len(db) else None
        if wa == wb:
            continue
        if base is not None and off >= base:
            name = f"cbank0[{base:#x}+{off - base:#x}]"
        else:
            name = f"cbank0[{off:#x}]" + (f" {names[off]}" if off in names else "")
        named = (off in names or _pair_word(off) in names) and (base is None or off < base)
        addr = not named and _is_address(_qword(da, off), objects_a) and \
            _is_address(_qword(db, off), objects_b)
        out.append(Difference("cbank0", name, wa, wb, addr))
    return out


# -- methods ----------------------------------------------------------------------------
def submission_methods(model, record_index):
    """[(class id, method, value, name, address?)] of one submission's method calls, with
    the channel's earlier submissions decoded first (as the report does)."""
    from decoders.methods import method_table
    from decoders.pushbuf import StreamDecoder
    sub = next((s for s in model.submissions if s["index"] == record_index), None)
    if sub is None:
        return []
    dec = StreamDecoder(gpu=_gpu(model), host_class=sub["class"])
    for s in model.submissions:
        if s["index"] >= record_index:
            break
        if s["pid"] == sub["pid"] and s["token"] == sub["token"]:
            for g in s["segments"]:
                dec.feed(bytes(g["hex"]), g["va"])
    out = []
    for g in sub["segments"]:
        for pkt in dec.feed(bytes(g["hex"]), g["va"]):
            for m, v in pkt.calls():
                cls = pkt.class_for(m)
                name = pkt.describe(m, v)[0]
                if name.split("(")[0] in _INLINE_PAYLOAD:
                    continue
                table = method_table(cls) if cls is not None else None
                mdef = table.get(m) if table is not None else None
                words = name + " " + " ".join(f.name for f in (mdef.fields if mdef else ()))
                out.append((cls, m, v, name, bool(_METHOD_ADDRESS.search(words))))
    return out


def _gpu(model):
    cc = str(model.meta.get("compute_capability", "9.0")).split(".")[0]
    return {"8": "ampere", "9": "hopper", "10": "blackwell", "12": "blackwell"}.get(cc, "hopper")


def method_differences(ma, mb):
    def keyed(calls):
        seen, out = {}, {}
        for cls, m, v, name, addr in calls:
            n = seen[(cls, m)] = seen.get((cls, m), -1) + 1
            out[(cls, m, n)] = (v, name, addr)
        return out
    ka, kb = keyed(ma), keyed(mb)
    out = []
    for key in list(ka) + [k for k in kb if k not in ka]:
        a, b = ka.get(key), kb.get(key)
        va, vb = (a[0] if a else None), (b[0] if b else None)
        if va == vb:
            continue
        cls, m, n = key
        name = (a or b)[1]
        label = f"{cls:04X} {name}" if cls is not None else name
        if n:
            label += f" #{n + 1}"
        out.append(Difference("method", label, va, vb, bool((a or b)[2])))
    return out


def diff_launches(model_a, index_a, model_b, index_b):
    """Differences between launch index_a of model_a and launch index_b of model_b."""
    la, lb = _launch(model_a, index_a), _launch(model_b, index_b)
    sa, sb = _summary(la), _summary(lb)
    out = qmd_differences(sa, sb) + cbank0_differences(sa, sb, _objects(model_a, la),
                                                       _objects(model_b, lb))
    out += method_differences(submission_methods(model_a, la.record_index),
                              submission_methods(model_b, lb.record_index))
    return out


def describe_launch(model, index):
    """{capture, launch, record_index, grid, block, kernel} naming a compared launch."""
    launch = _launch(model, index)
    s = _summary(launch)
    return {"capture": model.path, "launch": index, "record_index": launch.record_index,
            "channel": launch.channel, "qmd_address": s.get("qmd_address"),
            "kernel": s.get("kernel"), "grid": s.get("grid"), "block": s.get("block")}
