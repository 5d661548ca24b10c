"""Params of controls no public header defines (bit-15 GSS legacy controls, NV2081_BINAPI):
their size, and the words in them that match something the capture knows, as guesses.

A 4-byte-aligned NvU32 equal to a live handle of the object tree, or an 8-byte-aligned NvU64
inside GPU memory the capture saw mapped (ObjectTree.resolve), is listed with its offset.
Nothing here is a layout: each hit is marked "guess" (issue 18: no public source defines
these layouts; see decoders/rm/controls.py NON_PUBLIC for what each control is).
"""
import struct

TL_BUF_RM_CONTROL_PARAMS, TL_BF_BEFORE, TL_BF_AFTER = 1, 0x1, 0x2   # decoders/capture/format.py
_MIN_HANDLE = 0x10000       # small numbers (counts, flags, ids) are not taken for handles
_MIN_VA = 0x100000


def guesses(data, tree, limit=16):
    """[{offset, size, value, guess}] for the words of `data` that match the object tree."""
    data = bytes(data or b"")
    out = []
    if tree is None:
        return out
    objects = tree.objects
    for off in range(0, len(data) - 3, 4):
        (v,) = struct.unpack_from("<I", data, off)
        obj = objects.get(v) if v >= _MIN_HANDLE else None
        if obj is not None:
            out.append({"offset": off, "size": 4, "value": v,
                        "guess": f"handle {v:#x} ({obj.class_name})"})
        if off % 8 == 0 and off + 8 <= len(data):
            (q,) = struct.unpack_from("<Q", data, off)
            if q >= _MIN_VA and tree.resolve(q) is not None:
                r = tree.resolve(q)
                out.append({"offset": off, "size": 8, "value": q,
                            "guess": f"GPU VA: offset {r.offset:#x} in {r.obj.handle:#x} "
                                     f"({r.obj.class_name})"})
        if len(out) >= limit:
            break
    return out


def opaque_entry(info, rec, tree):
    """The `opaque` key of an ioctl JSON entry, or None when its params are public."""
    if info.params_public is not False or info.control is None:
        return None
    buf = next((b for b in getattr(rec, "buffers", None) or []
                if b.role == TL_BUF_RM_CONTROL_PARAMS), None)
    if buf is None:
        return {"control": f"{info.control:#010x}", "size": 0, "guesses": []}
    data = (buf.after if buf.flags & TL_BF_AFTER else
            buf.before if buf.flags & TL_BF_BEFORE else b"")
    return {"control": f"{info.control:#010x}", "size": buf.size,
            "guesses": guesses(data, tree)}
