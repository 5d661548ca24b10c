"""The mutators of bench/fuzz.py: each makes (bytes, description) from one unmutated input
(a fuzz.Base: .target "capture", "dump" or "cubin", .data, and for captures .spans, the
record spans, and .fields, the length/count fields found from the declarations).

mutate(rng, base, kind) for kind in KINDS; `bomb` writes the length-field bombs of
bench/bombs.py and, through image_bomb(), compressed-image bombs.
"""
import re
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bombs  # noqa: E402
from decoders.capture import format as F  # noqa: E402

SYNC = struct.pack("<I", F.TL_RECORD_SYNC)


def make_capture(header, records):
    """A capture: a recording's header with its cursor set to the new end, + records."""
    head = bytearray(header)
    body = b"".join(records)
    head[F.TL_CURSOR_OFFSET:F.TL_CURSOR_OFFSET + 8] = struct.pack("<Q", len(head) + len(body))
    return bytes(head) + body


# ---- mutations -----------------------------------------------------------------------------

def absurd_values(width, size, old):
    top = (1 << (8 * width)) - 1
    vals = [top, top - 7, 1 << (8 * width - 1), (1 << (8 * width - 1)) - 8, 0,
            size * 2 + 8, size + 8, (old or 0) + 8, (old or 0) * 4096]
    if width >= 4:
        vals += [0x7FFFFFF8, 0x80000000, 0xFFFFFFF8, 1 << 30]
    return [v & top for v in vals]


def mutate(rng, base, kind, sweep=None):
    """(mutated bytes, description). `sweep` is the record boundary for truncate-boundary."""
    d = base.data
    if kind == "random":
        how = rng.randrange(4)
        if how == 0:
            return bytes(rng.getrandbits(8) for _ in range(rng.randrange(4096))), "random whole"
        if how == 1 and base.target == "capture":
            hsize = base.spans[0][0]
            if rng.random() < 0.5:
                tail = bytes(rng.getrandbits(8) for _ in range(rng.randrange(8192)))
            else:   # random bodies behind valid sync words, valid lengths, any type
                parts = []
                for _ in range(rng.randrange(1, 12)):
                    body = bytes(rng.getrandbits(8) for _ in range(8 * rng.randrange(40)))
                    parts.append(SYNC + struct.pack("<IH", 40 + len(body), rng.randrange(17))
                                 + bytes(rng.getrandbits(8) for _ in range(30)) + body)
                tail = b"".join(parts)
            return make_capture(d[:hsize], [tail]), "random records after the header"
        lo = rng.randrange(len(d))
        n = min(len(d) - lo, rng.choice([1, 4, 8, 40, 256, 4096]))
        return d[:lo] + bytes(rng.getrandbits(8) for _ in range(n)) + d[lo + n:], \
            f"random {n} B at {lo:#x}"
    if kind == "truncate-boundary":
        if base.target == "capture":
            cut = base.spans[sweep % len(base.spans)][0]
        else:
            cut = (sweep * 4) % (len(d) + 1)
        return d[:cut], f"cut at {cut:#x}"
    if kind == "truncate-random":
        cut = rng.randrange(len(d) + 1)
        return d[:cut], f"cut at {cut:#x}"
    if kind == "bitflip":
        out = bytearray(d)
        flips = []
        for _ in range(rng.randrange(1, 9)):
            if base.target == "capture" and rng.random() < 0.5:
                off = rng.choice(base.spans)[0] + rng.randrange(12)
            else:
                off = rng.randrange(len(d))
            out[off] ^= 1 << rng.randrange(8)
            flips.append(off)
        return bytes(out), f"flips at {', '.join(hex(f) for f in flips)}"
    if kind == "absurd":
        out = bytearray(d)
        if base.target == "dump":
            # NV_FIFO_DMA_METHOD_HEADER.METHOD_COUNT (decoders/pushbuf.py HEADER) at its maximum
            from decoders.pushbuf import HEADER
            f = HEADER.by_name["METHOD_COUNT"]
            words = len(out) // 4
            i = rng.randrange(max(words, 1))
            if words:
                w, = struct.unpack_from("<I", out, 4 * i)
                mask = ((1 << f.width) - 1) << f.lo
                w = (w & ~mask) | (rng.choice([(1 << f.width) - 1, 1 << (f.width - 1)]) << f.lo)
                struct.pack_into("<I", out, 4 * i, w & 0xFFFFFFFF)
            return bytes(out), f"METHOD_COUNT max in word {i}"
        if not base.fields:
            return mutate(rng, base, "bitflip")
        descs = []
        for _ in range(1 if rng.random() < 0.7 else rng.randrange(2, 5)):
            path, off, width, old = rng.choice(base.fields)
            value = rng.choice(absurd_values(width, len(d), old))
            out[off:off + width] = value.to_bytes(width, "little")
            descs.append(f"{path}={value:#x}")
        return bytes(out), "; ".join(descs)
    if kind == "reframe":
        return reframe(rng, base)
    if kind == "bomb":
        return bomb(rng, base)
    raise ValueError(kind)


def bomb_stream(rng):
    """(payload, compression flags, bytes it really expands to or None, description): one
    of bench/bombs.py's compressed-stream bombs with random parameters, or random bytes."""
    from decoders.cubin import fatbin as FB
    zstd, lz4 = FB.FATBIN_COMPRESS_ZSTD, FB.FATBIN_COMPRESS_LZ4
    how = rng.randrange(4)
    if how == 0:
        n = rng.randint(1, bombs.ZSTD_MAX_SEQUENCES)
        return (bombs.zstd_many_sequences(n), zstd, 8 + n * bombs.ZSTD_MATCH,
                f"zstd {n} sequences")
    if how == 1:
        total = int(2 ** rng.uniform(20, 32))               # 1 MiB to 4 GiB
        size = rng.choice([bombs.ZSTD_MAX_BLOCK, rng.randint(16 << 10, bombs.ZSTD_MAX_BLOCK)])
        blocks = max(1, total // size)
        byte = rng.choice([0, rng.randrange(256)])
        return (bombs.zstd_rle(blocks, size, byte), zstd, blocks * size,
                f"zstd RLE {blocks} x {size} B of {byte:#x}")
    if how == 2:
        n = int(2 ** rng.uniform(2, 22))                    # up to 4 MiB: ~1 GiB of output
        return bombs.lz4_long_match(n), lz4, 255 * n + 25, f"lz4 match of {n} length bytes"
    flags = rng.choice([zstd, lz4])
    junk = rng.randbytes(rng.randrange(1, 64 << 10))
    if flags == zstd and rng.random() < 0.5:    # past the frame header, into the blocks
        junk = bombs.ZSTD_MAGIC + bombs.ZSTD_FHD + junk
    return junk, flags, None, f"{len(junk)} random B as {'zstd' if flags == zstd else 'lz4'}"


def declared_size(rng, true, stored):
    """(value, name) for an entry's decompressed_size: tiny, about what the stream really
    gives (or a guess for random bytes), the per-image cap, or absurd."""
    from decoders.cubin.fatbin import IMAGE_DECOMPRESS_CAP as cap
    guess = true if true is not None else stored * rng.randint(1, 64)
    return rng.choice([
        (rng.randrange(64), "tiny"),
        (guess, "true" if true is not None else "a guess"),
        (max(0, guess + rng.randint(-4096, 4096)), "true-ish"),
        (rng.choice([cap, cap - 1]), "at the cap"),
        (rng.choice([1 << 40, 1 << 63, (1 << 64) - 1]), "absurd")])


def as_fatbin(image):
    """(fatbin, how): `image` itself if it is a fatbin, else wrapped in a one-entry fatbin
    as its ELF entry (a raw cubin, a host ELF, PTX text: the payload is replaced anyway)."""
    from construct import ConstructError
    from decoders.cubin.elf import Elf
    try:
        if bombs.fatbin_parts(image)[1]:
            return image, ""
    except ConstructError:  # no fatbin magic, or cut short: wrap it
        pass
    try:
        arch = Elf(image).sm or 90
    except Exception:       # noqa: BLE001 - not a cubin: any arch will do
        arch = 90
    return bombs.fatbin_of(image, arch), " (wrapped in a fatbin)"


def bomb_fatbin(rng, image):
    """(fatbin bytes, description): `image` as a fatbin, a random entry's payload replaced
    by a random compressed-stream bomb with a random declared size."""
    fatbin, how = as_fatbin(image)
    n = len(bombs.fatbin_parts(fatbin)[1])
    which = rng.randrange(n)
    payload, flags, true, what = bomb_stream(rng)
    declared, dname = declared_size(rng, true, len(payload))
    out = bombs.fatbin_with(payload, flags, declared, fatbin, which=which, keep=True)
    return out, f"{what} in entry {which} of {n}{how}, declaring {declared:,} B ({dname})"


def image_bomb(rng, base):
    """(bytes, description) of a compressed-image bomb made from `base`, or None: a cubin or
    fatbin as a fatbin with a bomb entry (bomb_fatbin); a capture (window) with the module
    image of one of its API_ENTER records replaced by such a fatbin; None for a capture
    that carries no image and for dumps."""
    if base.target == "cubin":
        out, desc = bomb_fatbin(rng, base.data)
        return out, f"image {desc}"
    if base.target != "capture":
        return None
    recs = bombs.image_records(base.data)
    if not recs:
        return None
    k = rng.randrange(len(recs))
    out, desc = bomb_fatbin(rng, bombs.capture_image(base.data, k))
    return bombs.capture_with_image(base.data, out, k), \
        f"image of the API_ENTER at {recs[k][0]:#x}: {desc}"


def bomb(rng, base):
    """A bomb made from `base`: on cubins a compressed-image bomb (image_bomb); on captures
    half the time one whose module image is one, where the capture carries an image, else
    a length-field bomb (bench/bombs.py: gzip bytes)."""
    if base.target == "cubin":
        out = image_bomb(rng, base)
        return out if out is not None else mutate(rng, base, "absurd")
    if base.target != "capture":
        return mutate(rng, base, "absurd")
    if rng.random() < 0.5:
        out = image_bomb(rng, base)
        if out is not None:
            return out
    size = int(2 ** rng.uniform(16, 31))
    size -= size % F.TL_ALIGN
    how = rng.randrange(3)
    if how == 0:
        tname = rng.choice(["NOTE", "MARK"])
        n = min(size, (1 << 31) - 64)
        at = rng.choice(base.spans)[0]
        return bombs.text_bomb(base.data, tname=tname, text_len=n, at=at), \
            f"{tname} text of {n} B at {at:#x}"
    if how == 1:
        k = rng.randrange(len(base.spans))
        length = max(min(size, (1 << 31) - 8), base.spans[k][1])
        return bombs.length_lie(base.data, which=k, length=length), \
            f"record {k} length {length} over zeros"
    have = {F.TL_REC.get(t) for _, _, t in base.spans}
    choices = [(t, f) for t, f in (("SUBMISSION", "nsegments"), ("SUBMISSION", "nentries"),
                                   ("API_ENTER", "nsections"), ("API_ENTER", "nargs"),
                                   ("IOCTL", "nbufs"), ("IOCTL", "arg_size"),
                                   ("STATS", "count")) if t in have]
    if not choices:
        return mutate(rng, base, "absurd")
    tname, field = rng.choice(choices)
    length = min(size, 1 << 27) + F.TL_RECORD_HEADER_SIZE + 64
    length -= length % F.TL_ALIGN
    top = (1 << 16) - 1 if field in ("nsections", "nargs") else (1 << 32) - 1
    count = rng.choice([top, length // 8, length // 16, length // 24, 1 << rng.randrange(31)])
    return bombs.count_bomb(base.data, tname=tname, field=field, count=min(count, top),
                        length=length), f"{tname}.{field}={min(count, top)} over {length} B"


def bomb_shape(desc):
    """What a `bomb` mutant is, from its description: image, text, length, count, or
    absurd (no bomb for that input: an absurd-length mutant instead)."""
    if desc.startswith("image"):
        return "image"
    if " text of " in desc:
        return "text"
    if desc.startswith("record ") and " length " in desc:
        return "length"
    if re.match(r"[A-Z_]+\.\w+=\d+ over \d+ B$", desc):
        return "count"
    return "absurd"


def reframe(rng, base):
    """An API_ENTER/API_EXIT record rebuilt with the format.py declaration after changing what
    it carries (fewer or more argument words, a section cut or emptied, a slot swapped), its
    `length` set to match: records that frame well but say too little, which no bit flip or
    length overwrite makes (the reader drops a record whose fields and frame disagree)."""
    if base.target != "capture":
        return mutate(rng, base, "bitflip")
    from decoders.cuda import api as A
    api = [s for s in base.spans if F.TL_REC.get(s[2], "").startswith("API_")]
    if not api:
        return mutate(rng, base, "absurd")
    off, length, _ = rng.choice(api)
    d = base.data
    body = F.TL_API.parse(d[off + F.TL_RECORD_HEADER_SIZE:off + length])
    args, sections = list(body.args), [dict(s) for s in body.sections]
    how = rng.randrange(4)
    if how == 0:
        args = args[:rng.randrange(len(args) + 1)]
    elif how == 1:
        args += [rng.getrandbits(64) for _ in range(rng.randrange(1, 8))]
    elif how == 2 and sections:
        s = rng.choice(sections)
        s["data"] = bytes(s["data"])[:rng.randrange(len(s["data"]) + 1)]
        s["tag"] = rng.choice([s["tag"], rng.choice(sorted(A.SECTIONS)), rng.randrange(16)])
    else:
        body.slot = rng.choice(sorted(A.BY_SLOT)[:16] + [rng.randrange(1 << 16)])
    for s in sections:
        s["size"] = len(s["data"])
        s.pop("_io", None)
    new = F.TL_API.build(dict(slot=body.slot, call=body.call, result=body.result,
                              nargs=len(args), nsections=len(sections), args=args,
                              sections=sections))
    new += bytes(-len(new) % F.TL_ALIGN)
    head = bytearray(d[off:off + F.TL_RECORD_HEADER_SIZE])
    struct.pack_into("<I", head, 4, F.TL_RECORD_HEADER_SIZE + len(new))
    out = d[:off] + bytes(head) + new + d[off + length:]
    cursor = F.TL_CURSOR_OFFSET
    out = out[:cursor] + struct.pack("<Q", len(out)) + out[cursor + 8:]
    return out, f"API record at {off:#x} rebuilt ({('args cut', 'args added', 'section cut', 'slot')[how]})"


KINDS = ("random", "truncate-boundary", "truncate-random", "bitflip", "absurd", "bomb",
         "reframe")
