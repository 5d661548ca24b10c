"""Method tables for the classes a channel binds: host, compute, copy, inline-to-memory.

Each class module is plain data: `METHODS = {byte_offset: declaration}` where a
declaration is `(NAME, fields)` or, for an array method such as
`LOAD_INLINE_QMD_DATA(i)`, `(NAME, fields, stride_bytes, count)`. A field is
`(FIELD, lo, width)` or `(FIELD, lo, width, values)`, values being a dict of
unshifted header values (STYLE.md 7). A class whose method is identical to the
previous class's reuses the same tuple (STYLE.md 8).

This module is the class registry: (id, name, engine, arch, module). A subchannel's
class comes from SET_OBJECT plus this registry (`method_table(class_id)`).
"""
from collections import namedtuple
import importlib

from decoders.fields import Field, FieldTable, render_value

ClassInfo = namedtuple("ClassInfo", "id name engine arch module")

CLASSES = {c.id: c for c in (
    ClassInfo(0xC56F, "AMPERE_CHANNEL_GPFIFO_A", "host", "ampere", "clc56f"),
    ClassInfo(0xC86F, "HOPPER_CHANNEL_GPFIFO_A", "host", "hopper", "clc86f"),
    ClassInfo(0xC96F, "BLACKWELL_CHANNEL_GPFIFO_A", "host", "blackwell", "clc96f"),
    ClassInfo(0xC6C0, "AMPERE_COMPUTE_A", "compute", "ampere", "clc6c0"),
    ClassInfo(0xC7C0, "AMPERE_COMPUTE_B", "compute", "ampere", "clc7c0"),
    ClassInfo(0xC9C0, "ADA_COMPUTE_A", "compute", "ada", "clc9c0"),
    ClassInfo(0xCBC0, "HOPPER_COMPUTE_A", "compute", "hopper", "clcbc0"),
    ClassInfo(0xCDC0, "BLACKWELL_COMPUTE_A", "compute", "blackwell", "clcdc0"),
    ClassInfo(0xCEC0, "BLACKWELL_COMPUTE_B", "compute", "blackwell", "clcec0"),
    ClassInfo(0xC6B5, "AMPERE_DMA_COPY_A", "copy", "ampere", "clc6b5"),
    ClassInfo(0xC7B5, "AMPERE_DMA_COPY_B", "copy", "ampere", "clc7b5"),
    ClassInfo(0xC8B5, "HOPPER_DMA_COPY_A", "copy", "hopper", "clc8b5"),
    ClassInfo(0xC9B5, "BLACKWELL_DMA_COPY_A", "copy", "blackwell", "clc9b5"),
    ClassInfo(0xCAB5, "BLACKWELL_DMA_COPY_B", "copy", "blackwell", "clcab5"),
    ClassInfo(0xA140, "KEPLER_INLINE_TO_MEMORY_B", "i2m", "kepler", "cla140"),
)}

# Default classes per GPU family when the capture shows no SET_OBJECT / channel alloc
# (hw-facts.md section 1, 2.3 and 2.7; h100-measured.md section 1 for Hopper).
GPU_DEFAULTS = {
    "ampere": {"host": 0xC56F, "compute": 0xC7C0, "copy": 0xC7B5},
    "ada": {"host": 0xC56F, "compute": 0xC9C0, "copy": 0xC7B5},
    "hopper": {"host": 0xC86F, "compute": 0xCBC0, "copy": 0xC8B5},
    "blackwell": {"host": 0xC96F, "compute": 0xCEC0, "copy": 0xCAB5},
}
# Per-family alternatives accepted for `gpu=` (a GA100 is AMPERE_COMPUTE_A, GB100 is _A).
GPU_ALIASES = {"ga100": ("ampere", {"compute": 0xC6C0, "copy": 0xC6B5}),
               "gb100": ("blackwell", {"compute": 0xCDC0, "copy": 0xC9B5})}

# Subchannel conventions (hw-facts.md 2.3: cla06fsubch.h).
SUBCH_COMPUTE = 1
SUBCH_COPY = 4


def gpu_defaults(gpu):
    """{'host','compute','copy': class id} for a GPU family name."""
    key = (gpu or "hopper").lower()
    if key in GPU_ALIASES:
        family, over = GPU_ALIASES[key]
        d = dict(GPU_DEFAULTS[family])
        d.update(over)
        return d
    if key not in GPU_DEFAULTS:
        raise ValueError(f"unknown gpu family {gpu!r} (one of {', '.join(GPU_DEFAULTS)})")
    return dict(GPU_DEFAULTS[key])


class MethodDef:
    """One method address of one class: name, field table, array index."""
    __slots__ = ("name", "base", "index", "table", "fields")

    def __init__(self, name, base, index, fields, class_name):
        self.name = name
        self.base = base
        self.index = index
        self.fields = fields
        self.table = FieldTable(f"{class_name}.{name}", fields, None, nwords=1)

    def decode(self, value):
        """[(field, value, display)] for one data word."""
        out = []
        for f in self.fields:
            v = self.table.get((value,), f.name)
            out.append((f.name, v, render_value(f, v)))
        return out

    def render(self, value):
        parts = [f"{n} = {d}" for n, v, d in self.decode(value)]
        return f"{self.name}: {', '.join(parts)}"


def _fields(decl):
    return [Field(f[0], 0, f[1], f[2], f[3] if len(f) > 3 else None) for f in decl]


class MethodTable:
    """A class's methods compiled to byte offset -> MethodDef (arrays expanded). Each
    MethodDef (its FieldTable) is made when its offset is first asked for: a decode asks
    for a few dozen of the ~900 a compute class declares (~4 ms to make them all)."""

    def __init__(self, info, module):
        self.info = info
        self.module = module
        self.provenance = getattr(module, "PROVENANCE", None)
        self._decls = {}        # offset -> (name, base name, array index, field declaration)
        self._defs = {}         # offset -> MethodDef, made on first get()
        for offset, decl in module.METHODS.items():
            name, fdecl = decl[0], decl[1]
            if len(decl) > 2:
                stride, count = decl[2], decl[3]
                base = name.split("(")[0]
                for i in range(count):
                    self._decls[offset + i * stride] = (f"{base}({i})", name, i, fdecl)
            else:
                self._decls[offset] = (name, name, None, fdecl)

    def get(self, offset):
        mdef = self._defs.get(offset)
        if mdef is None:
            decl = self._decls.get(offset)
            if decl is None:
                return None
            name, base, index, fdecl = decl
            mdef = self._defs[offset] = MethodDef(name, base, index, _fields(fdecl),
                                                  self.info.name)
        return mdef

    @property
    def by_offset(self):
        """{offset: MethodDef} of every method, in declaration order."""
        return {offset: self.get(offset) for offset in self._decls}


_TABLES = {}


def class_info(class_id):
    return CLASSES.get(class_id)


def class_module(class_id):
    info = CLASSES[class_id]
    return importlib.import_module(f"decoders.methods.{info.module}")


def method_table(class_id):
    """The compiled MethodTable of a registered class, or None for an unknown class."""
    table = _TABLES.get(class_id)
    if table is None:
        info = CLASSES.get(class_id)
        if info is None:
            return None
        table = _TABLES[class_id] = MethodTable(info, class_module(class_id))
    return table


def unknown_display(offset, value):
    """How an unknown method prints: its offset and the raw value (STYLE.md 7)."""
    return f"UNKNOWN_{offset:#06x}: {value:#010x}"
