"""Hopper TMA descriptors (CUtensorMap) named by the calls that made them (session 44).

A CUtensorMap is 128 opaque bytes the driver writes (cuTensorMapEncodeTiled) and a kernel
takes by value: a `__grid_constant__` parameter, or a member of a parameter struct (cuBLASLt's
nvjet kernels pass one struct that holds several). The format of the bytes is not public, so
they are not parsed: the shim keeps each call's inputs and the 128 bytes it made
(decoders/cuda/api.py KINDS TENSOR_MAP), and a kernel's argument bytes that hold those 128
bytes at a 64-byte-aligned offset of constant bank 0 (the type's alignment: on the H200 the
parameters start at c[0x0][0x210] and a first CUtensorMap parameter sits at 0x240,
measured in captures/tma) are named by that call: the data type, the global address (and
the allocation it falls in), the dimensions, strides, box, swizzle and the rest as the
program asked for them.

cuTensorMapReplaceAddress changes a map's address in place: its record holds the map before
and after, so the new bytes are named by the old map's description with the new address.
"""
from decoders.cuda import types as T
from decoders.cuda.api import TENSOR_MAP_BYTES as MAP_BYTES, TENSOR_MAP_RANK_MAX
from decoders.fields import low_bits

_ENCODE, _REPLACE = "cuTensorMapEncodeTiled", "cuTensorMapReplaceAddress"
ALIGN = 64
# Maps remembered per decode, oldest forgotten first: a library may encode a map per call
# (a new address each time), so a long job's are not all kept. A map forgotten and then
# launched is left unnamed.
MAX_MAPS = 16384
# the enum and cuuint32_t arguments: the low half of their register words only
_ARGS = ("tensorDataType", "tensorRank", "interleave", "swizzle", "l2Promotion", "oobFill")


def _enum(table, value):
    return table.get(value, str(value))


def describe(call):
    """The description of the map a successful cuTensorMapEncodeTiled made (None when its
    record lacks the inputs or the map's bytes)."""
    a = call.args
    if any(k not in a for k in _ARGS + ("globalAddress",)):   # (fewer words: hostile)
        return None
    dtype, rank, interleave, swizzle, l2, oob = low_bits([a[k] for k in _ARGS], 32)
    inputs = call.sections.get("TENSOR_MAP_INPUTS")
    if not 1 <= rank <= TENSOR_MAP_RANK_MAX or inputs is None or "UNREADABLE" in inputs["flags"] or \
            len(inputs["data"]) != T.TL_TENSOR_MAP_INPUTS.sizeof(rank=rank):
        return None
    v = T.TL_TENSOR_MAP_INPUTS.parse(inputs["data"], rank=rank)
    return {"made_by": {"name": call.name, "index": call.index},
            "encoded_by": call.index,
            "data_type": _enum(T.CU_TENSOR_MAP_DATA_TYPE, dtype),
            "rank": rank, "global_address": a["globalAddress"],
            "global_dim": list(v.globalDim), "global_strides": list(v.globalStrides),
            "box_dim": list(v.boxDim), "element_strides": list(v.elementStrides),
            "interleave": _enum(T.CU_TENSOR_MAP_INTERLEAVE, interleave),
            "swizzle": _enum(T.CU_TENSOR_MAP_SWIZZLE, swizzle),
            "l2_promotion": _enum(T.CU_TENSOR_MAP_L2_PROMOTION, l2),
            "oob_fill": _enum(T.CU_TENSOR_MAP_FLOAT_OOB_FILL, oob)}


def _map_bytes(section):
    if section is None or section["flags"] or len(section["data"]) != MAP_BYTES:
        return None
    return section["data"]


class TensorMaps:
    """The maps the capture's calls made, by (pid, their 128 bytes): for each, the calls that
    made those bytes, oldest first (Triton encodes a descriptor anew at every launch, the
    same bytes each time; a launch is named by the newest made before its submission,
    though its QMD may be decoded after later calls were seen)."""

    PER_KEY = 8     # calls kept per distinct map: the newest

    def __init__(self):
        self._by_bytes = {}
        self._pids = set()      # processes that made any: the others' launches are not scanned

    def observe(self, c):
        """A call that returned successfully."""
        made = _map_bytes(c.out_sections.get("TENSOR_MAP"))
        if made is None:
            return
        if c.base == _ENCODE:
            d = describe(c)
        elif c.base == _REPLACE:
            old = _map_bytes(c.sections.get("TENSOR_MAP"))
            was = self._made_before(self._by_bytes.get((c.pid, old)), c.index) \
                if old is not None else None
            d = dict(was) if was is not None else {"encoded_by": None}
            d["made_by"] = {"name": c.name, "index": c.index}
            d["global_address"] = c.args.get("globalAddress")
        else:
            return
        if d is None:
            return
        key = (c.pid, made)
        calls = self._by_bytes.pop(key, None)      # (made again: now the newest key)
        if calls is None:
            calls = []
            if len(self._by_bytes) >= MAX_MAPS:
                del self._by_bytes[next(iter(self._by_bytes))]
        calls.append(d)
        del calls[:-self.PER_KEY]
        self._by_bytes[key] = calls
        self._pids.add(c.pid)

    @staticmethod
    def _made_before(calls, index):
        for d in reversed(calls or ()):
            if d["made_by"]["index"] < index:
                return d
        return None

    def find(self, pid, data, base, before):
        """[(offset, description)] of the known maps in a kernel's argument bytes `data`,
        which start at offset `base` of constant bank 0: offsets into `data` where the bank's
        offset is a multiple of 64; each named by the newest call that made its bytes before
        record `before` (the launch's submission)."""
        if pid not in self._pids or len(data) < MAP_BYTES:
            return []
        get = self._by_bytes.get
        found = []
        for off in range(-base % ALIGN, len(data) - MAP_BYTES + 1, ALIGN):
            d = self._made_before(get((pid, data[off:off + MAP_BYTES])), before)
            if d is not None:
                found.append((off, d))
        return found
