"""Framing: split a capture file into records, streaming, and report what is not whole.

Bad input never raises out of `CaptureReader.records()`: each problem (a hole, a torn or
truncated record, a body that does not parse) becomes a CaptureError in `.problems`
naming the offset and record index, and reading resumes at the next whole record.
Only a file that is not a capture at all (bad magic, unreadable header) raises.
"""
import gzip
import io
import json
from dataclasses import dataclass

from construct import ConstructError

from decoders.capture import format as F
from decoders.errors import CaptureError

_HEADER = F.TL_RECORD_HEADER.compile()
_BODIES = {}
for _name, _struct in F.BODY.items():
    try:
        _BODIES[_name] = _struct.compile()
    except Exception:  # construct cannot compile every form; the core parser is then used
        _BODIES[_name] = _struct

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
MAX_RECORD = 1 << 31


@dataclass
class Record:
    index: int
    offset: int
    type: str
    flags: int
    pid: int
    tid: int
    seq: int
    t_start: int
    t_end: int
    body: object          # construct Container, or None when the body did not parse
    complete: bool


def open_capture(path):
    """A binary stream over the capture, transparently gunzipped or unzstd'ed."""
    raw = open(path, "rb")
    magic = raw.read(4)
    raw.seek(0)
    if magic[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw)
    if magic == ZSTD_MAGIC:
        try:
            import zstandard
        except ImportError as exc:
            raw.close()
            raise CaptureError("capture is zstd-compressed but the zstandard module is not "
                               "installed (pip install zstandard)", offset=0) from exc
        return zstandard.ZstdDecompressor().stream_reader(raw)
    return raw


class CaptureReader:
    """Read a capture: `.header`, `.meta`, then iterate `.records()`."""

    def __init__(self, stream, name="capture"):
        self.name = name
        self.stream = stream
        self.problems = []
        self.end_record = None
        self.pos = 0
        head = self._read(F.TL_FILE_HEADER_FIXED)
        if len(head) < 8 or head[:8] != F.TL_MAGIC:
            raise CaptureError(f"not a trace-launch capture: magic {head[:8]!r} at offset 0x0 "
                               f"(want {F.TL_MAGIC!r})", offset=0)
        if len(head) < F.TL_FILE_HEADER_FIXED:
            raise CaptureError(f"file header truncated: {len(head)} of "
                               f"{F.TL_FILE_HEADER_FIXED} bytes", offset=len(head))
        fixed = F.TL_FILE_HEADER_PREFIX.parse(head)
        if fixed.version != F.TL_VERSION:
            raise CaptureError(f"capture format version {fixed.version} is not supported "
                               f"(this decoder reads {F.TL_VERSION})", offset=8)
        hsize = fixed.header_size
        if hsize < F.TL_FILE_HEADER_FIXED or hsize > (1 << 20) or fixed.meta_len > hsize:
            raise CaptureError(f"file header size {hsize} / meta {fixed.meta_len} out of range",
                               offset=12)
        rest = self._read(hsize - F.TL_FILE_HEADER_FIXED)
        if len(rest) < hsize - F.TL_FILE_HEADER_FIXED:
            raise CaptureError(f"file header truncated: {F.TL_FILE_HEADER_FIXED + len(rest)} "
                               f"of {hsize} bytes", offset=self.pos)
        self.header = fixed
        meta = rest[:fixed.meta_len]
        self.header_bytes = head + rest
        try:
            self.meta = json.loads(meta.decode("utf-8")) if meta else {}
            if not isinstance(self.meta, dict):
                raise ValueError("not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            self.meta = {}
            self.problems.append(CaptureError(f"header metadata is not JSON ({exc})",
                                              offset=F.TL_FILE_HEADER_FIXED))
        self.cursor = fixed.cursor
        self.data_end = fixed.cursor   # the shim's cursor: where written data ends

    def _read(self, n):
        data = self.stream.read(n)
        self.pos += len(data)
        return data

    def _problem(self, message, offset, index):
        self.problems.append(CaptureError(message, offset=offset, record=index))

    def records(self):
        """Yield every whole record; problems go to self.problems."""
        index = 0
        hsize = F.TL_RECORD_HEADER_SIZE
        pending = b""
        while True:
            off = self.pos - len(pending)
            if self.data_end and off >= self.data_end:
                break
            head = pending + self._read(hsize - len(pending))
            pending = b""
            if not head:
                break
            if len(head) < hsize:
                if head.strip(b"\0"):
                    self._problem(f"record {index} truncated at offset {off:#x} "
                                  f"(need {hsize} B of header, have {len(head)})", off, index)
                elif self.data_end and off < self.data_end:
                    self._problem(f"file ends at offset {off + len(head):#x}, before the "
                                  f"header's cursor {self.data_end:#x}", off, index)
                break
            h = _HEADER.parse(head)
            if h.sync != F.TL_RECORD_SYNC:
                # A hole (a writer died between reserving and framing) or garbage: resync on
                # the next 8-aligned sync word.
                skipped, pending = self._resync(head)
                kind = "zero-filled hole" if not head.strip(b"\0") else "bad sync word"
                self._problem(f"{kind} at offset {off:#x}: skipped {skipped} bytes to the next "
                              f"record", off, index)
                if not pending:
                    break
                continue
            length = h.length
            if length < hsize or length % F.TL_ALIGN or length > MAX_RECORD:
                self._problem(f"record {index} at offset {off:#x} has bad length {length}",
                              off, index)
                skipped, pending = self._resync(head[8:], skip_first=True)
                if not pending:
                    break
                continue
            body = self._read(length - hsize)
            if len(body) < length - hsize:
                self._problem(f"record {index} truncated at offset {off:#x} "
                              f"(need {length} B, have {hsize + len(body)})", off, index)
                break
            yield from self._decode(index, off, h, body)
            index += 1

    def _resync(self, head, skip_first=False):
        """Scan forward for the next sync word; returns (bytes skipped, bytes from the sync)."""
        sync = F.TL_RECORD_SYNC.to_bytes(4, "little")
        buf = bytearray(head[8:] if not skip_first else head)
        skipped = 8
        while True:
            for i in range(0, len(buf) - 3, 8):
                if buf[i:i + 4] == sync:
                    return skipped + i, bytes(buf[i:])
            skipped += len(buf) - (len(buf) % 8)
            keep = buf[len(buf) - (len(buf) % 8):]
            more = self._read(1 << 16)
            if not more:
                return skipped, b""
            buf = bytearray(keep) + more

    def _decode(self, index, off, h, body):
        tname = F.TL_REC.get(h.type)
        if h.type == 0:
            tname = "UNFINISHED"
        if tname is None:
            self._problem(f"record {index} at offset {off:#x} has unknown type {h.type}",
                          off, index)
            return
        parsed = None
        if tname in _BODIES:
            try:
                parsed = _BODIES[tname].parse(body)
            except (ConstructError, ValueError, IndexError, OverflowError, MemoryError) as exc:
                self._problem(f"record {index} ({tname}) at offset {off:#x}: body does not "
                              f"parse ({type(exc).__name__})", off, index)
                return
        if tname == "END":
            self.end_record = parsed
        yield Record(index, off, tname, h.flags, h.pid, h.tid, h.seq, h.t_start, h.t_end,
                     parsed, bool(h.flags & F.TL_RF_COMPLETE))


def read_capture(path):
    """(reader, list of records) for a whole file; convenience for tests and small files."""
    reader = CaptureReader(open_capture(path), name=str(path))
    return reader, list(reader.records())


def cstr(b):
    """Bytes of a path/label field as text (lossless for odd bytes)."""
    return bytes(b).decode("utf-8", "backslashreplace")


__all__ = ["CaptureReader", "Record", "open_capture", "read_capture", "cstr", "io"]
