"""Helpers of the capture reader for untrusted input (issue 20): what a file that is not a
capture looks like, why a body did not parse (in words, never a bare exception class
name), the count maximum's error, and the head of a text record over its kind's maximum."""
import re
import struct

from construct import Aligned, Bytes, FormatField, Renamed, StreamError, Struct

from decoders.capture import format as F
from decoders.errors import CaptureError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _field_ref(expr, known):
    """The field name of a `this.name` expression over one of `known`, else None."""
    r = repr(expr)
    if r.startswith("this['") and r.endswith("']") and r[6:-2] in known:
        return r[6:-2]
    return None


EXPECTED = "expected a capture written by trace-launch (.tlc, .tlc.gz or .tlc.zst)"


def not_a_directory(path):
    import os
    inside = [n for n in ("capture.tlc.gz", "capture.tlc", "capture.tlc.zst")
              if os.path.isfile(os.path.join(path, n))]
    hint = f"; {os.path.join(path, inside[0])} is one" if inside else ""
    err = CaptureError(f"is a directory, not a trace-launch capture: {EXPECTED}{hint}")
    err.offset = 0
    return err


def what_it_is(head, compressed=None):
    """A few words on what a file that is not a capture looks like, from its first bytes."""
    inner = f"{compressed}-compressed " if compressed else ""
    if not head:
        return f"an empty {inner}file" if inner else "an empty file"
    if head[:4] == b"\x7fELF":
        return f"an {inner}ELF file (trace-decode cubin and sass read those)"
    for magic, name in ((b"\x50\x4b\x03\x04", "a zip archive"), (b"\x1f\x8b", "gzip data"),
                        (ZSTD_MAGIC, "zstd data"), (b"\xa1\x1c\xeb\x50", "a fatbin"),
                        (b"\x50\xed\x55\xba", "a fatbin")):
        if head.startswith(magic):
            return f"{inner}{name}"
    if not head.strip(b"\0"):
        return f"{inner}zero bytes (the first {len(head)} are all 0)"
    text = head.lstrip()
    if text[:1] in (b"{", b"["):
        return f"{inner}JSON text (a --json report is not a capture)"
    try:
        decoded = head.decode("utf-8")
    except UnicodeDecodeError:
        decoded = None
    # text: printable characters and line ends (a NUL or another control byte is not text)
    if decoded is not None and all(c.isprintable() or c in "\t\n\r" for c in decoded):
        return f"{inner}text"
    return f"{inner}binary data that is not a capture"


def why(exc):
    """Why a body did not parse, in words (never a bare exception class name)."""
    text = str(exc)
    m = re.search(r"expected (\d+)", text) if isinstance(exc, StreamError) else None
    if m:
        return f"a {m.group(1)}-byte field runs past the end of the record"
    m = re.search(r"buffer of (\d+) bytes", text) if isinstance(exc, struct.error) else None
    if m:
        return f"{m.group(1)} bytes of integer fields run past the end of the record"
    if isinstance(exc, MemoryError):
        return "a field is too large to hold in memory"
    return text or f"{type(exc).__name__} while reading its fields"


def over(ref, count, cmax):
    return ValueError(f"{ref} {count} is over its maximum of {cmax} (format.py TL_COUNT_MAX)")


def cut_text(tname, prefix):
    """(fields, text field name, its declared length) of a body declared as integers then one
    padded byte string sized by one of them (NOTE, MARK, OPEN, MMAP), with the string cut
    to what `prefix` holds and at most TL_TEXT_MAX bytes; None for other declarations or
    when the integers are not all there."""
    con = F.BODY.get(tname)
    if con is None or not con.subcons:
        return None
    *ints, last = con.subcons
    if not all(isinstance(sc, Renamed) and isinstance(sc.subcon, FormatField) for sc in ints):
        return None
    sub = last.subcon if isinstance(last, Renamed) else None
    if not (isinstance(sub, Aligned) and isinstance(sub.subcon, Bytes)):
        return None
    ref = _field_ref(sub.subcon.length, {sc.name for sc in ints})
    fixed = Struct(*ints)
    size = fixed.sizeof()
    if ref is None or len(prefix) < size:
        return None
    fields = fixed.parse(prefix[:size])
    fields.pop("_io", None)
    true_len = fields[ref]
    fields[last.name] = prefix[size:size + min(true_len, F.TL_TEXT_MAX)]
    return fields, last.name, true_len
