"""A kernel's arguments as an API record's sections give them (PARAM_LAYOUT from
cuFuncGetParamInfo, PARAM_DATA, PARAM_WINDOWS, EXTRA_BUFFER): shared by a launch call
(decoders/cuda/calls.py) and a graph's kernel node (decoders/cuda/graphs.py), which carries
the same sections; and an argument's bytes read as its C type says (arg_value)."""
import re
import struct

from decoders.cuda import api as A
from decoders.cuda import types as T

_SLOT = T.PARAM_SLOT.compile()
_SLOT_SIZE = T.PARAM_SLOT.sizeof()
_LAYOUTS = {}   # PARAM_LAYOUT bytes -> ((index, offset, size), ...)


def kernel_params(sections):
    """[{index, offset, size, bytes}] of the kernel's arguments as the call passed them, or
    None without a PARAM_LAYOUT."""
    lay = sections.get("PARAM_LAYOUT")
    if lay is None:
        return None
    raw = lay["data"]
    data = sections.get("PARAM_DATA")
    buf = data["data"] if data and "UNREADABLE" not in data["flags"] else None
    slots = _LAYOUTS.get(raw)
    if slots is None:       # a launch loop passes the same layout again and again
        slots = tuple((i, s.offset, s.size) for i, s in enumerate(
            _SLOT.parse(raw[i * _SLOT_SIZE:(i + 1) * _SLOT_SIZE])
            for i in range(len(raw) // _SLOT_SIZE)))
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[bytes(raw)] = slots
    return [{"index": i, "offset": o, "size": n,
             "bytes": buf[o:o + n] if buf is not None else None} for i, o, n in slots]


def param_windows(sections):
    """Without a driver layout: [bytes behind kernelParams[i]] (PARAM_WINDOW_BYTES each)."""
    w = sections.get("PARAM_WINDOWS")
    if not w:
        return None
    n = A.PARAM_WINDOW_BYTES
    return [w["data"][i:i + n] for i in range(0, len(w["data"]) - n + 1, n)]


def param_bytes(sections):
    """The argument block as one buffer (offsets from the parameter base), or None."""
    d = sections.get("PARAM_DATA")
    if d and "UNREADABLE" not in d["flags"]:
        return d["data"]
    e = sections.get("EXTRA_BUFFER")
    if e and "UNREADABLE" not in e["flags"]:
        return e["data"]
    return None


_INTEGER = re.compile(r"(unsigned |signed )?(char|short|int|long|long long)|bool|"
                      r"[a-z0-9_]*int[0-9]*_t|size_t")
_FLOAT = {4: struct.Struct("<f"), 8: struct.Struct("<d")}
_KINDS = {}     # C type -> how its bytes read as a number (_kind): one regex match per type


def _kind(ctype):
    """'pointer', 'float', 'signed', 'unsigned' or None (not a number) for a C type."""
    kind = _KINDS.get(ctype, _KINDS)
    if kind is _KINDS:
        if ctype and "*" in ctype:
            kind = "pointer"
        elif ctype in ("float", "double"):
            kind = "float"
        elif ctype is None or _INTEGER.fullmatch(ctype):
            kind = "signed" if ctype is not None and not ctype.startswith(
                ("unsigned", "u", "size_t", "bool")) else "unsigned"
        else:
            kind = None
        if len(_KINDS) >= 4096:
            _KINDS.clear()
        _KINDS[ctype] = kind
    return kind


def arg_value(raw, ctype):
    """A parameter's bytes as a number where its type says how."""
    if raw is None:
        return None
    kind, n = _kind(ctype), len(raw)
    if kind == "pointer":
        return int.from_bytes(raw, "little") if n == 8 else None
    if kind == "float":
        if n not in _FLOAT:
            return None
        v = _FLOAT[n].unpack(raw)[0]
        # JSON has no infinity or NaN (json.dumps wrote -Infinity, which strict parsers
        # refuse): named as Python names them, "-inf", "inf", "nan" (docs/json.md)
        return v if v - v == 0 else repr(v)
    if kind is not None and n in (1, 2, 4, 8):
        return int.from_bytes(raw, "little", signed=kind == "signed")
    return None
