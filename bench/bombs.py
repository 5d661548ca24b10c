"""Bombs: small inputs that declare (and really hold) huge things.

Length-field bombs: small compressed captures that declare (and really hold) huge records.
Built from a real recording (captures/*/capture.tlc.gz) and the format.py declarations, as
gzip files of several members: the huge part is one member of 1 MiB of zeros repeated, so a
capture holding a 2 GiB record is a ~2 MB file, made in milliseconds without ever holding
the 2 GiB (gzip readers read concatenated members as one stream, RFC 1952 2.2).

Compressed-image bombs: zstd and LZ4 streams written by hand (many sequences, RLE blocks
up to 4 GiB, an LZ4 match that runs on) as a fatbin entry's payload with any declared
decompressed size, and a capture with its module image replaced by such a fatbin.

Used by tests/test_untrusted.py and tests/test_image_bombs.py (each bomb decoded in a
subprocess under an address-space limit) and by bench/fuzz.py (the `bomb` mutation).
"""
import gzip
import struct
from pathlib import Path

from construct import Struct

from decoders.capture import format as F

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20
_ZERO_MEMBER = None


def gz(data):
    return gzip.compress(bytes(data), 6, mtime=0)


def zeros_gz(n):
    """A gzip stream (members) that inflates to n zero bytes."""
    global _ZERO_MEMBER
    if _ZERO_MEMBER is None:
        _ZERO_MEMBER = gzip.compress(bytes(MIB), 9, mtime=0)
    whole, rest = divmod(n, MIB)
    return _ZERO_MEMBER * whole + (gz(bytes(rest)) if rest else b"")


def load(name="runtime-vadd"):
    with gzip.open(ROOT / "captures" / name / "capture.tlc.gz") as f:
        return f.read()


def spans(data):
    """[(offset, length, type)] of the records, walked with the declared record header."""
    hsize = F.TL_FILE_HEADER_PREFIX.parse(data[:F.TL_FILE_HEADER_FIXED]).header_size
    out, off = [], hsize
    while off + F.TL_RECORD_HEADER_SIZE <= len(data):
        h = F.TL_RECORD_HEADER.parse(data[off:off + F.TL_RECORD_HEADER_SIZE])
        if h.sync != F.TL_RECORD_SYNC or h.length < F.TL_RECORD_HEADER_SIZE:
            break
        out.append((off, h.length, h.type))
        off += h.length
    return out


def record_header(length, tname, pid=1, seq=0):
    return F.TL_RECORD_HEADER.build(dict(
        sync=F.TL_RECORD_SYNC, length=length, type=F.TL_REC_BY_NAME[tname],
        flags=F.TL_RF_COMPLETE, pid=pid, tid=pid, seq=seq, t_start=0, t_end=0))


def _with_cursor(head, total):
    head = bytearray(head)
    head[F.TL_CURSOR_OFFSET:F.TL_CURSOR_OFFSET + 8] = struct.pack("<Q", total)
    return bytes(head)


def zstd_stream(parts):
    """One zstd frame of `parts`: bytes, or an int for that many zero bytes (written 1 MiB
    at a time, never held)."""
    import io
    import zstandard
    out = io.BytesIO()
    w = zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False)
    zero = bytes(MIB)
    for p in parts:
        if isinstance(p, int):
            while p > 0:
                w.write(zero[:min(p, MIB)])
                p -= MIB
        else:
            w.write(p)
    w.close()
    return out.getvalue()


def splice(data, at, fixed, filler_len, tail_fill=b"", codec="gzip"):
    """data[:at] + fixed + filler_len zero bytes + tail_fill + data[at:], with the file
    header's cursor set to the new end: gzip members, or one zstd frame."""
    total = len(data) + len(fixed) + filler_len + len(tail_fill)
    head = _with_cursor(data[:at], total)
    if codec == "zstd":
        return zstd_stream([head + fixed, filler_len, tail_fill + data[at:]])
    return gz(head + fixed) + zeros_gz(filler_len) + gz(tail_fill + data[at:])


def text_bomb(data=None, tname="NOTE", text_len=(1 << 31) - 48, at=None, codec="gzip"):
    """A NOTE (or MARK) record whose text is text_len zero bytes, before the last record
    (END). text_len (1 << 31) - 48 makes the record 2^31 bytes, the issue's bomb."""
    data = data if data is not None else load()
    sp = spans(data)
    at = sp[-1][0] if at is None else at
    con = F.BODY[tname]
    fixed = Struct(*con.subcons[:-1])
    ref = str(con.subcons[-1].subcon.subcon.length).replace("this['", "").rstrip("']")
    values = {sc.name: 0 for sc in fixed.subcons}
    values.update(level=1, kind=3, id=7)
    values[ref] = text_len
    values = {k: v for k, v in values.items() if k in {sc.name for sc in fixed.subcons}}
    body = fixed.build(values)
    pad = -text_len % F.TL_ALIGN
    length = F.TL_RECORD_HEADER_SIZE + len(body) + text_len + pad
    return splice(data, at, record_header(length, tname) + body, text_len + pad, codec=codec)


def length_lie(data=None, which=None, length=(1 << 31) - 8):
    """An existing record whose `length` says `length` bytes, with zeros behind its real body
    up to there (the frame holds them): the fields end long before the frame."""
    data = data if data is not None else load()
    sp = spans(data)
    off, real, _ = sp[which if which is not None else len(sp) // 2]
    head = bytearray(data[off:off + real])
    struct.pack_into("<I", head, 4, length)
    rest = data[off + real:]
    total = off + length + len(rest)
    return gz(_with_cursor(data[:off], total) + bytes(head)) + zeros_gz(length - real) + gz(rest)


def count_bomb(data=None, tname="SUBMISSION", field="nsegments", count=(1 << 27) // 16,
               length=1 << 27):
    """A record of `tname` (copied from the recording) whose count field says `count` and
    whose frame holds `length` bytes of zeros after its fixed fields: zeros parse as empty
    items, so the bytes are really there for every item the count declares."""
    data = data if data is not None else load()
    sp = spans(data)
    picks = [(o, n) for o, n, t in sp if F.TL_REC.get(t) == tname]
    if not picks:
        raise ValueError(f"no {tname} record in the recording")
    off, real = picks[0]
    con = F.BODY[tname]
    # the integers before the first variable part
    ints = []
    for sc in con.subcons:
        try:
            sc.sizeof()
        except Exception:
            break
        ints.append(sc)
    fixed = Struct(*ints)
    hsize = F.TL_RECORD_HEADER_SIZE
    vals = fixed.parse(data[off + hsize:off + hsize + fixed.sizeof()])
    vals = {k: v for k, v in vals.items() if not k.startswith("_")}
    for k in vals:
        if k in ("nentries", "nsegments", "nargs", "nsections", "nbufs", "count",
                 "arg_size", "path_len"):
            vals[k] = 0
    vals[field] = count
    body = fixed.build(vals)
    filler = length - hsize - len(body)
    return splice(data, sp[-1][0], record_header(length, tname) + body, filler)



def many_records(data=None, record=None, n=300_000):
    """n copies of one record (default: a NOTE of 8 bytes) before the END: a small gzip file
    (1,000 records per member) holding more records than the decoder keeps entries for."""
    data = data if data is not None else load()
    sp = spans(data)
    at = sp[-1][0]
    if record is None:
        fixed = Struct(*F.TL_NOTE.subcons[:-1]).build(dict(level=1, text_len=8))
        record = record_header(F.TL_RECORD_HEADER_SIZE + len(fixed) + 8, "NOTE") + fixed + \
            b"abcdefgh"
    member = gz(record * 1000)
    whole, rest = divmod(n, 1000)
    return gz(_with_cursor(data[:at], len(data) + n * len(record))) + member * whole + \
        gz(record * rest + data[at:])


def big_ioctls(data=None, n=600, arg_size=1 << 20):
    """n copies of the recording's first IOCTL record with its argument copies (before and
    after) grown to arg_size zero bytes each: the kept ioctl bodies pass the decoder's
    budget (600 x 2 MiB: it was 1.27 GB RSS)."""
    data = data if data is not None else load()
    sp = spans(data)
    off, length, _ = next(s for s in sp if F.TL_REC.get(s[2]) == "IOCTL")
    b = F.TL_IOCTL.parse(data[off + F.TL_RECORD_HEADER_SIZE:off + length])
    body = F.TL_IOCTL.build(dict(
        fd=b.fd, request=b.request, arg=b.arg, ret=0, err=0, arg_size=arg_size, nbufs=0,
        flags=b.flags, path_len=len(b.path), path=b.path, before=bytes(arg_size),
        after=bytes(arg_size), buffers=[]))
    record = record_header(F.TL_RECORD_HEADER_SIZE + len(body), "IOCTL") + body
    at = sp[-1][0]
    return gz(_with_cursor(data[:at], len(data) + n * len(record))) + gz(record) * n + \
        gz(data[at:])


def big_submissions(data=None, n=20, seg_size=16 << 20, word=0):
    """n copies of the recording's first SUBMISSION record, its one segment grown to seg_size
    bytes of `word` (0: NOP headers; a one-word IMMD header makes one packet per word): the
    kept submissions, the spill batches and the pushbuffer decode must not hold them all
    (40 x 16 MiB of zeros was 2.0 GB; one 4 MiB segment of IMMD words 666 MB)."""
    data = data if data is not None else load()
    sp = spans(data)
    off, length, _ = next(s for s in sp if F.TL_REC.get(s[2]) == "SUBMISSION")
    b = F.TL_SUBMISSION.parse(data[off + F.TL_RECORD_HEADER_SIZE:off + length])
    fill = bytes(seg_size) if not word else word.to_bytes(4, "little") * (seg_size // 4)
    seg = dict(va=b.segments[0].va, size=seg_size, flags=b.segments[0].flags, data=fill)
    values = {k: v for k, v in b.items() if not k.startswith("_")}
    body = F.TL_SUBMISSION.build(dict(values, nsegments=1, segments=[seg]))
    record = record_header(F.TL_RECORD_HEADER_SIZE + len(body), "SUBMISSION") + body
    at = sp[-1][0]
    return gz(_with_cursor(data[:at], len(data) + n * len(record))) + gz(record) * n + \
        gz(data[at:])


def big_images(data=None, n=8, image_size=60 << 20, distinct=True):
    """n copies of the recording's module-load API_ENTER, its IMAGE section (a real cubin)
    padded with zeros to image_size: the module images kept for attribution must stay in
    the budget (8 x 100 MiB took 549 MB). `distinct`: the last byte of each copy's padding is
    its number, so no two images are the same bytes (the decoder keeps an image that repeats
    once, decoders/session.py _Budget.image); False: n identical images."""
    data = data if data is not None else load()
    sp = spans(data)
    for off, length, t in sp:
        if F.TL_REC.get(t) == "API_ENTER":
            b = F.TL_API.parse(data[off + F.TL_RECORD_HEADER_SIZE:off + length])
            if any(s.tag == 6 for s in b.sections):      # decoders/cuda/api.py: IMAGE
                break
    else:
        raise ValueError("no module image in the recording")
    secs, cubin = [], b""
    for s in b.sections:
        d = dict(tag=s.tag, size=s.size, flags=s.flags, full_size=s.full_size,
                 data=bytes(s.data))
        if s.tag == 6:
            cubin = bytes(s.data)
            d.update(size=image_size, full_size=image_size,
                     data=bytes(s.data) + bytes(image_size - len(s.data)))
        secs.append(d)
    values = {k: v for k, v in b.items() if not k.startswith("_")}
    body = F.TL_API.build(dict(values, sections=secs))
    record = bytearray(record_header(F.TL_RECORD_HEADER_SIZE + len(body), "API_ENTER") + body)
    last = record.find(cubin) + image_size - 1      # the image's last padding byte
    records = []
    for i in range(n):
        record[last] = i + 1 if distinct else 0
        records.append(gz(bytes(record)) if distinct or not records else records[0])
    at = sp[-1][0]
    return gz(_with_cursor(data[:at], len(data) + n * len(record))) + b"".join(records) + \
        gz(data[at:])


def repeated_text_bomb(data=None, n=5, text_len=(1 << 31) - 48, codec="zstd"):
    """n NOTE records of text_len zero bytes each (5 x 2 GiB in a ~600 KB zstd frame):
    every one is over the NOTE maximum and is read past, which is what takes the time."""
    data = data if data is not None else load()
    sp = spans(data)
    at = sp[-1][0]
    fixed = Struct(*F.TL_NOTE.subcons[:-1]).build(dict(level=1, text_len=text_len))
    pad = -text_len % F.TL_ALIGN
    length = F.TL_RECORD_HEADER_SIZE + len(fixed) + text_len + pad
    head = _with_cursor(data[:at], len(data) + n * length)
    parts = [head]
    for _ in range(n):
        parts += [record_header(length, "NOTE") + fixed, text_len + pad]
    parts.append(data[at:])
    if codec == "zstd":
        return zstd_stream(parts)
    return b"".join(gz(p) if isinstance(p, bytes) else zeros_gz(p) for p in parts)


def many_marks(data=None, n=30_000):
    """n pairs of BEGIN/END marks, each around a copy of the recording's first SUBMISSION
    (same pid and tid): the report's marked-launch sections (it read every submission once
    per pair: over 60 s for 30,000)."""
    data = data if data is not None else load()
    sp = spans(data)
    off, length, _ = next(s for s in sp if F.TL_REC.get(s[2]) == "SUBMISSION")
    sub = data[off:off + length]
    h = F.TL_RECORD_HEADER.parse(sub[:F.TL_RECORD_HEADER_SIZE])
    fixed = Struct(*F.TL_MARK.subcons[:-1])

    def mark(kind):
        body = fixed.build(dict(kind=kind, id=1, label_len=1, reserved0=0)) + b"m" + bytes(7)
        return record_header(F.TL_RECORD_HEADER_SIZE + len(body), "MARK", pid=h.pid) + body
    begin, end = (bytearray(mark(k)) for k in (1, 2))   # TL_MARK_KIND BEGIN, END
    for r in (begin, end):      # the submission's thread
        r[:F.TL_RECORD_HEADER_SIZE] = F.TL_RECORD_HEADER.build(dict(
            F.TL_RECORD_HEADER.parse(bytes(r[:F.TL_RECORD_HEADER_SIZE])), tid=h.tid))
    unit = bytes(begin) + sub + bytes(end)
    at = sp[-1][0]
    whole, rest = divmod(n, 1000)
    return gz(_with_cursor(data[:at], len(data) + n * len(unit))) + gz(unit * 1000) * whole + \
        gz(unit * rest + data[at:])


# ---- compressed module images (issue 20, tests/test_image_bombs.py) ------------------------
# The streams are written by hand from the formats' own descriptions (RFC 8878 for zstd:
# frame header, raw / RLE / compressed blocks, a sequences section in RLE mode; the LZ4
# block format: token, literals, offset, length bytes), so no compressor can refuse them.

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_FHD = b"\x00\x38"      # no content size, not single-segment, no checksum; window 2^17 B
ZSTD_MAX_SEQUENCES = 0xFFFF + 0x7F00    # the most Number_of_Sequences can say (RFC 8878 3.1.1.3.2.1)
ZSTD_MAX_BLOCK = 128 << 10              # Block_Maximum_Size
ZSTD_MATCH = 65_539                     # Match_Length_Code 52: baseline 65,539, 16 extra bits


def zstd_block(kind, size, last, body):
    """Block header (RFC 8878 3.1.1.2: last bit, 2-bit type, 21-bit size) + content."""
    return (last | (kind << 1) | (size << 3)).to_bytes(3, "little") + body


def _nseq(n):
    """Number_of_Sequences in its 1-, 2- or 3-byte form."""
    if n < 128:
        return bytes([n])
    if n < 0x7F00:
        return bytes([128 + (n >> 8), n & 0xFF])
    n -= 0x7F00
    return bytes([255, n & 0xFF, n >> 8])


def zstd_many_sequences(nseq=98_043):
    """8 raw bytes, then one compressed block whose sequences section holds `nseq` (1 to
    ZSTD_MAX_SEQUENCES) matches of 65,539 bytes each (RLE-mode codes: literal length 0,
    offset code 0, match code 52; 16 zero extra bits a sequence): ~6.4 GB for the default
    if a decoder believed it."""
    lit = b"\x00"                                             # raw literals, 0 bytes
    seq_head = _nseq(nseq) + b"\x54" + bytes([0, 0, 52])
    bitstream = bytes(2 * nseq) + b"\x01"                    # end marker in the last byte
    body = lit + seq_head + bitstream
    return (ZSTD_MAGIC + ZSTD_FHD + zstd_block(0, 8, 0, b"ABCDEFGH") +
            zstd_block(2, len(body), 1, body))


def zstd_rle(blocks=(4 << 30) // ZSTD_MAX_BLOCK, block_size=ZSTD_MAX_BLOCK, byte=0):
    """`blocks` RLE blocks of `block_size` (at most 128 KiB) bytes of `byte`: a stream of
    4 bytes a block that really expands to blocks x block_size."""
    one = zstd_block(1, block_size, 0, bytes([byte]))
    return ZSTD_MAGIC + ZSTD_FHD + one * (blocks - 1) + zstd_block(1, block_size, 1, bytes([byte]))


def zstd_rle_4gib():
    """32,768 RLE blocks of 128 KiB each: a 131 KB stream that really expands to 4 GiB."""
    return zstd_rle()


def lz4_long_match(length_bytes=1 << 20):
    """One literal, then a match at offset 1 whose length runs on for `length_bytes` bytes of
    255 (~255 B of output each), then the five closing literals: 255 x length_bytes + 25
    bytes of output."""
    return (b"\x1f" + b"\x00" + b"\x01\x00" + b"\xff" * length_bytes + b"\x00" +
            b"\x50" + b"\x00" * 5)


def fatbin_parts(image):
    """(header, [(entry header, stored payload)], rest) of the first fatbin of `image`, walked
    with the declared headers (decoders/cubin/fatbin.py); rest is what follows it."""
    from decoders.cubin import fatbin as FB
    head = FB.FATBIN_HEADER.parse(image[:FB.FATBIN_HEADER_SIZE])
    pos, end = head.header_size, head.header_size + head.fat_size
    entries = []
    while pos + FB.FATBIN_ENTRY_MIN <= end:
        e = FB.FATBIN_ENTRY_HEADER.parse(image[pos:end])
        if e.header_size < FB.FATBIN_ENTRY_MIN:    # zero padding
            break
        body = pos + e.header_size
        entries.append((e, bytes(image[body:body + e.size])))
        pos = body + e.size
    return head, entries, bytes(image[end:])


def fatbin_of(elf, arch=90):
    """A one-entry fatbin holding `elf` as its ELF entry, with the header fields nvcc 13
    writes for sm_<arch> (decoders/cubin/fatbin.py: reserved0 0x0101, version 1.8,
    flags 64BIT | LINUX)."""
    from decoders.cubin import fatbin as FB
    stored = bytes(elf) + bytes(-len(elf) % 8)
    entry = FB.FATBIN_ENTRY_HEADER.build(dict(
        kind=2, reserved0=0x0101, header_size=FB.FATBIN_ENTRY_MIN, size=len(stored),
        compressed_size=0, address_size=0, minor=8, major=1, arch=arch, name_offset=0,
        name_size=0, flags=0x11, reserved1=0, decompressed_size=0, extra=b""))
    return FB.FATBIN_HEADER.build(dict(magic=FB.FATBIN_MAGIC, version=1,
                                       header_size=FB.FATBIN_HEADER_SIZE,
                                       fat_size=len(entry) + len(stored))) + entry + stored


def fatbin_with(payload, flags, declared, image, which=0, keep=False):
    """The fatbin `image` with entry `which` carrying `payload` as its stored bytes, with
    compression `flags` (its own compression bits cleared) and `declared` decompressed
    bytes. keep: the other entries (and what follows the fatbin) stay; else that entry is
    the only one."""
    from decoders.cubin import fatbin as FB
    head, entries, rest = fatbin_parts(image)
    entry, _ = entries[which]
    stored = payload + bytes(-len(payload) % 8)
    own = FB.FATBIN_COMPRESS_ZSTD | FB.FATBIN_COMPRESS_LZ4
    new = FB.FATBIN_ENTRY_HEADER.build(dict(
        entry, size=len(stored), compressed_size=len(payload),
        flags=(entry.flags & ~own) | flags, decompressed_size=declared)) + stored
    if keep:
        new = b"".join(new if i == which else FB.FATBIN_ENTRY_HEADER.build(e) + p
                       for i, (e, p) in enumerate(entries))
    extra = bytes(image[FB.FATBIN_HEADER_SIZE:head.header_size])
    return FB.FATBIN_HEADER.build(dict(head, fat_size=len(new))) + extra + new + \
        (rest if keep else b"")


def image_records(data):
    """[(offset, length, TL_API body)] of the API_ENTER records of the capture `data` that
    carry a module image (an IMAGE section, decoders/cuda/api.py)."""
    from decoders.cuda.api import SECTION_BY_NAME
    out = []
    for off, length, rtype in spans(data):
        if F.TL_REC.get(rtype) == "API_ENTER":
            body = F.TL_API.parse(data[off + F.TL_RECORD_HEADER_SIZE:off + length])
            if any(s.tag == SECTION_BY_NAME["IMAGE"] for s in body.sections):
                out.append((off, length, body))
    return out


def capture_image(data, which=0):
    """The module image of the capture's `which`-th image-carrying API_ENTER record."""
    from decoders.cuda.api import SECTION_BY_NAME
    _, _, body = image_records(data)[which]
    return bytes(next(s.data for s in body.sections if s.tag == SECTION_BY_NAME["IMAGE"]))


def capture_with_image(data, image, which=0):
    """The capture `data` (a recording or any window of one) with the module image of its
    `which`-th image-carrying API_ENTER record replaced by `image`: that record rebuilt with
    the declaration, later records moved, END's and the file header's cursors fixed."""
    from decoders.cuda.api import SECTION_BY_NAME
    target, _, body = image_records(data)[which]
    sp = spans(data)
    out = bytearray(data[:sp[0][0]])
    for off, length, rtype in sp:
        rec = data[off:off + length]
        if off == target:
            sections = [dict(s, data=image, size=len(image), full_size=len(image))
                        if s.tag == SECTION_BY_NAME["IMAGE"] else s for s in body.sections]
            new = F.TL_API.build(dict(body, sections=sections))
            new += bytes(-len(new) % F.TL_ALIGN)
            hdr = F.TL_RECORD_HEADER.parse(rec[:F.TL_RECORD_HEADER_SIZE])
            rec = F.TL_RECORD_HEADER.build(dict(hdr, length=F.TL_RECORD_HEADER_SIZE + len(new))) + new
        elif F.TL_REC.get(rtype) == "END":
            end = F.TL_END.parse(rec[F.TL_RECORD_HEADER_SIZE:])
            rec = rec[:F.TL_RECORD_HEADER_SIZE] + F.TL_END.build(dict(end, cursor=len(out)))
        out += rec
    return _with_cursor(out, len(out))
