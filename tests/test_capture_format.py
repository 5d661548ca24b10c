"""The capture file (issue 2): every record Struct round-trips on bytes cut from the H100
recordings, the reader agrees with each manifest, and bad input (synthetic-*) is reported
with offsets while every whole record is still decoded (STYLE 14, 20, 22)."""
import gzip
import io
import re
import struct
from collections import Counter

import pytest
from construct import Container, ListContainer

from conftest import (ALL, HEADER_FIXED, RECORD_HEADER, ROOT, SMALL, SYNC, capture_bytes,
                      manifest, record_spans)
from decoders.capture import format as F
from decoders.capture import reader as R
from decoders.capture.reader import CaptureReader, read_capture
from decoders.cuda.api import EXIT_STEP_SECTIONS
from decoders.errors import CaptureError
from decoders.session import decode_capture
from conftest import plain

OFFSET = re.compile(r"offset 0x[0-9a-f]+")

# construct cannot compile Aligned over a context-sized Bytes (SizeofError at compile time,
# https://construct.readthedocs.io/en/latest/compilation.html): these bodies are parsed by
# the core parser. The rest must compile, and compiled == core is checked for them.
NOT_COMPILABLE = {"PROCESS_START", "OPEN", "IOCTL", "MMAP", "MARK", "SUBMISSION", "NOTE",
                  "TL_SEGMENT", "TL_IOCTL_BUFFER", "API_ENTER", "API_EXIT", "WINDOW",
                  "PROCESS_ENV"}

# Types none of the H100 recordings contains (manifest summary.by_type): round-tripped on
# synthetic bytes built from the declaration instead.
SYNTHETIC_BODIES = {
    "MUNMAP": dict(addr=0x7F0000000000, length=0x10000, ret=0, err=0),
    "MREMAP": dict(old_addr=0x7F0000000000, old_length=0x1000, new_length=0x2000, flags=1,
                   err=0, new_addr=0x7F0000100000),
    # a capture window's edge (trace-launch --capture-range): only the torch-window-* captures
    # hold one (tests/test_window_real.py); tests/test_shim_window.py checks the shim's
    "WINDOW": dict(edge=1, trigger=2, ordinal=501, call=0, launches=123456,
                   submissions_skipped=99, api_calls_skipped=7, name_len=4, reserved0=0,
                   name=b"step"),
    # issue 26: written by the shim only when a launcher's rank variable is set (no recording
    # here ran under one; tests/test_shim.py checks what the shim writes)
    "PROCESS_ENV": dict(env_len=33, reserved0=0, env=b"RANK=1\0LOCAL_RANK=1\0WORLD_SIZE=2\0"),
}


def _abi_sizes():
    text = (ROOT / "shim" / "abi.h").read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define (TL_\w+?)__(?:SIZE|FIXED) (\d+)", text)}



def _bodies():
    """type name -> [body bytes] from every record of the small captures."""
    out = {}
    for name in SMALL:
        data = capture_bytes(name)
        for off, length, rtype in record_spans(name):
            out.setdefault(F.TL_REC[rtype], []).append(data[off + RECORD_HEADER:off + length])
    return out


BODIES = _bodies()


def _roundtrip(struct_, raw):
    obj = struct_.parse(raw)
    assert struct_.build(obj) == raw
    return obj


def test_record_types_seen_are_declared():
    assert set(BODIES) <= set(F.BODY)
    # a type no recording holds is round-tripped on synthetic bytes (WINDOW and PROCESS_ENV
    # have both now: captures/torch-window-*, ddp-2rank)
    assert set(F.BODY) - set(BODIES) == set(SYNTHETIC_BODIES) - set(BODIES)


@pytest.mark.parametrize("tname", sorted(F.BODY))
def test_body_round_trip(tname):
    struct_ = F.BODY[tname]
    raws = BODIES.get(tname, [])
    if tname in SYNTHETIC_BODIES:   # not in every recording: synthetic-built bytes too
        raws = raws + [struct_.build(SYNTHETIC_BODIES[tname])]
    compiled = None if tname in NOT_COMPILABLE else struct_.compile()
    for raw in raws:
        obj = _roundtrip(struct_, raw)
        if compiled is not None:
            assert plain(compiled.parse(raw)) == plain(obj)
            assert compiled.build(obj) == raw


def test_not_compilable_is_exactly_the_listed_set():
    named = dict(F.BODY, TL_SEGMENT=F.TL_SEGMENT, TL_IOCTL_BUFFER=F.TL_IOCTL_BUFFER)
    failed = set()
    for name, struct_ in named.items():
        try:
            struct_.compile()
        except Exception:
            failed.add(name)
    assert failed == NOT_COMPILABLE


def test_fixed_sizes_match_declaration_and_shim_abi():
    abi = _abi_sizes()
    assert F.TL_RECORD_HEADER.sizeof() == F.TL_RECORD_HEADER_SIZE == RECORD_HEADER \
        == abi["TL_RECORD_HEADER"]
    assert F.TL_FILE_HEADER_PREFIX.sizeof() == F.TL_FILE_HEADER_FIXED == HEADER_FIXED \
        == abi["TL_FILE_HEADER"]
    for tname in ("PROCESS_EXIT", "CLOSE", "MUNMAP", "MREMAP"):
        assert F.BODY[tname].sizeof() == abi[f"TL_{tname}"], tname
    assert F.TL_END.sizeof() == 16      # END is written by tracer (writer.append_end), not the shim
    # variable bodies: an instance with every variable part empty is the shim's FIXED size
    empties = {"PROCESS_START": dict(ppid=0, how=1, exe_len=0, cmdline_len=0, exe=b"", cmdline=b""),
               "OPEN": dict(fd=0, oflags=0, path_len=0, reserved0=0, path=b""),
               "MARK": dict(kind=1, id=0, label_len=0, reserved0=0, label=b""),
               "STATS": dict(count=0, reserved0=0, counters=[]),
               "NOTE": dict(level=0, text_len=0, text=b""),
               "WINDOW": dict(SYNTHETIC_BODIES["WINDOW"], name_len=0, name=b""),
               "PROCESS_ENV": dict(env_len=0, reserved0=0, env=b"")}
    for tname, fields in empties.items():
        assert len(F.BODY[tname].build(fields)) == abi[f"TL_{tname}"], tname


def test_record_header_round_trip_every_record():
    compiled = F.TL_RECORD_HEADER.compile()
    for name in SMALL:
        data = capture_bytes(name)
        for off, length, rtype in record_spans(name):
            raw = data[off:off + RECORD_HEADER]
            obj = _roundtrip(F.TL_RECORD_HEADER, raw)
            assert (obj.sync, obj.length, obj.type) == (SYNC, length, rtype)
            assert plain(compiled.parse(raw)) == plain(obj)
            assert compiled.build(obj) == raw


def _image_refs(name, data):
    """How many IMAGE_REF sections (decoders/cuda/api.py EXIT_STEP_SECTIONS) the API_ENTER
    records of capture `name` hold."""
    tag = next(k for k, v in EXIT_STEP_SECTIONS.items() if v == "IMAGE_REF")
    body = F.BODY["API_ENTER"]
    return sum(s.tag == tag
               for off, length, rtype in record_spans(name) if F.TL_REC[rtype] == "API_ENTER"
               for s in body.parse(data[off + RECORD_HEADER:off + length]).sections)


@pytest.mark.parametrize("name", SMALL)
def test_file_header_round_trip(name):
    data = capture_bytes(name)
    meta_len = struct.unpack_from("<I", data, 48)[0]
    raw = data[:HEADER_FIXED + meta_len]
    obj = _roundtrip(F.TL_FILE_HEADER, raw)
    # Version 2 (TL_VERSION_IMAGE_REFS) is what compact_capture writes when a module image
    # repeats: ddp-2rank's two ranks load the same modules, so its compacted capture holds
    # IMAGE_REF sections in place of the repeats. Every other capture is the shim's version 1.
    # The version must match the content either way.
    refs = _image_refs(name, data)
    assert obj.version == (F.TL_VERSION_IMAGE_REFS if refs else F.TL_VERSION), (obj.version, refs)
    assert obj.header_size == F.TL_HEADER_SIZE
    assert obj.cursor == len(data)            # append_end leaves the cursor at the end
    assert plain(F.TL_FILE_HEADER.compile().parse(raw)) == plain(obj)
    prefix = data[:HEADER_FIXED]
    assert plain(F.TL_FILE_HEADER_PREFIX.compile().parse(prefix)) == \
        plain(_roundtrip(F.TL_FILE_HEADER_PREFIX, prefix))
    assert data[HEADER_FIXED + meta_len:F.TL_HEADER_SIZE].strip(b"\0") == b""


def _pad8(n):
    return n + (-n) % 8


def test_nested_structs_round_trip_on_cut_bytes():
    """TL_SEGMENT and TL_IOCTL_BUFFER cut out of SUBMISSION and IOCTL bodies by offset."""
    segments = buffers = 0
    for raw in BODIES["SUBMISSION"]:
        sub = F.TL_SUBMISSION.parse(raw)
        pos = 72 + 8 * sub.nentries
        for seg in sub.segments:
            size = 16 + _pad8(seg.size)
            cut = raw[pos:pos + size]
            assert F.TL_SEGMENT.build(_roundtrip(F.TL_SEGMENT, cut)) == cut
            assert bytes(seg.data)[:seg.size] == cut[16:16 + seg.size]
            pos += size
            segments += 1
        assert pos == len(raw)
    for raw in BODIES["IOCTL"]:
        io_ = F.TL_IOCTL.parse(raw)
        pos = 40 + _pad8(io_.path_len) + 2 * _pad8(io_.arg_size)
        for _ in io_.buffers:
            buf = F.TL_IOCTL_BUFFER.parse(raw[pos:])
            size = 24 + 2 * _pad8(buf.size)
            _roundtrip(F.TL_IOCTL_BUFFER, raw[pos:pos + size])
            pos += size
            buffers += 1
        assert pos == len(raw)
    assert segments > 100 and buffers > 100


# ---- the reader on the recordings ----------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_reader_matches_manifest(name, capture_files):
    summary = manifest(name)["summary"]
    reader, recs = read_capture(capture_files[name])
    assert reader.problems == []
    assert reader.end_record is not None and recs[-1].type == "END"
    assert reader.end_record.cursor == recs[-1].offset
    assert dict(Counter(r.type for r in recs)) == summary["by_type"]
    assert len(recs) == summary["records"]
    assert [(r.offset, r.length) for r in recs] == [s[:2] for s in record_spans(name)]
    assert [r.index for r in recs] == list(range(len(recs)))
    assert all(r.body is not None for r in recs)
    assert {r.pid for r in recs if r.type != "END"} == set(summary["pids"])


def test_gzip_read_transparently(capture_files):
    name = "builtin-vadd"
    gz_reader, gz = read_capture(ROOT / "captures" / name / "capture.tlc.gz")
    reader, raw = read_capture(capture_files[name])
    assert gz_reader.problems == [] and gz_reader.meta == reader.meta
    assert [(r.offset, r.type, r.body) for r in gz] == [(r.offset, r.type, r.body) for r in raw]


# ---- bad input (synthetic-*) ----------------------------------------------------------

def _read(data):
    reader = CaptureReader(io.BytesIO(data), name="synthetic")
    return reader, list(reader.records())


def _assert_offsets(problems):
    assert problems
    for p in problems:
        assert isinstance(p, CaptureError) and p.offset is not None
        assert OFFSET.search(str(p)), str(p)


@pytest.mark.parametrize("data", [
    b"", b"TRACELN", b"\x7fELF\x02\x01\x01" + bytes(60), b"hello, world\n" * 20,
    gzip.compress(b"not a capture at all" * 10), bytes(4096)],
    ids=["empty", "short-magic", "elf", "text", "gzip-text", "zeros"])
def test_foreign_file_raises_at_offset_0(data, write_synthetic):
    with pytest.raises(CaptureError, match="offset 0x0"):
        CaptureReader(io.BytesIO(data))
    path = write_synthetic("foreign", data)
    with pytest.raises(CaptureError, match="offset 0x0"):
        decode_capture(path)


def test_bad_file_header_raises_with_offset():
    good = capture_bytes("builtin-vadd")
    cases = [good[:30],                                              # header cut
             good[:8] + struct.pack("<I", 7) + good[12:],           # version
             good[:12] + struct.pack("<I", 3) + good[16:],          # header_size
             good[:12] + struct.pack("<I", 1 << 30) + good[16:],
             good[:2000]]                                            # header_size > file
    for data in cases:
        with pytest.raises(CaptureError) as exc:
            _read(data)
        assert OFFSET.search(str(exc.value)) and exc.value.offset is not None


def test_bad_metadata_is_a_problem_not_an_error():
    good = bytearray(capture_bytes("builtin-vadd"))
    good[HEADER_FIXED] = ord("[")
    reader, recs = _read(bytes(good))
    assert reader.meta == {} and len(recs) == len(record_spans("builtin-vadd"))
    _assert_offsets(reader.problems)
    good[48:52] = struct.pack("<I", 5000)     # meta_len larger than the header
    reader, recs = _read(bytes(good))
    assert reader.meta == {} and len(recs) == len(record_spans("builtin-vadd"))
    _assert_offsets(reader.problems)


class _FramingOnly:
    """Stands in for a body parser: consumes the whole body. For tests that cut the file
    at thousands of places, where only the framing is under test."""

    @staticmethod
    def parse_stream(stream):
        stream.read()
        return Container()


@pytest.fixture
def framing_only(monkeypatch):
    monkeypatch.setattr(R, "_BODIES", {k: _FramingOnly for k in R._BODIES})


def test_truncation_at_every_record_boundary(framing_only):
    name = "runtime-vadd"
    data = capture_bytes(name)
    spans = record_spans(name)
    for k, (off, _, _) in enumerate(spans):
        reader, recs = _read(data[:off])
        assert [r.offset for r in recs] == [s[0] for s in spans[:k]]
        assert reader.end_record is None
        _assert_offsets(reader.problems)
        assert reader.problems[-1].offset == off and "cut short" in str(reader.problems[-1])


def test_truncation_mid_record_every_record(framing_only):
    name = "runtime-vadd"
    data = capture_bytes(name)
    spans = record_spans(name)
    for k, (off, length, _) in enumerate(spans):
        # one cut per record (the test is quadratic), rotating through the places that differ:
        # inside the sync/length word, inside the header, at the body, mid-body, last word
        cut = off + (1, 17, RECORD_HEADER, length // 2, length - 8)[k % 5]
        if off < cut < off + length:
            reader, recs = _read(data[:cut])
            assert [r.offset for r in recs] == [s[0] for s in spans[:k]], (k, cut)
            assert reader.end_record is None
            _assert_offsets(reader.problems)
            assert reader.problems[0].offset == off
            assert "truncated" in str(reader.problems[0])


@pytest.mark.parametrize("frac", [0.001, 0.1, 0.33, 0.5, 0.77, 0.999, 1.0])
def test_truncated_capture_decodes_every_whole_record(frac, write_synthetic):
    """With real body parsing and the whole session: the prefix is decoded, END is missing."""
    name = "builtin-vadd"
    data = capture_bytes(name)
    spans = record_spans(name)
    cut = F.TL_HEADER_SIZE + int((len(data) - F.TL_HEADER_SIZE) * frac) - 3 if frac < 1 else \
        spans[-1][0]                          # just the END record missing
    whole = [s for s in spans if s[0] + s[1] <= cut]
    reader, full = read_capture(write_synthetic("full", data))
    path = write_synthetic(f"cut-{frac}", data[:cut])
    reader, recs = read_capture(path)
    assert [(r.offset, r.body) for r in recs] == [(r.offset, r.body) for r in full[:len(whole)]]
    model = decode_capture(path)
    assert model.cut_short and model.records == len(whole)
    _assert_offsets(model.problems)
    assert any("no END record" in str(p) for p in model.problems)
    assert len(model.ioctls) == sum(1 for s in whole if s[2] == 5)
    assert len(model.submissions) == sum(1 for s in whole if s[2] == 10)


def test_zero_filled_hole_resyncs():
    name = "builtin-vadd"
    data = bytearray(capture_bytes(name))
    spans = record_spans(name)
    lo, hi = spans[300][0], spans[303][0]      # three records reserved, never framed
    data[lo:hi] = bytes(hi - lo)
    reader, recs = _read(bytes(data))
    want = [s[0] for s in spans if not lo <= s[0] < hi]
    assert [r.offset for r in recs] == want
    assert reader.end_record is not None
    assert len(reader.problems) == 1 and reader.problems[0].offset == lo
    assert "hole" in str(reader.problems[0]) and f"{lo:#x}" in str(reader.problems[0])


def test_hole_at_the_end_and_reserved_unpublished_record(write_synthetic):
    name = "builtin-vadd"
    data = bytearray(capture_bytes(name))
    spans = record_spans(name)
    off, length, _ = spans[200]
    data[off + 8:off + 10] = b"\0\0"           # framed (sync, length) but type still 0
    reader, recs = _read(bytes(data))
    assert recs[200].type == "UNFINISHED" and recs[200].body is None
    assert len(recs) == len(spans) and reader.problems == []
    model = decode_capture(write_synthetic("unfinished", bytes(data)))
    assert model.unfinished == [{"index": 200, "pid": recs[200].pid, "offset": off}]
    # the writer died with the tail reserved: zeros up to the cursor, no END
    end = spans[-1][0]
    tail = bytes(data[:end - 64]) + bytes(64)
    reader, recs = _read(tail)
    assert reader.end_record is None
    _assert_offsets(reader.problems)


def _cut_window(name, first, count):
    """A real capture cut after record first+count (a synthetic, shorter input)."""
    spans = record_spans(name)
    end = spans[first + count][0]
    return capture_bytes(name)[:end], spans[:first + count]


@pytest.mark.parametrize("rec", [60, 61, 62])
def test_bit_flips_in_record_headers(rec):
    """Every bit of sync, length and type of one record: never raises, a problem names an
    offset, and every other record is still decoded."""
    data, spans = _cut_window("builtin-vadd", rec, 12)
    off = spans[rec][0]
    for bit in range(10 * 8):
        mutated = bytearray(data)
        mutated[off + bit // 8] ^= 1 << (bit % 8)
        reader, recs = _read(bytes(mutated))
        got = [r.offset for r in recs]
        assert got == [s[0] for s in spans if s[0] != off], (rec, bit)
        _assert_offsets(reader.problems)
        assert reader.problems[0].offset == off, (bit, [str(p) for p in reader.problems])


def test_bit_flips_in_file_header():
    """Every bit of the 56-byte fixed header: a CaptureError with an offset, or a read that
    reports what it could not trust; never another exception."""
    data, spans = _cut_window("builtin-vadd", 0, 30)
    for bit in range(HEADER_FIXED * 8):
        mutated = bytearray(data)
        mutated[bit // 8] ^= 1 << (bit % 8)
        try:
            reader, recs = _read(bytes(mutated))
        except CaptureError as exc:
            assert OFFSET.search(str(exc)), (bit, str(exc))
            continue
        if 16 <= bit // 8 < 24:                # the cursor: records are still all found
            assert [r.offset for r in recs] == [s[0] for s in spans], bit
        for p in reader.problems:
            assert OFFSET.search(str(p)), (bit, str(p))


def test_absurd_lengths_never_read_past_the_file():
    """A length field is untrusted: no read asks for more than remains (or one CHUNK)."""
    data, spans = _cut_window("builtin-vadd", 0, 20)

    class Watch(io.BytesIO):
        asked = []

        def read(self, n=-1):
            remaining = len(self.getbuffer()) - self.tell()
            assert 0 <= n <= max(remaining, R.CHUNK), (n, remaining)
            return super().read(n)

    for length in (0xFFFFFFF8, 0x7FFFFFF8, 1 << 31, 0x10000000, len(data) * 2 + 8, 48, 16):
        mutated = bytearray(data)
        off = spans[10][0]
        mutated[off + 4:off + 8] = struct.pack("<I", length)
        for cursor in (len(data), 0, 1 << 62):   # trusted, absent, absurd
            mutated[16:24] = struct.pack("<Q", cursor)
            reader = CaptureReader(Watch(bytes(mutated)))
            recs = list(reader.records())
            assert [r.offset for r in recs] == [s[0] for s in spans if s[0] != off]
            _assert_offsets(reader.problems)


def test_corrupt_gzip_is_a_problem_not_a_crash(write_synthetic):
    raw = (ROOT / "captures" / "builtin-vadd" / "capture.tlc.gz").read_bytes()
    spans = record_spans("builtin-vadd")
    path = write_synthetic("cut.tlc.gz", raw[:len(raw) // 2])
    reader, recs = read_capture(path)
    assert 0 < len(recs) < len(spans) and reader.end_record is None
    assert [r.offset for r in recs] == [s[0] for s in spans[:len(recs)]]
    _assert_offsets(reader.problems)
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x55
    reader, recs = read_capture(write_synthetic("flip.tlc.gz", bytes(flipped)))
    assert reader.end_record is None or reader.problems
    model = decode_capture(path)
    assert model.cut_short and model.problems


def test_decoder_problems_name_the_record_offset(write_synthetic):
    """A SUBMISSION that says GP entries were lost: the launch decoder's problem names the
    record, and the session ties it to the record's file offset."""
    data = bytearray(capture_bytes("builtin-vadd"))
    spans = record_spans("builtin-vadd")
    off = [s for s in spans if s[2] == F.TL_REC_BY_NAME["SUBMISSION"]][5][0]
    data[off + RECORD_HEADER + 64:off + RECORD_HEADER + 68] = struct.pack("<I", 3)   # lost
    model = decode_capture(write_synthetic("lost", bytes(data)))
    lost = [p for p in model.problems if "overwritten" in str(p) or "lost" in str(p)]
    assert lost and all(f"{off:#x}" in str(p) for p in lost), [str(p) for p in model.problems]
