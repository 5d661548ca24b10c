"""The buffers that NvP64 fields of RM_CONTROL params point to, as the shim copied them
(TL_BUF_RM_PARAMS_POINTER buffers, issue 18) -> nodes under `ioctl.params.<field>`.

Layouts are the POINTERS rows of decoders/rm/ctrlparams_ext.py (field, count, entry, hints);
this module only walks them. Each followed field gives one node with an `in` child (the
before-copy: what the caller passed, e.g. the GR info indices asked for) and a `=>` child (the
after-copy: what RM wrote, e.g. (index name, value) pairs). A field that was not followed says
why: NULL, count 0, unreadable (the copy failed: a bad pointer), or not in this capture (a
record written by a shim that did not follow pointers: no TL_IF_PTRS_FOLLOWED).
"""
from construct import Array, Bytes, Struct

from decoders.escapes.render import render
from decoders.node import Node
from decoders.rm.ctrlparams_ext import POINTERS

TL_BUF_RM_PARAMS_POINTER = 5
TL_BF_BEFORE, TL_BF_AFTER, TL_BF_TRUNCATED = 0x1, 0x2, 0x4
TL_IF_PTRS_FOLLOWED = 0x8

_OFFSETS = {}       # id(params Struct) -> (Struct, {field: offset})
_STRUCTS = {}       # (field, entry id, n) -> (entry, Struct of n entries)


def field_offsets(st):
    entry = _OFFSETS.get(id(st))
    if entry is None or entry[0] is not st:
        out, off = {}, 0
        for sc in st.subcons:
            if sc.name:
                out[sc.name] = off
            off += sc.sizeof()
        entry = _OFFSETS[id(st)] = (st, out)
    return entry[1]


def _list_struct(field, entry, n):
    key = (field, id(entry), n)
    got = _STRUCTS.get(key)
    if got is None or got[0] is not entry:
        if len(_STRUCTS) >= 1024:
            _STRUCTS.clear()
        is_str = isinstance(entry, Bytes) and entry.length == 1
        sub = Bytes(n) if is_str else Array(n, entry)
        got = _STRUCTS[key] = (entry, Struct(field / sub))
    return got[1]


def _entries_display(node):
    """One line for a rendered list: `NAME=value ...` for {index, data} entries, the
    list itself for numbers, the text for a string."""
    if node.children and all(len(c.children) == 2 for c in node.children):
        pairs = []
        for c in node.children:
            idx, data = c.children
            if idx.name == "index" and data.name == "data":
                pairs.append(f"{idx.display}={data.display}")
        if len(pairs) == len(node.children):
            return " ".join(pairs)
    return node.display


def _hints(row):
    if isinstance(row.hints, dict):
        return {row.field + ".": row.hints}
    return {row.field + "[]": row.hints, row.field: row.hints}


def follow(cmd, st, before_vals, buffers, rec_flags, tables):
    """[(Node, outcome)] for the pointer rows of control `cmd`; outcome is one of
    followed, null, empty, unreadable, not_captured."""
    rows = POINTERS.get(cmd)
    if not rows:
        return []
    offsets = field_offsets(st)
    by_field = {getattr(b, "field", 0): b for b in buffers or []
                if getattr(b, "role", None) == TL_BUF_RM_PARAMS_POINTER}
    out = []
    for row in rows:
        ptr = before_vals.get(row.field) or 0
        count = row.count if isinstance(row.count, int) else before_vals.get(row.count, 0)
        path = f"ioctl.params.{row.field}"
        buf = by_field.get(offsets.get(row.field))
        if buf is None:
            if not ptr:
                outcome, text = "null", "NULL: nothing to follow"
            elif not count:
                outcome, text = "empty", f"{ptr:#x}, count 0: nothing to copy"
            elif rec_flags & TL_IF_PTRS_FOLLOWED:
                outcome, text = "unreadable", f"{ptr:#x}: not copied"
            else:
                outcome, text = "not_captured", (
                    f"{ptr:#x}: contents not in this capture (recorded by a shim that "
                    f"did not follow params pointers, before capture format role 5)")
            out.append((Node(path, "*" + row.field, None, text), outcome))
            continue
        esize = row.entry.sizeof()
        n = buf.size // esize if esize else 0
        lst = _list_struct(row.field, row.entry, n)
        node = Node(path, "*" + row.field, None,
                    f"{n} x {esize} B at {buf.addr:#x}"
                    + (f" (count {row.count})" if isinstance(row.count, str) else ""))
        if buf.flags & TL_BF_TRUNCATED:
            node.note = f"cut to {buf.size} B by the shim (count {count})"
        hints = _hints(row)
        got = False
        for flag, data, sub, label in ((TL_BF_BEFORE, buf.before, "in", "in"),
                                       (TL_BF_AFTER, buf.after, "out", "=>")):
            if not buf.flags & flag:
                continue
            got = True
            nodes, _ = render(lst, data, f"{path}.{sub}", hints, tables)
            if nodes:
                inner = nodes[0]
                node.add(Node(f"{path}.{sub}", label, None, _entries_display(inner), None,
                              inner.children or [inner]))
        if not got:
            node.display = f"{buf.addr:#x}: unreadable (both copies failed: a bad pointer)"
            out.append((node, "unreadable"))
            continue
        out.append((node, "followed"))
    return out
