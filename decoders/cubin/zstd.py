"""Zstandard frame decoder in pure Python (fatbin entries with flag ZCOMPRESS, nvcc 13).

Provenance: RFC 8878 "Zstandard Compression and the application/zstd Media Type"
(frame and block layout, literals and sequences sections, Huffman and FSE table
descriptions, predefined distributions, baselines and extra bits of the length and
offset codes, repeat offsets). The decoding-table construction follows the RFC's
description (FSE spread step (size >> 1) + (size >> 3) + 3; Huffman ranks filled from the
lowest weight). Written here; no dictionary support (fatbins use none), content checksum
skipped, not verified. Checked on tests/fixtures/cubins/shapes.sm_90.size.fatbin and the
default-mode PTX of shapes_exe: output equals the separately built cubin / PTX size.

Errors are DecodeError with the offset in the compressed input.
"""
from decoders.errors import DecodeError

ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MASK, SKIPPABLE_MAGIC = 0xFFFFFFF0, 0x184D2A50

LL_DEFAULT = (4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1,
              1, 1, 1, -1, -1, -1, -1)
ML_DEFAULT = (1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
              1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1)
OF_DEFAULT = (1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1,
              -1, -1)
LL_DEFAULT_LOG, ML_DEFAULT_LOG, OF_DEFAULT_LOG = 6, 6, 5
LL_MAX, ML_MAX, OF_MAX = 35, 52, 31
LL_MAX_LOG, ML_MAX_LOG, OF_MAX_LOG = 9, 9, 8

# (baseline, extra bits) per code
LL_CODES = [(i, 0) for i in range(16)] + [
    (16, 1), (18, 1), (20, 1), (22, 1), (24, 2), (28, 2), (32, 3), (40, 3), (48, 4), (64, 6),
    (128, 7), (256, 8), (512, 9), (1024, 10), (2048, 11), (4096, 12), (8192, 13), (16384, 14),
    (32768, 15), (65536, 16)]
ML_CODES = [(i + 3, 0) for i in range(32)] + [
    (35, 1), (37, 1), (39, 1), (41, 1), (43, 2), (47, 2), (51, 3), (59, 3), (67, 4), (83, 4),
    (99, 5), (131, 7), (259, 8), (515, 9), (1027, 10), (2051, 11), (4099, 12), (8195, 13),
    (16387, 14), (32771, 15), (65539, 16)]


class _Back:
    """Backward bit reader: bits are read from the end of the stream towards its start."""

    def __init__(self, data, base):
        if not data or data[-1] == 0:
            raise DecodeError("zstd: bitstream without end marker", offset=base + len(data))
        self.data = bytes(data) + b"\0" * 8
        self.pos = (len(data) - 1) * 8 + data[-1].bit_length() - 1   # bits left
        self.base = base

    def read(self, n):
        if n == 0:
            return 0
        lo = self.pos - n
        self.pos = lo
        if lo >= 0:
            chunk = int.from_bytes(self.data[lo >> 3:(lo >> 3) + 8], "little")
            return (chunk >> (lo & 7)) & ((1 << n) - 1)
        if lo + n <= 0:
            return 0
        chunk = int.from_bytes(self.data[0:8], "little") & ((1 << (lo + n)) - 1)
        return (chunk << -lo) & ((1 << n) - 1)

    def peek(self, n):
        save = self.pos
        v = self.read(n)
        self.pos = save
        return v


def _highbit(v):
    return v.bit_length() - 1


def _fse_table(norm, log):
    size = 1 << log
    symbol = [0] * size
    high = size - 1
    nxt = [0] * len(norm)
    for s, c in enumerate(norm):
        if c == -1:
            symbol[high] = s
            high -= 1
            nxt[s] = 1
        else:
            nxt[s] = c
    step = (size >> 1) + (size >> 3) + 3
    pos = 0
    for s, c in enumerate(norm):
        for _ in range(max(c, 0)):
            symbol[pos] = s
            pos = (pos + step) & (size - 1)
            while pos > high:
                pos = (pos + step) & (size - 1)
    if pos != 0:
        raise DecodeError("zstd: FSE distribution does not fill its table")
    table = []
    for u in range(size):
        s = symbol[u]
        state = nxt[s]
        nxt[s] += 1
        nb = log - _highbit(state)
        table.append((s, nb, (state << nb) - size))
    return table


def _read_fse_description(data, pos, max_symbol, max_log):
    """(normalized counts, accuracy log, bytes used) of an FSE table description."""
    bits = int.from_bytes(data[pos:pos + 512], "little")
    total_bits = 8 * min(len(data) - pos, 512)
    bp = 4
    log = (bits & 15) + 5
    if log > max_log:
        raise DecodeError(f"zstd: FSE accuracy log {log} > {max_log}", offset=pos)
    remaining = (1 << log) + 1
    threshold = 1 << log
    nbits = log + 1
    norm = []
    while remaining > 1:
        if len(norm) > max_symbol:
            raise DecodeError("zstd: FSE description has too many symbols", offset=pos)
        mx = (2 * threshold - 1) - remaining
        low = (bits >> bp) & (threshold - 1)
        if low < mx:
            value = low
            bp += nbits - 1
        else:
            value = (bits >> bp) & (2 * threshold - 1)
            if value >= threshold:
                value -= mx
            bp += nbits
        count = value - 1
        remaining -= -count if count < 0 else count
        norm.append(count)
        if count == 0:
            while True:
                rep = (bits >> bp) & 3
                bp += 2
                norm.extend([0] * rep)
                if rep != 3:
                    break
        while remaining < threshold and threshold > 1:
            nbits -= 1
            threshold >>= 1
        if bp > total_bits:
            raise DecodeError("zstd: FSE description truncated", offset=pos)
    if remaining != 1 or len(norm) > max_symbol + 1:
        raise DecodeError("zstd: FSE description inconsistent", offset=pos)
    return norm, log, (bp + 7) >> 3


def _huffman_table(data, pos, base):
    """(decoding table, max bits, bytes used) of a Huffman tree description."""
    if pos >= len(data):
        raise DecodeError("zstd: Huffman description missing", offset=base + pos)
    header = data[pos]
    if header < 128:
        size = header
        if pos + 1 + size > len(data):
            raise DecodeError("zstd: Huffman weights truncated", offset=base + pos)
        blob = data[pos + 1:pos + 1 + size]
        norm, log, used = _read_fse_description(blob, 0, 255, 6)
        table = _fse_table(norm, log)
        br = _Back(blob[used:], base + pos + 1 + used)
        s1, s2 = br.read(log), br.read(log)
        weights = []
        while True:
            sym, nb, nxt = table[s1]
            weights.append(sym)
            s1 = nxt + br.read(nb)
            if br.pos < 0:
                weights.append(table[s2][0])
                break
            sym, nb, nxt = table[s2]
            weights.append(sym)
            s2 = nxt + br.read(nb)
            if br.pos < 0:
                weights.append(table[s1][0])
                break
            if len(weights) > 255:
                raise DecodeError("zstd: too many Huffman weights", offset=base + pos)
        used = 1 + size
    else:
        count = header - 127
        nbytes = (count + 1) // 2
        if pos + 1 + nbytes > len(data):
            raise DecodeError("zstd: Huffman weights truncated", offset=base + pos)
        weights = []
        for i in range(count):
            b = data[pos + 1 + i // 2]
            weights.append(b >> 4 if i % 2 == 0 else b & 15)
        used = 1 + nbytes
    total = sum(1 << (w - 1) for w in weights if w)
    if total == 0:
        raise DecodeError("zstd: empty Huffman weights", offset=base + pos)
    max_bits = _highbit(total) + 1
    rest = (1 << max_bits) - total
    if rest & (rest - 1):
        raise DecodeError("zstd: Huffman weights do not complete a tree", offset=base + pos)
    weights.append(_highbit(rest) + 1)
    if max_bits > 11:
        raise DecodeError(f"zstd: Huffman max bits {max_bits} > 11", offset=base + pos)
    rank_count = [0] * (max_bits + 2)
    for w in weights:
        if w > max_bits:
            raise DecodeError("zstd: Huffman weight too large", offset=base + pos)
        rank_count[w] += 1
    start, nxt = [0] * (max_bits + 2), 0
    for w in range(1, max_bits + 1):
        start[w] = nxt
        nxt += rank_count[w] << (w - 1)
    table = [None] * (1 << max_bits)
    for sym, w in enumerate(weights):
        if not w:
            continue
        length = 1 << (w - 1)
        entry = (sym, max_bits + 1 - w)
        for u in range(start[w], start[w] + length):
            table[u] = entry
        start[w] += length
    return (table, max_bits), used


def _huffman_stream(data, base, table, max_bits, count):
    br = _Back(data, base)
    out = bytearray()
    for _ in range(count):
        sym, nb = table[br.peek(max_bits)]
        out.append(sym)
        br.pos -= nb
    if br.pos != 0:
        raise DecodeError("zstd: Huffman stream not fully consumed", offset=base)
    return out


class _Frame:
    def __init__(self):
        self.huffman = None
        self.fse = {"ll": None, "of": None, "ml": None}
        self.rep = [1, 4, 8]


def _literals(block, base, frame):
    b0 = block[0]
    ltype, fmt = b0 & 3, (b0 >> 2) & 3
    if ltype in (0, 1):
        if fmt in (0, 2):
            regen, hsize = b0 >> 3, 1
        elif fmt == 1:
            regen, hsize = (b0 >> 4) + (block[1] << 4), 2
        else:
            regen, hsize = (b0 >> 4) + (block[1] << 4) + (block[2] << 12), 3
        if ltype == 0:
            if hsize + regen > len(block):
                raise DecodeError("zstd: raw literals truncated", offset=base)
            return block[hsize:hsize + regen], hsize + regen
        if hsize >= len(block):
            raise DecodeError("zstd: RLE literals truncated", offset=base)
        return bytes([block[hsize]]) * regen, hsize + 1
    hsize = {0: 3, 1: 3, 2: 4, 3: 5}[fmt]
    if len(block) < hsize:
        raise DecodeError("zstd: literals header truncated", offset=base)
    h = int.from_bytes(block[:hsize], "little")
    if fmt in (0, 1):
        regen, comp = (h >> 4) & 0x3FF, (h >> 14) & 0x3FF
    elif fmt == 2:
        regen, comp = (h >> 4) & 0x3FFF, (h >> 18) & 0x3FFF
    else:
        regen, comp = (h >> 4) & 0x3FFFF, (h >> 22) & 0x3FFFF
    streams = 1 if fmt == 0 else 4
    if hsize + comp > len(block):
        raise DecodeError("zstd: compressed literals truncated", offset=base)
    data = block[hsize:hsize + comp]
    pos = 0
    if ltype == 2:
        frame.huffman, pos = _huffman_table(data, 0, base + hsize)
    elif frame.huffman is None:
        raise DecodeError("zstd: treeless literals without a previous table", offset=base)
    table, max_bits = frame.huffman
    if streams == 1:
        out = _huffman_stream(data[pos:], base + hsize + pos, table, max_bits, regen)
    else:
        if pos + 6 > len(data):
            raise DecodeError("zstd: literal jump table truncated", offset=base + hsize + pos)
        sizes = [int.from_bytes(data[pos + 2 * i:pos + 2 * i + 2], "little") for i in range(3)]
        pos += 6
        each = (regen + 3) // 4
        counts = [each, each, each, regen - 3 * each]
        sizes.append(len(data) - pos - sum(sizes))
        if sizes[3] < 0 or counts[3] < 0:
            raise DecodeError("zstd: literal streams overrun", offset=base + hsize)
        out = bytearray()
        for size, count in zip(sizes, counts):
            out += _huffman_stream(data[pos:pos + size], base + hsize + pos, table, max_bits,
                                   count)
            pos += size
    return bytes(out), hsize + comp


def _seq_table(kind, mode, block, pos, base, frame):
    default, dlog, max_sym, max_log = {
        "ll": (LL_DEFAULT, LL_DEFAULT_LOG, LL_MAX, LL_MAX_LOG),
        "of": (OF_DEFAULT, OF_DEFAULT_LOG, OF_MAX, OF_MAX_LOG),
        "ml": (ML_DEFAULT, ML_DEFAULT_LOG, ML_MAX, ML_MAX_LOG)}[kind]
    if mode == 0:
        frame.fse[kind] = (_fse_table(list(default), dlog), dlog)
    elif mode == 1:
        if pos >= len(block):
            raise DecodeError("zstd: RLE sequence symbol missing", offset=base + pos)
        frame.fse[kind] = ([(block[pos], 0, 0)], 0)
        pos += 1
    elif mode == 2:
        norm, log, used = _read_fse_description(block, pos, max_sym, max_log)
        frame.fse[kind] = (_fse_table(norm, log), log)
        pos += used
    elif frame.fse[kind] is None:
        raise DecodeError(f"zstd: repeat {kind} table without a previous one", offset=base + pos)
    return pos


def _sequences(block, pos, base, frame, literals, out, window_start):
    if pos >= len(block):
        raise DecodeError("zstd: sequences header missing", offset=base + pos)
    b0 = block[pos]
    if b0 == 0:
        out += literals
        return
    if b0 < 128:
        nseq, pos = b0, pos + 1
    elif b0 < 255:
        nseq, pos = ((b0 - 128) << 8) + block[pos + 1], pos + 2
    else:
        nseq, pos = block[pos + 1] + (block[pos + 2] << 8) + 0x7F00, pos + 3
    if pos >= len(block):
        raise DecodeError("zstd: sequence modes missing", offset=base + pos)
    modes = block[pos]
    pos += 1
    if modes & 3:
        raise DecodeError("zstd: reserved bits set in sequence modes", offset=base + pos - 1)
    pos = _seq_table("ll", modes >> 6, block, pos, base, frame)
    pos = _seq_table("of", (modes >> 4) & 3, block, pos, base, frame)
    pos = _seq_table("ml", (modes >> 2) & 3, block, pos, base, frame)
    (ll_t, ll_log), (of_t, of_log), (ml_t, ml_log) = (frame.fse["ll"], frame.fse["of"],
                                                      frame.fse["ml"])
    br = _Back(block[pos:], base + pos)
    ll_s, of_s, ml_s = br.read(ll_log), br.read(of_log), br.read(ml_log)
    rep = frame.rep
    lit_pos = 0
    for i in range(nseq):
        ll_code, ll_nb, ll_next = ll_t[ll_s]
        of_code, of_nb, of_next = of_t[of_s]
        ml_code, ml_nb, ml_next = ml_t[ml_s]
        if ll_code > LL_MAX or ml_code > ML_MAX or of_code > OF_MAX:
            raise DecodeError("zstd: sequence code out of range", offset=base + pos)
        offset_value = (1 << of_code) + br.read(of_code)
        mlb, mle = ML_CODES[ml_code]
        match_len = mlb + br.read(mle)
        llb, lle = LL_CODES[ll_code]
        lit_len = llb + br.read(lle)
        if offset_value > 3:
            offset = offset_value - 3
            rep[:] = [offset, rep[0], rep[1]]
        else:
            idx = offset_value + (1 if lit_len == 0 else 0)
            if idx == 1:
                offset = rep[0]
            elif idx == 2:
                offset = rep[1]
                rep[:] = [rep[1], rep[0], rep[2]]
            elif idx == 3:
                offset = rep[2]
                rep[:] = [rep[2], rep[0], rep[1]]
            else:
                offset = rep[0] - 1
                rep[:] = [offset, rep[0], rep[1]]
        if lit_pos + lit_len > len(literals):
            raise DecodeError("zstd: sequence uses more literals than decoded", offset=base + pos)
        out += literals[lit_pos:lit_pos + lit_len]
        lit_pos += lit_len
        if offset <= 0 or offset > len(out) - window_start:
            raise DecodeError(f"zstd: match offset {offset} outside the output", offset=base + pos)
        start = len(out) - offset
        if match_len <= offset:
            out += out[start:start + match_len]
        else:
            for k in range(match_len):
                out.append(out[start + k])
        if i != nseq - 1:
            ll_s = ll_next + br.read(ll_nb)
            ml_s = ml_next + br.read(ml_nb)
            of_s = of_next + br.read(of_nb)
        if br.pos < 0:
            raise DecodeError("zstd: sequence bitstream overrun", offset=base + pos)
    if br.pos != 0:
        raise DecodeError("zstd: sequence bitstream not fully consumed", offset=base + pos)
    out += literals[lit_pos:]


def decompress(src, limit=1 << 30):
    """Decode all frames of `src` (bytes); DecodeError with the input offset if corrupt."""
    try:
        return _decompress(bytes(src), limit)
    except (IndexError, TypeError, ValueError) as e:
        # a corrupt table or state indexes outside what was declared
        raise DecodeError(f"zstd: corrupt stream ({type(e).__name__}: {e})") from None


def _decompress(src, limit):
    out = bytearray()
    pos, n = 0, len(src)
    while pos < n:
        if n - pos < 4:
            raise DecodeError("zstd: frame magic truncated", offset=pos)
        magic = int.from_bytes(src[pos:pos + 4], "little")
        if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC:
            if n - pos < 8:
                raise DecodeError("zstd: skippable frame truncated", offset=pos)
            pos += 8 + int.from_bytes(src[pos + 4:pos + 8], "little")
            continue
        if magic != ZSTD_MAGIC:
            raise DecodeError(f"zstd: bad frame magic {magic:#010x}", offset=pos)
        pos = _frame(src, pos + 4, out, limit)
    return bytes(out)


def _frame(src, pos, out, limit):
    n = len(src)
    if pos >= n:
        raise DecodeError("zstd: frame header truncated", offset=pos)
    fhd = src[pos]
    pos += 1
    fcs_flag, single, checksum, dict_flag = fhd >> 6, (fhd >> 5) & 1, (fhd >> 2) & 1, fhd & 3
    if fhd & 0x08:
        raise DecodeError("zstd: reserved frame header bit set", offset=pos - 1)
    if not single:
        pos += 1                                  # window descriptor: output kept whole
    dict_size = (0, 1, 2, 4)[dict_flag]
    if dict_size and any(src[pos:pos + dict_size]):
        raise DecodeError("zstd: frames with a dictionary are not supported", offset=pos)
    pos += dict_size
    fcs_size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if pos + fcs_size > n:
        raise DecodeError("zstd: frame header truncated", offset=pos)
    pos += fcs_size
    frame = _Frame()
    window_start = len(out)
    while True:
        if pos + 3 > n:
            raise DecodeError("zstd: block header truncated", offset=pos)
        bh = int.from_bytes(src[pos:pos + 3], "little")
        last, btype, bsize = bh & 1, (bh >> 1) & 3, bh >> 3
        pos += 3
        if btype == 1:
            if pos >= n:
                raise DecodeError("zstd: RLE block truncated", offset=pos)
            out += bytes([src[pos]]) * bsize
            pos += 1
        else:
            if pos + bsize > n:
                raise DecodeError(f"zstd: block truncated (need {bsize} B, have {n - pos})",
                                  offset=pos)
            block = src[pos:pos + bsize]
            if btype == 0:
                out += block
            elif btype == 2:
                if not block:
                    raise DecodeError("zstd: empty compressed block", offset=pos)
                literals, used = _literals(block, pos, frame)
                _sequences(block, used, pos, frame, literals, out, window_start)
            else:
                raise DecodeError("zstd: reserved block type", offset=pos - 3)
            pos += bsize
        if len(out) > limit:
            raise DecodeError(f"zstd: output exceeds {limit} B", offset=pos)
        if last:
            break
    if checksum:
        if pos + 4 > n:
            raise DecodeError("zstd: content checksum truncated", offset=pos)
        pos += 4
    return pos
