"""LZ4 block format decoder (fatbin entries with flag COMPRESS / COMPRESS2).

Provenance: the LZ4 block format description (lz4/lz4, doc/lz4_Block_format.md):
sequences of token (literal length high nibble, match length - 4 low nibble, 15 meaning
"more length bytes follow, 255 meaning more again"), literals, 2-byte little-endian
match offset. The last sequence has literals only. Written here from that description;
checked on the --compress-mode=speed fixture (tests/fixtures/cubins/shapes.sm_90.speed.fatbin):
the decoded ELF equals the separately built cubin.
"""
from decoders.errors import DecodeError

MIN_MATCH = 4


def _length(src, pos, n):
    total = 0
    while True:
        if pos >= n:
            raise DecodeError("lz4: length runs past the end of the input", offset=pos)
        b = src[pos]
        pos += 1
        total += b
        if b != 255:
            return total, pos


def decompress(src, size_hint=None):
    """Decode one LZ4 block; size_hint (the expected output size) bounds the output."""
    out = bytearray()
    pos, n = 0, len(src)
    limit = size_hint if size_hint is not None else 1 << 31
    while pos < n:
        token = src[pos]
        pos += 1
        lit = token >> 4
        if lit == 15:
            more, pos = _length(src, pos, n)
            lit += more
        if pos + lit > n:
            raise DecodeError(f"lz4: literals run past the end ({lit} B)", offset=pos)
        out += src[pos:pos + lit]
        pos += lit
        if pos >= n or len(out) >= limit:
            break
        if pos + 2 > n:
            raise DecodeError("lz4: match offset truncated", offset=pos)
        back = src[pos] | (src[pos + 1] << 8)
        pos += 2
        mlen = token & 15
        if mlen == 15:
            more, pos = _length(src, pos, n)
            mlen += more
        mlen += MIN_MATCH
        if back == 0 or back > len(out):
            raise DecodeError(f"lz4: match offset {back} outside the output ({len(out)} B)",
                              offset=pos - 2)
        if len(out) + mlen > limit:
            raise DecodeError(f"lz4: output exceeds the {limit} B the header announces",
                              offset=pos)
        start = len(out) - back
        if mlen <= back:
            out += out[start:start + mlen]
        else:
            for i in range(mlen):      # overlapping copy repeats the last `back` bytes
                out.append(out[start + i])
    return bytes(out)
