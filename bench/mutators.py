"""The mutators of bench/fuzz.py: each makes (bytes, description) from one unmutated input
(a fuzz.Base: .target "capture", "dump" or "cubin", .data, and for captures .spans, the
record spans, and .fields, the length/count fields found from the declarations).

mutate(rng, base, kind) for kind in KINDS; `bomb` writes the length-field bombs of
bench/bombs.py and, through image_bomb(), compressed-image bombs.
"""
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


def image_bomb(rng, base):
    """Hook: (bytes, description) of a compressed-image bomb made from the cubin/fatbin
    `base`, or None. decoders/cubin's decompressors belong to another change; fill this in
    there (a zstd or LZ4 fatbin entry that expands past its declared size)."""
    return None


def bomb(rng, base):
    """A length-field bomb (bench/bombs.py) made from `base`: gzip bytes."""
    if base.target == "cubin":
        out = image_bomb(rng, base)
        return out if out is not None else mutate(rng, base, "absurd")
    if base.target != "capture":
        return mutate(rng, base, "absurd")
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
