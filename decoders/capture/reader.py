"""Framing: split a capture file into records, streaming, and report what is not whole.

Bad input never raises out of `CaptureReader.records()`: each problem (a hole, a torn or
truncated record, a body that does not parse) becomes a CaptureError in `.problems`
naming the offset and record index, and reading resumes at the next whole record.
Only a file that is not a capture at all (bad magic, unreadable header) raises.
"""
import gzip
import io
import json
import struct
import zlib
from dataclasses import dataclass

from construct import (Aligned, Array, Bytes, Construct, ConstructError, Container, Renamed,
                       StreamError, Struct, evaluate)

from decoders.capture import format as F
from decoders.capture.files import open_capture  # noqa: F401 (imported from here too)
from decoders.errors import CaptureError
from decoders.fields import named
from decoders.capture.untrusted import (EXPECTED, ZSTD_MAGIC, _field_ref,  # noqa: F401
                                        cut_text, over, what_it_is, why)

def _struct_parser(con):
    """A construct Struct of fixed-width integers as (struct.Struct, namedtuple class):
    the same declaration (format.py), parsed by one C call per record instead of construct's
    per-field reads. None when a field is not a plain FormatField."""
    from collections import namedtuple
    from construct import FormatField
    names, fmt = [], "<"
    for sc in con.subcons:
        sub = sc.subcon if isinstance(sc, Renamed) else None
        if sub is None or not isinstance(sub, FormatField) or sub.fmtstr[0] != "<":
            return None
        names.append(sc.name)
        fmt += sub.fmtstr[1:]
    return struct.Struct(fmt), namedtuple(f"{type(con).__name__}_{len(names)}", names)


_HEADER = F.TL_RECORD_HEADER.compile()
_new_tuple = tuple.__new__
_HEADER_FAST = _struct_parser(F.TL_RECORD_HEADER)
if _HEADER_FAST is None or _HEADER_FAST[0].size != F.TL_RECORD_HEADER_SIZE:
    _HEADER_FAST = None
else:   # where each header field lies in the unpacked tuple (records() reads them so)
    (I_SYNC, I_LENGTH, I_TYPE, I_FLAGS, I_PID, I_TID, I_SEQ, I_T_START,
     I_T_END) = map(_HEADER_FAST[1]._fields.index, (
        "sync", "length", "type", "flags", "pid", "tid", "seq", "t_start", "t_end"))


class _PaddedBytes(Construct):
    """`Aligned(m, Bytes(n))` with a context-sized n, in a form construct can compile.

    construct's Aligned asks its subcon's static size when compiling, which a Bytes sized by
    `this.size` has not (SizeofError), so bodies with a variable part (SUBMISSION, IOCTL,
    ...) used to run through the core parser, ~5x slower. This parses the same bytes the
    same way, and short data raises StreamError as the core parser does: compiled code
    skips construct's own checks (STYLE 13), so the check is kept here."""

    def __init__(self, length, modulus):
        super().__init__()
        self.length = length
        self.modulus = modulus

    def _parse(self, stream, context, path):
        return self.take(stream, evaluate(self.length, context))

    def take(self, stream, n):
        data = stream.read(n)
        pad = -n % self.modulus
        if len(data) != n or (pad and len(stream.read(pad)) != pad):
            raise StreamError(f"stream read less than specified amount, expected {n}")
        return data

    def _emitparse(self, code):
        code.linkedinstances[id(self)] = self
        return f"linkedinstances[{id(self)}].take(io, {self.length})"


def _compilable(con):
    """The same declaration with each Aligned(Bytes(expr)) as _PaddedBytes (parse only):
    format.py stays the one declaration of every record (STYLE 4)."""
    if isinstance(con, Renamed):
        return Renamed(_compilable(con.subcon), newname=con.name)
    if isinstance(con, Struct):
        return Struct(*[_compilable(sc) for sc in con.subcons])
    if isinstance(con, Array):
        return Array(con.count, _compilable(con.subcon))
    if isinstance(con, Aligned) and isinstance(con.subcon, Bytes) and callable(con.subcon.length):
        return _PaddedBytes(con.subcon.length, con.modulus)
    return con


# Body parsers for a type the fast parser (below) does not know: the declaration, compiled
# when first needed (every body on the hot path has a fast parser, and compiling them all
# took ~12 ms of each run's import).
_BODIES = dict(F.BODY)
_NOT_COMPILED = set()


def _body_parser(tname):
    parser = _BODIES[tname]
    if parser is F.BODY.get(tname) and tname not in _NOT_COMPILED:
        try:
            parser = _BODIES[tname] = _compilable(parser).compile()
        except Exception:  # construct cannot compile every form; the core parser is then used
            _NOT_COMPILED.add(tname)
    return parser

def _fast_body(con):
    """body bytes -> (Container, bytes used), driven by the same format.py declaration, for
    Structs of fixed-width integers, padded byte strings and counted arrays of either (every
    body on the hot path): struct.unpack_from on the record's bytes, no BytesIO, no parse
    context. Same Containers, same values, and for short bytes the same exception types as
    the compiled parser (struct.error for a short integer, StreamError for short bytes).
    None when the declaration holds anything else (the compiled parser is then used).

    Each step after the leading integer run is a closure of its kind; an array of Structs
    that are an integer run and padded byte strings sized by it (a segment, a section, an
    ioctl buffer) is parsed in one loop, without a call per item."""
    from construct import FormatField
    steps = []           # ("fixed", struct, names) / ("bytes", name, ref, modulus) / arrays
    known = set()
    run_names, run_fmt = [], "<"

    def close_run():
        nonlocal run_names, run_fmt
        if run_names:
            steps.append(("fixed", struct.Struct(run_fmt), tuple(run_names)))
            run_names, run_fmt = [], "<"

    for sc in con.subcons:
        if not isinstance(sc, Renamed):
            return None
        sub, name = sc.subcon, sc.name
        if isinstance(sub, FormatField) and sub.fmtstr[0] == "<":
            run_names.append(name)
            run_fmt += sub.fmtstr[1:]
        elif isinstance(sub, Aligned) and isinstance(sub.subcon, Bytes) and \
                _field_ref(sub.subcon.length, known):
            close_run()
            steps.append(("bytes", name, _field_ref(sub.subcon.length, known), sub.modulus))
        elif isinstance(sub, Array) and _field_ref(sub.count, known):
            close_run()
            item = sub.subcon
            if isinstance(item, FormatField) and item.fmtstr[0] == "<":
                steps.append(("ints", name, _field_ref(sub.count, known), item.fmtstr[1:],
                              item.sizeof()))
            elif isinstance(item, Struct):
                inner = _fast_body(item)
                if inner is None:
                    return None
                steps.append(("structs", name, _field_ref(sub.count, known), inner))
            else:
                return None
        else:
            return None
        known.add(name)
    close_run()
    # Every declaration starts with a run of integers: that step goes before the loop.
    first, steps = (steps[0], steps[1:]) if steps and steps[0][0] == "fixed" else (None, steps)
    parse = _parser(first, tuple(_step(step) for step in steps))
    parse.layout = (first, tuple(steps))
    return parse


_short = struct.error
_update = dict.update     # Container is a dict; its own update() is a Python loop


def _parser(first, steps):
    """parse(data, pos=0) -> (Container, pos) of a leading integer run and step closures."""
    if first is None:
        fixed, fnames, fsize = None, (), 0
    else:
        fixed, fnames = first[1].unpack_from, named(first[2])
        fsize = first[1].size

    def parse(data, pos=0):
        if data.__class__ is not bytes:
            data = bytes(data)
        result = Container()
        n = len(data)
        if fixed is not None:
            if pos + fsize > n:
                raise _short(f"unpack requires a buffer of {fsize} bytes")
            _update(result, fnames(fixed(data, pos)))
            pos += fsize
        for step in steps:
            pos = step(result, data, pos, n)
        return result, pos

    return parse


def _step(step):
    """One step of _fast_body as a closure (result, data, pos, n) -> pos."""
    from construct import ListContainer
    kind = step[0]
    if kind == "fixed":
        _, st, names = step
        unpack, size, names = st.unpack_from, st.size, named(names)

        def fixed(result, data, pos, n):
            if pos + size > n:
                raise _short(f"unpack requires a buffer of {size} bytes")
            _update(result, names(unpack(data, pos)))
            return pos + size
        return fixed
    if kind == "bytes":
        _, name, ref, modulus = step

        def padded(result, data, pos, n):
            size = result[ref]
            end = pos + size
            pad = -size % modulus
            if end + pad > n:
                raise StreamError(f"stream read less than specified amount, expected {size}")
            result[name] = data[pos:end]
            return end + pad
        return padded
    if kind == "ints":
        _, name, ref, fmt, size = step

        structs = {}        # count -> its struct.Struct (as _ints, without the call)

        cmax = F.TL_COUNT_MAX.get(ref)

        def ints(result, data, pos, n):
            count = result[ref]
            if cmax is not None and count > cmax:
                raise over(ref, count, cmax)
            if pos + count * size > n:
                raise _short(f"unpack requires a buffer of {size} bytes")
            st = structs.get(count)
            if st is None:
                if len(structs) >= 256:
                    structs.clear()
                st = structs[count] = _ints(fmt, count)
            result[name] = ListContainer(st.unpack_from(data, pos))
            return pos + count * size
        return ints
    _, name, ref, inner = step
    first, inner_steps = inner.layout
    if first is not None and inner_steps and all(s[0] == "bytes" and s[2] in first[2]
                                                  for s in inner_steps):
        # Items that are an integer run and byte strings sized by it: one loop.
        st, names = first[1], first[2]
        unpack, isize = st.unpack_from, st.size
        strings = tuple((s[1], names.index(s[2]), s[3]) for s in inner_steps)
        names = named(names)

        cmax = F.TL_COUNT_MAX.get(ref)

        def item_loop(result, data, pos, n):
            items = ListContainer()
            if cmax is not None and result[ref] > cmax:
                raise over(ref, result[ref], cmax)
            for _ in range(result[ref]):
                if pos + isize > n:
                    raise _short(f"unpack requires a buffer of {isize} bytes")
                values = unpack(data, pos)
                item = Container()
                _update(item, names(values))
                pos += isize
                for sname, at, modulus in strings:
                    size = values[at]
                    end = pos + size
                    pad = -size % modulus
                    if end + pad > n:
                        raise StreamError(f"stream read less than specified amount, "
                                          f"expected {size}")
                    item[sname] = data[pos:end]
                    pos = end + pad
                items.append(item)
            result[name] = items
            return pos
        return item_loop

    cmax = F.TL_COUNT_MAX.get(ref)

    def structs(result, data, pos, n):
        items = ListContainer()
        if cmax is not None and result[ref] > cmax:
            raise over(ref, result[ref], cmax)
        for _ in range(result[ref]):
            item, pos = inner(data, pos)
            items.append(item)
        result[name] = items
        return pos
    return structs


def _ints(fmt, count, _cache={}):
    """The struct.Struct of `count` little-endian `fmt` integers (remembered)."""
    st = _cache.get((fmt, count))
    if st is None:
        if len(_cache) >= 1024:
            _cache.clear()
        st = _cache[(fmt, count)] = struct.Struct(f"<{count}{fmt}")
    return st


_FAST = {n: f for n, f in ((n, _fast_body(b)) for n, b in F.BODY.items()) if f is not None}

# Record type number -> (name, fast parser) for the bodies records() parses in one step;
# END (kept as .end_record) and UNFINISHED (type 0) take the general path (_decode).
_BY_TYPE = {t: (n, _FAST[n], F.TL_REC_MAX.get(n, F.TL_REC_MAX_ANY))
            for t, n in F.TL_REC.items() if n in _FAST and n != "END" and t}
_BODY_ERRORS = (ConstructError, ValueError, IndexError, OverflowError, MemoryError, struct.error)

MAX_RECORD = 1 << 31     # no record is longer (the length field's top bit is never set)
CHUNK = 1 << 16          # the most the reader asks of the stream at once
MAX_SKIPPED = 8 << 30    # bytes read past without a record before decoding stops (~10 s)
_SYNC = F.TL_RECORD_SYNC.to_bytes(4, "little")
try:
    import zstandard as _zstd
    _ZSTD_ERRORS = (_zstd.ZstdError,)
except ImportError:
    _ZSTD_ERRORS = ()


def _error(message, offset, index):
    """A CaptureError whose text is `message` as written (it already names the offset)."""
    err = CaptureError(message)
    err.offset, err.record = offset, index
    return err


@dataclass(slots=True)
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
    length: int = 0       # whole record, header included
    raw: bytes = None     # the body's bytes as read (a consumer may keep these, parse later)


class CaptureReader:
    """Read a capture: `.header`, `.meta`, then iterate `.records()`."""

    def __init__(self, stream, name="capture"):
        self.name = name
        self.stream = stream
        self.problems = []
        self.end_record = None
        self.pos = 0              # bytes read from the stream
        self.offset = 0           # file offset of the first byte not yet consumed
        self._eof = False
        self._buf = bytearray()
        self._bpos = 0
        self.skipped = 0          # bytes read past without a record (MAX_SKIPPED)
        self.stopped = False      # records() ended there (reported), not at the data's end
        head = self._read(F.TL_FILE_HEADER_FIXED)
        fixed_size = F.TL_FILE_HEADER_FIXED
        if len(head) < 8 or head[:8] != F.TL_MAGIC:
            why = f"; {self.problems[0]}" if self.problems else ""
            kind = {gzip.GzipFile: "gzip"}.get(type(stream))
            if kind is None and ("zstd" in type(stream).__module__ or
                                 type(stream).__name__ == "ZstdStream"):
                kind = "zstd"
            raise _error(f"not a trace-launch capture: {what_it_is(head, kind)}, magic "
                         f"{head[:8]!r} at offset 0x0 where a capture has {F.TL_MAGIC!r}; "
                         f"{EXPECTED}{why}", 0, None)
        if len(head) < fixed_size:
            raise _error(f"file header truncated at offset {len(head):#x} "
                         f"(need {fixed_size} B, have {len(head)})", len(head), None)
        fixed = F.TL_FILE_HEADER_PREFIX.parse(head)
        if fixed.version not in F.TL_VERSIONS:
            raise _error(f"capture format version {fixed.version} at offset 0x8 is not "
                         f"supported (this decoder reads {', '.join(map(str, F.TL_VERSIONS))})",
                         8, None)
        hsize = fixed.header_size
        if hsize < fixed_size or hsize > (1 << 20) or hsize % F.TL_ALIGN:
            raise _error(f"file header size {hsize} at offset 0xc out of range", 12, None)
        rest = self._read(hsize - fixed_size)
        if len(rest) < hsize - fixed_size:
            raise _error(f"file header truncated at offset {self.pos:#x} "
                         f"(need {hsize} B, have {self.pos})", self.pos, None)
        self.header = fixed
        self.header_bytes = head + rest
        if fixed.meta_len > hsize - fixed_size:
            self.meta = {}
            self.problems.append(_error(
                f"header metadata length {fixed.meta_len} at offset 0x30 is larger than the "
                f"header ({hsize} B): metadata ignored", 0x30, None))
        else:
            try:
                # (NaN and Infinity kept as the strings they are: not valid JSON out)
                self.meta = json.loads(rest[:fixed.meta_len].decode("utf-8"),
                                       parse_constant=str) \
                    if fixed.meta_len else {}
                if not isinstance(self.meta, dict):
                    raise ValueError("not an object")
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                self.meta = {}
                self.problems.append(_error(
                    f"header metadata at offset {fixed_size:#x} is not a JSON object ({exc})",
                    fixed_size, None))
        self.cursor = fixed.cursor
        self.data_end = fixed.cursor   # the shim's cursor: where written data ends
        if getattr(stream, "live", False):
            # being written (decoders/capture/live.py): the stream itself knows where the
            # published records end, and the file ends at the END record once it is done
            self.data_end = 0
        self.offset = self.pos

    def _read(self, n):
        """Read up to n bytes in pieces of at most CHUNK: n may come from an untrusted length
        field, so nothing is allocated beyond what the file really holds. A compressed stream
        that is corrupt or cut short ends the data and is reported, never raised."""
        parts = []
        while n > 0 and not self._eof:
            try:
                data = self.stream.read(min(n, CHUNK))
            except (EOFError, OSError, zlib.error) + _ZSTD_ERRORS as exc:
                self._eof = True
                self.problems.append(_error(
                    f"compressed data corrupt or cut short at offset {self.pos:#x} of the "
                    f"decompressed capture ({type(exc).__name__}: {exc})", self.pos, None))
                break
            if not data:
                self._eof = True
                break
            parts.append(data)
            self.pos += len(data)
            n -= len(data)
        return b"".join(parts)

    def _problem(self, message, offset, index):
        self.problems.append(_error(message, offset, index))

    # -- a window over the stream: bytes read but not consumed, from file offset self.offset
    def _fill(self, n):
        """Make at least n unconsumed bytes available (fewer at the end); returns how many."""
        have = len(self._buf) - self._bpos
        if have < n and not self._eof:
            if self._bpos > CHUNK:
                del self._buf[:self._bpos]
                self._bpos = 0
            want = max(n - have, CHUNK)
            while want > 0 and not self._eof:   # piece by piece: no joined copy of a big read
                data = self._read(min(want, CHUNK))
                self._buf += data
                want -= len(data)
            have = len(self._buf) - self._bpos
        return have

    def _peek(self, n):
        return bytes(self._buf[self._bpos:self._bpos + n])

    def _consume(self, n):
        self._bpos += n
        self.offset += n

    def records(self, only=None, lazy=None):
        """Yield every whole record; problems go to self.problems. Kind names the one-step
        path does not parse (decoders/session/split.py): `only` (a set): records of other
        kinds are passed over; `lazy`: these are yielded with body None (.raw their bytes)."""
        index = 0
        hsize = F.TL_RECORD_HEADER_SIZE
        sync, align, complete = F.TL_RECORD_SYNC, F.TL_ALIGN, F.TL_RF_COMPLETE
        buf = self._buf                 # the window: always this bytearray, changed in place
        unpack_header, header_type = (_HEADER_FAST[0].unpack_from, _HEADER_FAST[1]) \
            if _HEADER_FAST else (None, None)
        by_type = _BY_TYPE
        if unpack_header is not None:   # the one-step path's names, as locals
            i_sync, i_length, i_type, i_flags = I_SYNC, I_LENGTH, I_TYPE, I_FLAGS
            i_pid, i_tid, i_seq, i_t_start, i_t_end = I_PID, I_TID, I_SEQ, I_T_START, I_T_END
        record, max_record, body_errors = Record, MAX_RECORD, _BODY_ERRORS
        while True:
            off = self.offset
            if self.data_end and off >= self.data_end and not self._past_cursor(off, index):
                break
            have = len(buf) - self._bpos
            if have < hsize:
                have = self._fill(hsize)
            if have < hsize:
                head = self._peek(have)
                if head.strip(b"\0"):
                    self._problem(f"record {index} truncated at offset {off:#x} "
                                  f"(need {hsize} B of header, have {have})", off, index)
                elif self.data_end and off < self.data_end:
                    self._problem(f"file ends at offset {off + have:#x}, before the header's "
                                  f"cursor {self.data_end:#x}: capture cut short", off, index)
                break
            if unpack_header is not None:
                # straight from the window: no copy of the header bytes, and for the usual
                # record no namedtuple either (fields by their declared position)
                bpos = self._bpos
                hv = unpack_header(buf, bpos)
                length = hv[i_length]
                data_end = self.data_end
                if hv[i_sync] == sync and length >= hsize and not length % align and \
                        length <= max_record and (not data_end or off + length <= data_end) \
                        and have >= length:
                    # The usual record: whole, in the window, a body type the fast parser
                    # knows (each check below, passed; the rest of the loop in one step).
                    fast = by_type.get(hv[i_type])
                    if fast is not None and length <= fast[2]:
                        skip = only is not None and fast[0] not in only
                        if skip or lazy is not None and fast[0] in lazy:    # not parsed
                            self._bpos, self.offset, flags = bpos + length, off + length, \
                                hv[i_flags]
                            if not skip:
                                yield record(index, off, fast[0], flags, hv[i_pid], hv[i_tid],
                                             hv[i_seq], hv[i_t_start], hv[i_t_end], None,
                                             bool(flags & complete), length,
                                             bytes(buf[bpos + hsize:bpos + length]))
                            index += 1
                            continue
                        body = bytes(buf[bpos + hsize:bpos + length])
                        try:
                            parsed, used = fast[1](body)
                        except body_errors:
                            parsed = None
                        if parsed is not None and used == len(body):
                            self._bpos = bpos + length
                            self.offset = off + length
                            flags = hv[i_flags]
                            yield record(index, off, fast[0], flags, hv[i_pid], hv[i_tid],
                                         hv[i_seq], hv[i_t_start], hv[i_t_end], parsed,
                                         bool(flags & complete), length, body)
                            index += 1
                            continue
                # tuple.__new__ is namedtuple._make without its length check
                h = _new_tuple(header_type, hv)
            else:
                h = _HEADER.parse(self._peek(hsize))
            if h.sync != F.TL_RECORD_SYNC:
                head = self._peek(hsize)
                # A hole (a writer died between reserving and framing) or garbage: resync on
                # the next 8-aligned sync word.
                kind = "zero-filled hole" if not head.strip(b"\0") else "bad sync word"
                skipped, found = self._resync(off)
                self._problem(f"{kind} at offset {off:#x}: skipped {skipped} bytes to "
                              f"{'the next record' if found else 'the end of the file'}",
                              off, index)
                if not found:
                    break
                continue
            length = h.length
            bad = length < hsize or length % F.TL_ALIGN or length > MAX_RECORD
            past = not bad and bool(self.data_end) and off + length > self.data_end
            if past and self._followed_by_record(length):
                # The shim reserves records by moving the cursor, so a record never straddles
                # it: with the next record where this length says, the cursor is what's wrong.
                self._problem(f"record {index} at offset {off:#x} runs past the header's "
                              f"cursor {self.data_end:#x}: cursor stale or corrupt; reading on",
                              off, index)
                self.data_end = 0
                past = False
            if bad or past:
                why = (f"runs past the header's cursor {self.data_end:#x}" if past
                       else "is not a record length")
                skipped, found = self._resync(off)
                self._problem(f"record {index} at offset {off:#x}: length {length} {why}; "
                              f"skipped {skipped} bytes", off, index)
                if not found:
                    break
                continue
            tname = "UNFINISHED" if h.type == 0 else F.TL_REC.get(h.type)
            limit = F.TL_REC_MAX.get(tname, F.TL_REC_MAX_ANY)
            if length > limit:
                # Checked before the body is read: a length field cannot make the reader
                # hold more than the kind's maximum (format.py TL_REC_MAX).
                rec = self._oversized(index, off, h, tname, limit)
                if rec is not None:
                    yield rec
                index += 1
                if self._over_skip_budget(off, index):
                    break
                continue
            if have < length:
                have = self._fill(length)
            if have < length:
                self._problem(f"record {index} truncated at offset {off:#x} "
                              f"(need {length} B, have {have})", off, index)
                # The length itself may be what is wrong: look for a record inside.
                skipped, found = self._resync(off)
                if not found:
                    break
                continue
            with memoryview(self._buf) as view:     # one copy (a bytearray slice is another)
                body = bytes(view[self._bpos + hsize:self._bpos + length])
            rec, used = self._decode(index, off, h, body)
            if used is not None and used != len(body):
                # The fields end before the frame does (or a type was flipped): the header
                # is wrong somewhere. Drop the record and resync after its fields.
                self._problem(f"record {index} ({F.TL_REC.get(h.type, h.type)}) at offset "
                              f"{off:#x}: length {length} but its fields take "
                              f"{hsize + used} B", off, index)
                self._consume(hsize + used - (hsize + used) % F.TL_ALIGN)
                index += 1
                continue
            self._consume(length)
            if rec is not None:
                yield rec
            index += 1

    def _oversized(self, index, off, h, tname, limit):
        """A record whose length is over its kind's maximum. Only the first `limit` bytes are
        read into memory. When the fields end inside them (a corrupt length), the reader
        resyncs after the fields, as for any record whose frame and fields disagree; a
        text record (NOTE, MARK, OPEN, MMAP) keeps its first TL_TEXT_MAX bytes of text;
        any other record is skipped. The rest is read past in pieces, never held."""
        hsize, length = F.TL_RECORD_HEADER_SIZE, h.length
        kind = tname or f"type {h.type}"
        have = min(self._fill(limit), limit)
        with memoryview(self._buf) as view:
            prefix = bytes(view[self._bpos + hsize:self._bpos + have])
        fast = _FAST.get(tname)
        if fast is not None:
            try:
                _, used = fast(prefix)
            except _BODY_ERRORS:
                used = None
            if used is not None:
                self._problem(f"record {index} ({kind}) at offset {off:#x}: length {length} "
                              f"but its fields take {hsize + used} B", off, index)
                self._consume(hsize + used - (hsize + used) % F.TL_ALIGN)
                return None
        cut = cut_text(tname, prefix)
        skipped = self._skip(length)
        if skipped < length:
            self._problem(f"record {index} ({kind}) at offset {off:#x}: length {length} is over "
                          f"the {kind} maximum of {limit} B, and the file ends {skipped} B into "
                          f"it", off, index)
            return None
        if cut is None:
            self._problem(f"record {index} ({kind}) at offset {off:#x}: length {length} is over "
                          f"the {kind} maximum of {limit} B: record skipped", off, index)
            return None
        parsed, name, true_len = cut
        self._problem(f"record {index} ({kind}) at offset {off:#x}: length {length} is over "
                      f"the {kind} maximum of {limit} B: {name} of {true_len} B cut to its "
                      f"first {len(parsed[name])} B", off, index)
        return Record(index, off, tname, h.flags, h.pid, h.tid, h.seq, h.t_start, h.t_end,
                      parsed, bool(h.flags & F.TL_RF_COMPLETE), length, prefix)

    def _skip(self, n):
        """Consume n bytes, reading past what the window lacks in pieces (nothing is kept).
        Returns how many bytes there were (fewer than n at the end of the data)."""
        have = len(self._buf) - self._bpos
        if have >= n:
            self._consume(n)
            return n
        self._consume(have)
        del self._buf[:]
        self._bpos = 0
        done = have
        while done < n and not self._eof:
            got = len(self._read(min(n - done, CHUNK)))
            self.offset += got
            done += got
        self.skipped += done
        return done

    def _followed_by_record(self, length):
        """Whether a sync word (or the end of the file) lies `length` bytes on."""
        have = self._fill(length + 4)
        return have == length or (have >= length + 4 and
                                  self._buf[self._bpos + length:self._bpos + length + 4] == _SYNC)

    def _past_cursor(self, off, index):
        """At the header's cursor. Go on only if a record starts here: the cursor is then
        stale or corrupt (reported). A zero tail (the shim grows the file ahead) ends it."""
        if self._fill(8) >= 4 and self._peek(4) == _SYNC:
            self._problem(f"records go on past the header's cursor {self.data_end:#x} "
                          f"(at offset {off:#x}): cursor stale or corrupt; reading on",
                          off, index)
            self.data_end = 0
            return True
        return False

    def _over_skip_budget(self, off, index):
        """True (and reported) once the bytes read past without a record (holes, garbage,
        records over their maximum) pass MAX_SKIPPED: a compressed capture can declare
        4 GiB records again and again, and reading past them is what takes the time."""
        if self.skipped <= MAX_SKIPPED:
            return False
        self.stopped = True
        self._problem(f"decoding stopped at offset {self.offset:#x}: more than "
                      f"{MAX_SKIPPED // (1 << 30)} GiB of the capture were holes, garbage or "
                      f"records over their maximum", off, index)
        return True

    def _resync(self, off):
        """Skip from the record at `off` to the next 8-aligned sync word after it.
        Returns (bytes skipped, whether one was found); not found also once the skipped
        bytes pass MAX_SKIPPED (reported)."""
        skipped, found = self._resync_scan(off)
        self.skipped += skipped
        if found and self._over_skip_budget(off, None):
            found = False
        return skipped, found

    def _resync_scan(self, off):
        start = off
        pos = off + F.TL_ALIGN            # never the same place again
        pos += (-pos) % F.TL_ALIGN
        while True:
            self._consume(pos - self.offset)
            have = self._fill(CHUNK)
            if have < 4:
                self._consume(have)
                return self.offset - start, False
            buf, lo = self._buf, self._bpos     # searched in place: the window may be large
            i = buf.find(_SYNC, lo, lo + have)
            while i >= 0 and (self.offset + i - lo) % F.TL_ALIGN:
                i = buf.find(_SYNC, i + 1, lo + have)
            if i >= 0:
                self._consume(i - lo)
                return self.offset - start, True
            if self._eof:
                self._consume(have)
                return self.offset - start, False
            pos = self.offset + have - 3     # a sync word may straddle the window's end
            pos -= pos % F.TL_ALIGN

    def _decode(self, index, off, h, body):
        """(Record or None, bytes the fields used or None when unparsed)."""
        tname = F.TL_REC.get(h.type)
        if h.type == 0:
            tname = "UNFINISHED"
        if tname is None:
            self._problem(f"record {index} at offset {off:#x} has unknown type {h.type}",
                          off, index)
            return None, None
        parsed = None
        used = None
        fast = _FAST.get(tname)
        if fast is not None:
            try:
                parsed, used = fast(body)
            except _BODY_ERRORS as exc:
                self._problem(f"record {index} ({tname}) at offset {off:#x}: body does not "
                              f"parse: {why(exc)}", off, index)
                return None, None
            if used != len(body):
                return None, used
        elif tname in _BODIES:
            stream = io.BytesIO(body)
            try:
                parsed = _body_parser(tname).parse_stream(stream)
            except (ConstructError, ValueError, IndexError, OverflowError, MemoryError,
                    struct.error) as exc:
                self._problem(f"record {index} ({tname}) at offset {off:#x}: body does not "
                              f"parse: {why(exc)}", off, index)
                return None, None
            used = stream.tell()
            if used != len(body):
                return None, used
        if tname == "END":
            self.end_record = parsed
        return Record(index, off, tname, h.flags, h.pid, h.tid, h.seq, h.t_start, h.t_end,
                      parsed, bool(h.flags & F.TL_RF_COMPLETE), h.length, body), used


def read_capture(path):
    """(reader, list of records) for a whole file; convenience for tests and small files."""
    reader = CaptureReader(open_capture(path), name=str(path))
    return reader, list(reader.records())


def cstr(b):
    """Bytes of a path/label field as text (lossless for odd bytes)."""
    return bytes(b).decode("utf-8", "backslashreplace")


__all__ = ["CaptureReader", "Record", "open_capture", "read_capture", "cstr", "io"]
