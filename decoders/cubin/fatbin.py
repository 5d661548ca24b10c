"""Fatbin containers: the header, its entries (PTX / ELF), compression, and where they sit
in host executables and shared objects.

Provenance:
  Layout and numbers (magic 0xBA55ED50, header {magic, version, header_size, fat_size};
  entry kinds PTX 1, ELF 2, OLDCUBIN 4; flags 64BIT 0x1, DEBUG 0x2, CUDA 0x4, OPENCL 0x8,
  LINUX 0x10, MAC 0x20, WINDOWS 0x40, optimisation level 0xf00, COMPRESS 0x1000,
  COMPRESS2 0x2000, ZCOMPRESS 0x8000; the wrapper in .nvFatBinSegment with magic
  0x466243B1 {magic, version, data, filename_or_fatbins}; section names .nv_fatbin and
  .nvFatBinSegment): redplait/denvdis fb/fb.cc, which names its own sources
  (chei90/RemoteRendering inc/fatbinary.h, inc/fatBinaryCtl.h). Name prefix: FATBIN_.
  Measured here (scripts/build_cubin_fixtures.sh, nvcc 13.0.88): the entry header is 64
  bytes for ELF and 80 for PTX (16 trailing bytes, first word 0x48, kept as `extra`);
  `reserved0` is 0x0101; `address_size` is 0x40 for PTX and 0 for ELF; `size` is the
  stored payload padded to 8, `compressed_size` the compressed stream's length.
  nvcc 13 compression (--compress-mode): default and `size` write zstd frames (flag
  0x8000, frame magic 28 b5 2f fd; default compresses only the PTX of small modules);
  `speed` writes LZ4 block format (flag 0x2000); `none` leaves entries as they are.
  The two compressions are decoded by the C libraries behind PyPI's `zstandard` and `lz4`
  (issue 17), bounded while they run (issue 20): an entry's output stops at the size its
  header declares, and one image's entries together at IMAGE_DECOMPRESS_CAP
  (docs/module-images.md, "Decompression bounds").
"""
import io
import mmap
import struct
import tempfile

import lz4.block
import zstandard

from construct import Bytes, Const, Int16ul, Int32ul, Int64ul, Struct, this

from decoders.errors import CaptureError, TraceLaunchError
from decoders.fields import align_up, render_value, Field

FATBIN_MAGIC = 0xBA55ED50
FATBIN_WRAPPER_MAGIC = 0x466243B1
FATBIN_DATA_SECTION = ".nv_fatbin"
FATBIN_CONTROL_SECTION = ".nvFatBinSegment"
FATBIN_MODULE_ID_SECTION = "__nv_module_id"

FATBIN_HEADER = Struct(
    "magic" / Const(FATBIN_MAGIC, Int32ul),
    "version" / Int16ul,
    "header_size" / Int16ul,
    "fat_size" / Int64ul,        # bytes of entries after the header
)
FATBIN_HEADER_SIZE = 16

FATBIN_ENTRY_HEADER = Struct(
    "kind" / Int16ul,            # FATBIN_KIND
    "reserved0" / Int16ul,
    "header_size" / Int32ul,
    "size" / Int64ul,            # payload bytes stored after the header (padded)
    "compressed_size" / Int32ul,
    "address_size" / Int32ul,    # 0x40 in PTX entries
    "minor" / Int16ul,           # PTX ISA / ELF version
    "major" / Int16ul,
    "arch" / Int32ul,            # 90 for sm_90 / compute_90
    "name_offset" / Int32ul,
    "name_size" / Int32ul,
    "flags" / Int64ul,           # FATBIN_FLAGS
    "reserved1" / Int64ul,
    "decompressed_size" / Int64ul,
    "extra" / Bytes(this.header_size - 64),
)
FATBIN_ENTRY_MIN = 64

FATBIN_WRAPPER = Struct(
    "magic" / Int32ul,
    "version" / Int32ul,
    "data" / Int64ul,            # virtual address of the fatbin header
    "filename_or_fatbins" / Int64ul,
)
FATBIN_WRAPPER_SIZE = 24

FATBIN_KIND = {1: "PTX", 2: "ELF", 4: "OLDCUBIN"}
FATBIN_FLAGS = Field("flags", 0, 0, 64, ("flags", {
    0x1: "64BIT", 0x2: "DEBUG", 0x4: "CUDA", 0x8: "OPENCL", 0x10: "LINUX", 0x20: "MAC",
    0x40: "WINDOWS", 0x1000: "COMPRESS", 0x2000: "COMPRESS2", 0x8000: "ZCOMPRESS"}))
FATBIN_FLAG_OPT_MASK = 0xF00
FATBIN_COMPRESS_LZ4 = 0x3000       # COMPRESS, COMPRESS2
FATBIN_COMPRESS_ZSTD = 0x8000

# The most bytes one module image's entries may decompress to, all together (issue 20).
# A declared size above what is left is refused before anything is allocated
# (docs/module-images.md says how the value was chosen).
IMAGE_DECOMPRESS_CAP = 256 * 1024 * 1024
# zstd output is read this much at a time, so the declared size is enforced while the
# stream is decoded, not after (a frame of RLE blocks can expand 32,000-fold).
ZSTD_READ_CHUNK = 1024 * 1024
# A zstd payload this large, asked for `to_file`, is decompressed into an anonymous temporary
# file and mapped read-only instead of held: a 10.7 MiB library image of a 2-rank FSDP job
# (scripts/corpus/train_fsdp.py) holds a 100 MiB sm_90 cubin, of which naming a kernel reads
# the symbol table and one .nv.info section.
FILE_PAYLOAD = 16 << 20
ZSTD_MAX_WINDOW = 128 * 1024 * 1024     # libzstd's own default limit, stated
# lz4.block.decompress fills a buffer of the declared size, then copies what it wrote into
# the bytes it returns: an LZ4 entry holds its size twice while it decodes, so it needs
# twice its declared size of the budget (what it keeps afterwards is counted once).
LZ4_HELD = 2

_HEADER_C = FATBIN_HEADER.compile()
_WRAPPER_C = FATBIN_WRAPPER.compile()


class FatbinEntry:
    """One entry: kind, arch, flags, payload (decompressed when we can), file offset."""

    def __init__(self, header, offset, payload, compression, error=None):
        self.header = header
        self.offset = offset
        self.kind = FATBIN_KIND.get(header.kind, f"{header.kind:#x} FATBIN_KIND_???")
        prefix = "compute" if self.kind == "PTX" else "sm"
        self.arch = f"{prefix}_{header.arch}"
        self.flags = header.flags
        self.compression = compression      # None, "lz4" or "zstd"
        self.payload = payload              # bytes, or None if compressed and not decoded
        self.error = error                  # why payload is None, if it is

    def decoded(self, budget=None, to_file=False):
        """The payload as bytes, decompressed now if it was listed only (decompress=False);
        to_file: a large zstd payload as a read-only mmap of a temporary file."""
        if self.payload is not None:
            return bytes(self.payload)
        return decompress_payload(self.compression, self.stored, self.header.decompressed_size,
                                  self.payload_offset, budget, to_file=to_file)

    @property
    def version(self):
        return f"{self.header.major}.{self.header.minor}"

    def to_json(self):
        return {"kind": self.kind, "arch": self.arch, "version": self.version,
                "flags": render_value(FATBIN_FLAGS, self.flags), "offset": self.offset,
                "size": self.header.size, "compression": self.compression,
                "decompressed_size": len(self.payload) if self.payload is not None else None,
                "error": self.error}


class DecompressBudget:
    """What one module image may still decompress to (IMAGE_DECOMPRESS_CAP at first)."""

    def __init__(self, cap=IMAGE_DECOMPRESS_CAP):
        self.cap = self.left = cap


def _zstd_bounded(blob, size):
    """All frames of `blob`, stopping as soon as the output passes `size` bytes. The output
    grows in one BytesIO, whose getvalue() hands over its buffer without a copy: joining
    the reads held the payload twice (a 259 MB entry took 518 MB, found by bench/fuzz.py)."""
    reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(
        blob, read_across_frames=True)
    out = io.BytesIO()
    while True:
        chunk = reader.read(min(ZSTD_READ_CHUNK, size - out.tell() + 1))
        if not chunk:
            return out.getvalue()
        if out.tell() + len(chunk) > size:
            return None
        out.write(chunk)


def _zstd_to_file(blob, size):
    """_zstd_bounded into a temporary file, returned as a read-only mmap (None past `size`).
    The mapping outlives the file object (mmap keeps its own descriptor)."""
    reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW).stream_reader(
        blob, read_across_frames=True)
    n = 0
    with tempfile.TemporaryFile(prefix="trace-decode-") as f:
        while True:
            chunk = reader.read(min(ZSTD_READ_CHUNK, size - n + 1))
            if not chunk:
                break
            n += len(chunk)
            if n > size:
                return None
            f.write(chunk)
        f.flush()
        return mmap.mmap(f.fileno(), n, access=mmap.ACCESS_READ) if n else b""


def decompress_payload(method, blob, size, offset, budget=None, to_file=False):
    """An entry's payload: `blob` (lz4 block or zstd frames) decoded to exactly `size` bytes,
    the size its header declares. CaptureError (at `offset`) if the stream is corrupt, would
    write more than `size` bytes, or `size` is more than the image's budget has left; the
    bound holds while the library decodes, so a bomb costs at most `size` bytes (an LZ4
    one twice that, which is what it needs of the budget: LZ4_HELD)."""
    budget = budget or DecompressBudget()
    need = size * LZ4_HELD if method == "lz4" else size
    if need > budget.left:
        held = f"; lz4 needs {LZ4_HELD} x the declared size while it decodes" \
            if method == "lz4" else ""
        raise CaptureError(f"fatbin entry declares {size:,} B of {method}-compressed payload, "
                           f"over the per-image cap ({budget.left:,} of {budget.cap:,} B left"
                           f"{held})", offset=offset)
    try:
        if method == "lz4":     # the output buffer is `size` bytes: LZ4BlockError if it overflows
            out = lz4.block.decompress(blob, uncompressed_size=size) if size else None
        elif to_file and size >= FILE_PAYLOAD:
            out = _zstd_to_file(blob, size)
        else:
            out = _zstd_bounded(blob, size)
    except (lz4.block.LZ4BlockError, zstandard.ZstdError) as e:
        raise CaptureError(f"fatbin entry: {method} stream corrupt: {e}", offset=offset) from None
    if out is None:
        raise CaptureError(f"fatbin entry: {method} stream decompresses past the {size:,} B its "
                           "header declares", offset=offset)
    if len(out) != size:
        raise CaptureError(f"fatbin entry decompressed to {len(out)} B, header says {size}",
                           offset=offset)
    budget.left -= size
    return out


def parse_fatbin(data, base_offset=0, decompress=True, budget=None, views=False):
    """[FatbinEntry] of one or more consecutive fatbins in `data` (zero padding ends it).
    Compressed payloads share one DecompressBudget (the image's: `budget`, or a new one).
    views (with decompress=False): payloads and `stored` are memoryviews of `data`, so an
    image's entries are listed without copying them (FatbinEntry.decoded() makes one)."""
    if decompress and budget is None:
        budget = DecompressBudget()
    out = []
    pos, n = 0, len(data)
    while pos + 4 <= n:
        if not any(data[pos:pos + 16]):
            break
        if n - pos < FATBIN_HEADER_SIZE:
            raise CaptureError(f"fatbin header truncated (need {FATBIN_HEADER_SIZE} B, have "
                               f"{n - pos})", offset=base_offset + pos)
        magic, = struct.unpack_from("<I", data, pos)
        if magic != FATBIN_MAGIC:
            raise CaptureError(f"bad fatbin magic {magic:#010x}", offset=base_offset + pos)
        hdr = _HEADER_C.parse(data[pos:pos + FATBIN_HEADER_SIZE])
        if hdr.header_size < FATBIN_HEADER_SIZE:
            raise CaptureError(f"fatbin header_size {hdr.header_size} < {FATBIN_HEADER_SIZE}",
                               offset=base_offset + pos + 6)
        start = pos + hdr.header_size
        end = start + hdr.fat_size
        if end > n:
            raise CaptureError(f"fatbin truncated (header says {hdr.fat_size:#x} B of entries, "
                               f"have {max(n - start, 0):#x})", offset=base_offset + pos + 8)
        out.extend(_entries(memoryview(data) if views else data, start, end, base_offset,
                            decompress, budget))
        pos = align_up(end, 8)
    return out


def fatbin_without(data, drop):
    """`data` (one or more consecutive fatbins) with the entries whose header offsets are in
    `drop` left out and each fatbin's fat_size set to what it keeps. Kept entries and any
    bytes after the last fatbin are copied as they are, byte for byte."""
    view = memoryview(data)
    out, pos, n = [], 0, len(data)
    while pos + FATBIN_HEADER_SIZE <= n and any(view[pos:pos + 16]):
        hdr = _HEADER_C.parse(bytes(view[pos:pos + FATBIN_HEADER_SIZE]))
        start = pos + hdr.header_size
        end = start + hdr.fat_size
        kept = [view[e.offset:e.payload_offset + e.header.size]
                for e in _entries(view, start, end, 0, False, None) if e.offset not in drop]
        out.append(FATBIN_HEADER.build(dict(hdr, fat_size=sum(map(len, kept)))))
        out.append(view[pos + FATBIN_HEADER_SIZE:start])
        out.extend(kept)
        gap = align_up(end, 8)
        out.append(view[end:gap])
        pos = gap
    out.append(view[pos:])
    return b"".join(out)


def _entries(data, pos, end, base_offset, decompress, budget):
    out = []
    while pos < end:
        if end - pos < FATBIN_ENTRY_MIN:
            if not any(data[pos:end]):
                break
            raise CaptureError(f"fatbin entry header truncated (need {FATBIN_ENTRY_MIN} B, "
                               f"have {end - pos})", offset=base_offset + pos)
        hsize, = struct.unpack_from("<I", data, pos + 4)
        if hsize < FATBIN_ENTRY_MIN or pos + hsize > end:
            raise CaptureError(f"fatbin entry header_size {hsize} out of range",
                               offset=base_offset + pos + 4)
        hdr = FATBIN_ENTRY_HEADER.parse(data[pos:pos + hsize])
        body = pos + hsize
        if body + hdr.size > end:
            raise CaptureError(f"fatbin entry payload truncated (need {hdr.size:#x} B, "
                               f"have {end - body:#x})", offset=base_offset + pos + 8)
        raw = data[body:body + hdr.size]
        compression = None
        if hdr.flags & FATBIN_COMPRESS_ZSTD:
            compression = "zstd"
        elif hdr.flags & FATBIN_COMPRESS_LZ4:
            compression = "lz4"
        payload, error = raw, None
        if compression:
            clen = hdr.compressed_size or hdr.size
            if clen > hdr.size:
                raise CaptureError(f"fatbin entry compressed_size {clen:#x} > size {hdr.size:#x}",
                                   offset=base_offset + pos + 16)
            if decompress:
                payload = decompress_payload(compression, raw[:clen], hdr.decompressed_size,
                                             base_offset + body, budget)
            else:
                payload, error = None, f"{compression}-compressed, not decoded"
        entry = FatbinEntry(hdr, base_offset + pos, payload, compression, error)
        entry.stored = raw[:clen] if compression else raw
        entry.payload_offset = base_offset + body
        out.append(entry)
        pos = body + hdr.size
    return out


def find_fatbins(elf):
    """[(description, file offset, bytes)] of the fatbins in a host ELF (decoders.cubin.elf.Elf).

    The .nv_fatbin section first; then any fatbin that a .nvFatBinSegment wrapper points
    at outside it (shared objects may keep it in .rodata)."""
    out, seen = [], set()
    sec = elf.by_name.get(FATBIN_DATA_SECTION)
    if sec is not None and sec["sh_type"] != "SHT_NOBITS":
        off = sec["sh_offset"]
        out.append((FATBIN_DATA_SECTION, elf.base_offset + off, elf.section_data(sec)))
        seen.add((off, off + sec["sh_size"]))
    ctl = elf.by_name.get(FATBIN_CONTROL_SECTION)
    if ctl is None:
        return out
    data = elf.section_data(ctl)
    for i in range(0, len(data) - FATBIN_WRAPPER_SIZE + 1, FATBIN_WRAPPER_SIZE):
        w = _WRAPPER_C.parse(data[i:i + FATBIN_WRAPPER_SIZE])
        if w.magic != FATBIN_WRAPPER_MAGIC:
            continue
        fo = _va_to_offset(elf, w.data)
        if fo is None or any(a <= fo < b for a, b in seen):
            continue
        hdr = elf.data[fo:fo + FATBIN_HEADER_SIZE]
        if len(hdr) < FATBIN_HEADER_SIZE:
            raise CaptureError("fatbin wrapper points past the end of the file",
                               offset=elf.base_offset + ctl["sh_offset"] + i + 8)
        size = FATBIN_HEADER_SIZE + int.from_bytes(hdr[8:16], "little")
        out.append((f"{FATBIN_CONTROL_SECTION}[{i // FATBIN_WRAPPER_SIZE}]",
                     elf.base_offset + fo, elf.data[fo:fo + size]))
        seen.add((fo, fo + size))
    return out


def _va_to_offset(elf, va):
    for sec in elf.sections:
        addr, size = sec["sh_addr"], sec["sh_size"]
        if addr and addr <= va < addr + size and sec["sh_type"] != "SHT_NOBITS":
            return sec["sh_offset"] + (va - addr)
    return None
