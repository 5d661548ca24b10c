"""Generic renderer: a construct Struct + bytes -> Node list, field by field.

Walks the declared layout (STYLE.md 11): each named field at its offset; a field that
does not fit in the bytes at hand stops the walk with a note (a truncated or short buffer
decodes what is whole and says what is missing). Display rules are by field name and
per-struct hints, so a struct is declared once and rendered generically:

* handles (`hXxx`) and pointers (`pXxx`, NvP64) in hex; `hClass` -> class name;
  `status`/`rmStatus` -> NV_ERR name; UUID bytes as GPU-xxxxxxxx-...; strings as text;
* reserved/padding fields hidden when zero, shown with a marker when not (STYLE.md 12);
* arrays of numbers in one node (trailing zeros trimmed); arrays of structs one node each.

Plans are computed once per Struct and cached.
"""
import struct as _struct

from construct import Array, Bytes, FormatField, Padded, Renamed, StringEncoded, Struct

from decoders.fields import flag_names
from decoders.node import Node
from decoders.rm.classes import class_display
from decoders.rm.status import status_name

_PLANS = {}
_FMT_SIGNED = {"b", "h", "i", "q"}


class Hints(dict):
    """Per-struct display hints: field name -> kind (class, status, handle, hex, dec, bool,
    uuid, str, ptr, engine, ctrl, flags:<table>, enum:<table>, count_of:<arr>,
    union:<tag field>:<table> for an NvU32 array that is a union selected by a sibling field)."""


def _plan(st):
    """[(name, offset, size, subcon, default display kind, what it is, integer unpack)]
    per field of `st`, worked out once per Struct: render() walks this."""
    entry = _PLANS.get(id(st))
    if entry is not None:
        return entry[0]
    plan, offset = [], 0
    for sc in st.subcons:
        name = sc.name if isinstance(sc, Renamed) else None
        inner = sc.subcon if isinstance(sc, Renamed) else sc
        size = inner.sizeof()
        if name is None:
            what = None
        elif isinstance(inner, Padded) or name.startswith("reserved") or name.startswith("_pad"):
            what = "reserved"
        elif isinstance(inner, FormatField):
            what = "int"
        elif isinstance(inner, Struct):
            what = "struct"
        elif isinstance(inner, Array):
            what = "array"
        else:
            what = "bytes"
        plan.append((name, offset, size, inner, _default_kind(name, inner) if name else None,
                     what, _unpacker(inner) if what == "int" else None))
        offset += size
    if len(_PLANS) >= 4096:                 # a Struct made per call (an array escape)
        _PLANS.clear()
    _PLANS[id(st)] = (plan, offset, st)     # st kept: its id stays its own
    return plan


def sizeof(st):
    _plan(st)
    return _PLANS[id(st)][1]


def _unpacker(inner):
    """The one-integer unpack of a FormatField (remembered per format)."""
    st = _UNPACK.get(inner.fmtstr)
    if st is None:
        st = _UNPACK[inner.fmtstr] = _struct.Struct(inner.fmtstr)
    return st.unpack


_UNPACK = {}


def _int(inner, data):
    return _unpacker(inner)(data)[0]


def _uuid(b):
    h = bytes(b).hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _cstr(b):
    raw = bytes(b).split(b"\0", 1)[0]
    return raw.decode("utf-8", "replace")


def _default_kind(name, inner):
    if name in ("hClass", "hclass", "classId", "classID"):
        return "class"
    if name in ("status", "rmStatus", "Status"):
        return "status"
    if len(name) > 1 and name[0] == "h" and name[1].isupper():
        return "handle"
    if len(name) > 1 and name[0] == "p" and name[1].isupper() and inner.sizeof() == 8:
        return "ptr"
    if name.endswith(("Size", "Entries", "Count", "count")) or (
            name.startswith("num") and name[3:4].isupper()):
        return "dec"
    if isinstance(inner, Bytes) and inner.length == 16 and "uuid" in name.lower():
        return "uuid"
    if isinstance(inner, (Bytes, StringEncoded)) and any(
            k in name for k in ("String", "Name", "name", "version", "Version")):
        return "str"
    return None


def format_value(value, kind=None, tables=None):
    """Display text of one scalar under a display kind."""
    if kind is None:                # the usual field: no hint, no name rule
        return f"{value:#x}" if value > 9 else str(value)
    if kind == "class":
        return class_display(value)
    if kind == "status":
        return status_name(value)
    if kind in ("handle", "hex", "ptr"):
        return f"{value:#x}"
    if kind == "dec":
        return str(value)
    if kind == "bool":
        return "true" if value == 1 else ("false" if value == 0 else f"{value:#x}")
    if isinstance(kind, str) and tables and ":" in kind:
        how, tname = kind.split(":", 1)
        table = tables.get(tname, {})
        if how == "enum":
            name = table.get(value)
            return name if name is not None else f"{value:#x} {tname}_???"
        if how == "flags":
            return flag_names(value, table)
    if callable(kind):
        return kind(value)
    return f"{value:#x}" if value > 9 else str(value)


def render(st, data, path, hints=None, tables=None, base=0):
    """Nodes for each field of `st` read from `data`; (nodes, truncated_note or '')."""
    hints = hints or {}
    nodes, data = [], bytes(data)
    n = len(data)
    counts = {}
    for name, offset, size, inner, default_kind, what, unpack in _plan(st):
        if what is None:
            continue
        fpath = f"{path}.{name}"
        if offset >= n:
            return nodes, f"truncated at {name} (offset {offset:#x}: have {n} of {sizeof(st)} B)"
        chunk = data[offset:offset + size]
        whole = len(chunk) == size
        kind = hints.get(name) or default_kind
        if what == "reserved":
            if any(chunk):
                nodes.append(Node(fpath, name, chunk, f"!nonzero reserved {chunk.hex()}", base + offset))
            if not whole:
                return nodes, f"truncated in {name}"
            continue
        if what == "int":
            if not whole:
                return nodes, f"truncated at {name} (offset {offset:#x}: have {n} of {sizeof(st)} B)"
            value = unpack(chunk)[0]
            if isinstance(kind, str) and kind.startswith("count_of:"):
                counts[kind.split(":", 1)[1]] = value
                kind = None
            nodes.append(Node(fpath, name, value, format_value(value, kind, tables), base + offset))
            continue
        if what == "struct":
            sub_hints = hints.get(name + ".") or {}
            children, note = render(inner, chunk, fpath, sub_hints, tables, base + offset)
            nodes.append(Node(fpath, name, None, _brief(children), base + offset, children, note))
            if note:
                return nodes, f"truncated in {name}"
            continue
        if what == "array":
            elem = inner.subcon
            esize = elem.sizeof()
            have = len(chunk) // esize if esize else 0
            limit = counts.get(name)
            shown = have if limit is None else min(have, limit)
            node = Node(fpath, name, None, "", base + offset)
            if isinstance(elem, Struct):
                sub_hints = hints.get(name + ".") or {}
                if limit is None and esize:
                    # the all-zero entries past the last non-zero byte: skipped without a
                    # look each (UVM_MAP_EXTERNAL_ALLOCATION's 256 per-GPU entries, one used,
                    # on every allocation of a job without a caching allocator)
                    shown = min(shown, -(-len(chunk.rstrip(b"\0")) // esize))
                for i in range(shown):
                    e = chunk[i * esize:(i + 1) * esize]
                    if limit is None and not any(e):
                        continue
                    children, _ = render(elem, e, f"{fpath}[{i}]", sub_hints, tables,
                                         base + offset + i * esize)
                    node.children.append(Node(f"{fpath}[{i}]", f"{name}[{i}]", None,
                                              _brief(children), base + offset + i * esize,
                                              children))
                node.display = f"{len(node.children)} of {inner.count}" + (
                    f" (count {limit})" if limit is not None else "")
            elif isinstance(elem, FormatField):
                values = [_int(elem, chunk[i * esize:(i + 1) * esize]) for i in range(shown)]
                node.raw = values
                if limit is None:
                    while values and values[-1] == 0:
                        values = values[:-1]
                ekind = hints.get(name + "[]") or kind
                node.display = "[" + ", ".join(format_value(v, ekind, tables) for v in values) + "]"
                if isinstance(kind, str) and kind.startswith("union:"):
                    node.display = _union_display(kind, nodes, node.raw, tables) or node.display
            else:
                node.raw = chunk
                node.display = chunk.hex()
            if limit is not None and limit > have:
                node.note = f"count {limit} but only {have} entries in the buffer"
            nodes.append(node)
            if not whole:
                return nodes, f"truncated in {name} ({have} whole of {inner.count} entries)"
            continue
        # Bytes / strings
        if kind == "uuid" and whole:
            display = _uuid(chunk)
        elif kind == "str" or isinstance(inner, StringEncoded):
            display = repr(_cstr(chunk))
        else:
            trimmed = chunk.rstrip(b"\0")
            display = trimmed.hex() if trimmed else "0"
        nodes.append(Node(fpath, name, chunk, display, base + offset))
        if not whole:
            return nodes, f"truncated in {name}"
    return nodes, ""


def _union_display(kind, siblings, words, tables):
    """`union:<tag field>:<table>`: a union of NvU32 members shown by the member the tag
    field (rendered earlier in the same struct) selects: the table maps a tag value to the
    member's field names, e.g. GRMGR queryType TPC_MASK -> `gpcId=0 tpcMask=0xff`."""
    _, tag_field, tname = kind.split(":", 2)
    tag = next((n.raw for n in siblings if n.name == tag_field), None)
    names = (tables or {}).get(tname, {}).get(tag)
    if not names:
        return ""
    return " ".join(f"{n}={format_value(v, 'hex' if v > 9 else None)}"
                    for n, v in zip(names, words))


def _brief(children, limit=6):
    parts = [f"{c.name}={c.display}" for c in children[:limit] if c.display not in ("", "0", "[]")]
    if not parts:
        return "0"
    return "{" + " ".join(parts) + (" ..." if len(children) > limit else "") + "}"


def changed(before_nodes, after_nodes, always=("status", "rmStatus", "Status")):
    """Nodes of the after-copy whose value differs from the before-copy (the outputs).

    Nodes are matched by their path below the first two components' prefix (`x.in.f` and
    `x.out.f` compare as `f`); status fields are always outputs.
    """
    def key(path, prefix_parts):        # ".".join(path.split(".")[prefix_parts:])
        parts = path.split(".", prefix_parts)
        return parts[prefix_parts] if len(parts) > prefix_parts else ""

    if not after_nodes:
        return []
    depth_b = len(before_nodes[0].path.split(".")) - 1 if before_nodes else 0
    depth_a = len(after_nodes[0].path.split(".")) - 1
    def sig(node):
        # Children count: an array of structs keeps its display ("5 of 16") while its
        # entries change (TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO samples, torch-small).
        raw = node.raw if not isinstance(node.raw, list) else tuple(node.raw)
        children = node.children
        return (raw, node.display, tuple(map(sig, children)) if children else ())

    old = {}
    for node in before_nodes:
        old[key(node.path, depth_b)] = sig(node)
    return [n for n in after_nodes
            if n.name in always or old.get(key(n.path, depth_a)) != sig(n)]


def hexdump(data, limit=256):
    """Compact hex dump: 16 bytes per line, offset prefix; cut at `limit` bytes."""
    data = bytes(data)
    lines = []
    for i in range(0, min(len(data), limit), 16):
        lines.append(f"{i:04x}: {data[i:i + 16].hex(' ')}")
    if len(data) > limit:
        lines.append(f"... {len(data) - limit} more bytes")
    return "\n".join(lines)
