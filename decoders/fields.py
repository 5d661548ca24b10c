"""Field tables for bit-packed words: the one place that shifts and masks (STYLE.md 5).

A field is declared as data, `(name, dword, lo, width, values)`, where `values` is
None, a dict {int: NAME} for an enum, or ("flags", {bit_value: NAME}) for a flag word.
`FieldTable` precomputes (index, shift, mask) once and extracts any number of words.
Array fields from the headers (`RELEASE_ENABLE(i)`) are expanded by the table modules
into one entry per index, named `RELEASE_ENABLE(0)` and so on.
"""
import struct
from collections import namedtuple

Field = namedtuple("Field", "name dword lo width values")


def bits(value, lo, width):
    """Extract `width` bits starting at bit `lo` of an integer."""
    return (value >> lo) & ((1 << width) - 1)


def any_common_bits(a, b):
    """Whether integers a and b have a set bit in common (a semaphore's ACQ_AND)."""
    return (a & b) != 0


def low_bits(values, width):
    """[bits(v, 0, width) for v in values], in one call."""
    mask = (1 << width) - 1
    return [v & mask for v in values]


def named(names):
    """A compiled function values -> {names[0]: values[0], ...}, in that order: the fields
    of a run of whole integers (a byte structure's, as struct unpacks them: no shift, no
    mask), named as one dict display instead of a zip of pairs per record. Names are
    declared in the source (decoders/capture/format.py), never read from input."""
    names = tuple(names)
    if not all(n.isidentifier() for n in names):
        raise ValueError(f"not field names: {names!r}")
    return eval("lambda w: {" + ", ".join(f"{n!r}: w[{i}]" for i, n in enumerate(names))
                + "}")  # noqa: S307 - built from our own names


def place(value, lo, width):
    """Inverse of bits(): put `value` into a word at bit `lo` (for building test input)."""
    return (value & ((1 << width) - 1)) << lo


def word_le(data, index):
    """Little-endian 32-bit word `index` of a bytes-like object."""
    return int.from_bytes(data[4 * index:4 * index + 4], "little")


def split_u64(value):
    """(low 32 bits, high 32 bits) of a 64-bit value."""
    return value & 0xFFFFFFFF, value >> 32


def join_u64(low, high, high_shift=32):
    """Combine a low word and a high part into one integer (addresses split over methods)."""
    return (high << high_shift) | low


def int_struct(con):
    """A struct.Struct of a construct Struct whose fields are all little-endian integers, in
    declaration order: unpack_from gives the same values as con.parse, without a Container
    per record (a library cubin's .nv.info holds tens of thousands)."""
    fmt = "<"
    for sc in con.subcons:
        fmtstr = getattr(sc.subcon, "fmtstr", "")
        if not fmtstr.startswith("<"):
            raise TypeError(f"{sc.name}: not a little-endian integer field")
        fmt += fmtstr[1:]
    return struct.Struct(fmt)


def align_up(value, alignment):
    """value rounded up to a multiple of alignment (padded ELF notes, fatbin entries)."""
    return -(-value // alignment) * alignment


def align_down(value, alignment):
    """value rounded down to a multiple of alignment."""
    return value - value % alignment


def shifted(value, shift):
    """value << shift, for header fields stored as ADDRESS_SHIFTED8 / SIZE_SHIFTED4."""
    return value << shift


def flag_names(value, table):
    """'A|B|0x40': the names of the flags {bit value: NAME} set in value, then any leftover
    bits in hex (STYLE.md 7); '0' when none is set."""
    names, rest = [], value
    for bit, name in sorted(table.items()):
        if bit and value & bit == bit:
            names.append(name)
            rest &= ~bit
    if rest:
        names.append(f"{rest:#x}")
    return "|".join(names) if names else "0"


def render_value(field, value):
    """Display text for one field value: enum name, flag names, or the number."""
    values = field.values
    if values is None:
        return f"{value:#x}" if value > 9 else str(value)
    if isinstance(values, tuple) and values and values[0] == "flags":
        return flag_names(value, values[1])
    name = values.get(value)
    return name if name is not None else f"{value:#x} {field.name}_???"


class FieldTable:
    """A named, validated table of fields over an array of 32-bit words."""

    def __init__(self, name, fields, provenance, nwords=None):
        self.name = name
        self.provenance = provenance
        self.fields = [f if isinstance(f, Field) else Field(*f) for f in fields]
        self.by_name = {f.name: f for f in self.fields}
        self.nwords = nwords if nwords is not None else (
            max((f.dword for f in self.fields), default=-1) + 1)
        # Precomputed (name, index, shift, mask); a field may span a word boundary
        # only in the 64-bit-wide form some headers use, handled by `_wide`.
        self._plan = []
        for f in self.fields:
            self._plan.append((f.name, f.dword, f.lo, (1 << f.width) - 1, f.lo + f.width > 32))
        self._unpack = None
        self._extract = None

    def extract(self, words):
        """{field name: value} for every field; words is a sequence of ints."""
        out = {}
        n = len(words)
        for name, index, shift, mask, wide in self._plan:
            if index >= n:
                continue
            if wide:
                value = words[index] | ((words[index + 1] << 32) if index + 1 < n else 0)
            else:
                value = words[index]
            out[name] = (value >> shift) & mask
        return out

    def get(self, words, name):
        f = self.by_name[name]
        value = words[f.dword]
        if f.lo + f.width > 32 and f.dword + 1 < len(words):
            value |= words[f.dword + 1] << 32
        return bits(value, f.lo, f.width)

    def render(self, name, value):
        return render_value(self.by_name[name], value)

    def unpacker(self):
        """A compiled function word -> tuple of field values, in table order.

        For single-word tables on hot paths (method headers): one generated
        expression instead of a loop, same (shift, mask) plan as extract().
        """
        if self._unpack is None:
            parts = []
            for name, index, shift, mask, wide in self._plan:
                if index or wide:
                    raise ValueError(f"{self.name}: unpacker() needs single-word fields ({name})")
                parts.append(f"(w >> {shift}) & {mask:#x}")
            self._unpack = eval(f"lambda w: ({', '.join(parts)},)")  # noqa: S307 - built from our own ints
        return self._unpack

    def extractor(self):
        """A compiled equivalent of extract(): words -> {field name: value}.

        The words must cover the whole table (callers pad short input with
        zeros or use extract(), which skips missing words).
        """
        if self._extract is None:
            items = []
            for name, index, shift, mask, wide in self._plan:
                src = f"(w[{index}] | (w[{index + 1}] << 32))" if wide else f"w[{index}]"
                items.append(f"{name!r}: ({src} >> {shift}) & {mask:#x}")
            self._extract = eval("lambda w: {" + ", ".join(items) + "}")  # noqa: S307
        return self._extract

    def picker(self, names):
        """A compiled function words -> tuple of the named fields' values, in `names`
        order: the same (index, shift, mask) plan as extract(), for callers that read a
        few fields of a wide table on a hot path. Words must cover those fields."""
        plan = {p[0]: p for p in self._plan}
        parts = []
        for name in names:
            _, index, shift, mask, wide = plan[name]
            src = f"(w[{index}] | (w[{index + 1}] << 32))" if wide else f"w[{index}]"
            parts.append(f"({src} >> {shift}) & {mask:#x}")
        return eval(f"lambda w: ({', '.join(parts)},)")  # noqa: S307 - built from our own ints

    def composer(self, values):
        """A compiled function words -> tuple of composed integers, one per item of
        `values`: an item is a sequence of (field name, bit position), and its integer is
        those fields' values placed at their positions and OR-ed. This is how a value the
        hardware splits over fields is declared once and read with the same (index, shift,
        mask) plan as extract(): an address over LOWER/UPPER words
        `(("ADDR_LOWER", 0), ("ADDR_UPPER", 32))`, a field stored shifted
        `(("SIZE_SHIFTED4", 4),)`, GP_ENTRY's `(("ENTRY0_GET", 2), ("ENTRY1_GET_HI", 32))`.
        Words must cover the fields read."""
        plan = {p[0]: p for p in self._plan}
        parts = []
        for terms in values:
            ors = []
            for name, at in terms:
                _, index, shift, mask, wide = plan[name]
                src = f"(w[{index}] | (w[{index + 1}] << 32))" if wide else f"w[{index}]"
                ors.append(f"((({src} >> {shift}) & {mask:#x}) << {at})" if at
                           else f"(({src} >> {shift}) & {mask:#x})")
            parts.append(" | ".join(ors) if ors else "0")
        return eval(f"lambda w: ({', '.join(parts)},)")  # noqa: S307 - built from our own ints

    def word_key(self, names):
        """A function words -> tuple of the whole words the named fields read: equal keys
        mean equal values of those fields, so a caller can memoize what it derives from
        them (a launch loop's QMDs repeat most of their words)."""
        from operator import itemgetter
        plan = {p[0]: p for p in self._plan}
        dwords = set()
        for name in names:
            _, index, _, _, wide = plan[name]
            dwords.update((index, index + 1) if wide else (index,))
        dwords = sorted(dwords)
        if not dwords:
            return lambda w: ()
        get = itemgetter(*dwords)
        return get if len(dwords) > 1 else (lambda w: (get(w),))

    def delta_extractor(self, names=None, bases=4):
        """A stateful equivalent of extractor() (or of dict(zip(names, picker(names))))
        for a stream of similar descriptors: words -> a fresh {field name: value} dict.

        It keeps the last `bases` (words, values) it produced; a new word tuple starts
        from the copy of the closest one and recomputes only the fields of the words that
        differ (a 96-word QMD of a launch loop differs from the previous same-shape QMD in
        ~1-6 words). Same (index, shift, mask) plan, same key order, same values as the
        full extraction: a field is recomputed whenever any word it reads differs."""
        return _DeltaExtractor(self, names, bases)

    def build(self, **values):
        """Words holding the given field values (test input and synthetic dumps)."""
        words = [0] * self.nwords
        for name, value in values.items():
            f = self.by_name[name]
            words[f.dword] |= place(value, f.lo, min(f.width, 32 - f.lo))
            if f.lo + f.width > 32:
                words[f.dword + 1] |= value >> (32 - f.lo)
        return words


class _DeltaExtractor:
    __slots__ = ("_full", "_update", "_bases", "_keep", "_nwords", "_limit")

    def __init__(self, table, names, keep):
        plan = table._plan if names is None else [p for n in names for p in table._plan
                                                  if p[0] == n]
        items = []
        per_word = {}
        for name, index, shift, mask, wide in plan:
            src = f"(w[{index}] | (w[{index + 1}] << 32))" if wide else f"w[{index}]"
            expr = f"({src} >> {shift}) & {mask:#x}"
            items.append(f"{name!r}: {expr}")
            for i in ((index, index + 1) if wide else (index,)):
                per_word.setdefault(i, []).append((name, expr))
        self._full = eval("lambda w: {" + ", ".join(items) + "}")  # noqa: S307 - our own ints
        self._nwords = table.nwords
        # Per word: (names of the fields that read it, words -> their values).
        update = [None] * (max(per_word, default=-1) + 1)
        for i, pairs in per_word.items():
            update[i] = (tuple(n for n, _ in pairs),
                         eval(f"lambda w: ({', '.join(e for _, e in pairs)},)"))  # noqa: S307
        self._update = tuple(update)
        self._bases = []            # [(words as one int, word count, values)], newest first
        self._keep = keep
        self._limit = len(update) // 4     # beyond this many differing words: extract it all

    def __call__(self, words, raw=None):
        """raw: the words' little-endian bytes when the caller has them (no re-pack)."""
        n = len(words)
        update = self._update
        if n < len(update):
            return self._full(words)        # raises as extractor() does on short words
        # The words as one integer: XOR with a kept base's finds the differing words in C.
        if raw is None or len(raw) != 4 * n:
            raw = struct.pack(f"<{n}I", *words)
        key = int.from_bytes(raw, "little")
        best, best_bits = None, None
        for base in self._bases:
            if base[1] != n:
                continue
            bits_differ = (key ^ base[0]).bit_count()
            if best_bits is None or bits_differ < best_bits:
                best, best_bits = base, bits_differ
                if not bits_differ:
                    return best[2].copy()
        if best is not None:
            x = key ^ best[0]
            out = best[2].copy()
            left = self._limit
            while x:
                i = ((x & -x).bit_length() - 1) >> 5     # lowest differing word
                x &= ~(0xFFFFFFFF << (i << 5))
                left -= 1
                if not left:
                    out = None                          # too many: extract it all
                    break
                if i < len(update):
                    u = update[i]
                    if u is not None:
                        out.update(zip(u[0], u[1](words)))
            if out is None:
                out = self._full(words)
        else:
            out = self._full(words)
        bases = self._bases
        bases.insert(0, (key, n, out.copy()))
        del bases[self._keep:]
        return out


def expand_array(name, dword, lo, width, values, stride_bits, count):
    """Fields for NAME(i), i < count, given the bit position of element 0 and the stride."""
    out = []
    for i in range(count):
        bit = dword * 32 + lo + i * stride_bits
        out.append(Field(name.replace("(i)", f"({i})").replace("(j)", f"({i})"),
                         bit // 32, bit % 32, width, values))
    return out
