"""SparseMemory's pages (memoryviews over bytearrays, written by slice assignment) hold what a
plain byte-by-byte model of the same writes holds, for writes given as bytes, bytearray or
memoryview, inside a page and across pages (synthetic-memory-model)."""
import random

from decoders.launch import PAGE, SparseMemory


def _assert_pages_hold(mem, model):
    """Every page's bytes and known map are the byte model's."""
    for page, (data, known) in mem._pages.items():
        for off in range(PAGE):
            a = page * PAGE + off
            assert known[off] == (a in model)
            if a in model:
                assert data[off] == model[a]


def test_pages_equal_byte_model():
    rnd = random.Random(5)
    mem, model = SparseMemory(), {}
    for _ in range(3000):
        va = 0x2000_0000 + rnd.randrange(4 * PAGE)
        n = rnd.choice((0, 1, 4, 384, 528, PAGE, PAGE + 100))
        raw = bytes(rnd.randrange(256) for _ in range(n))
        data = rnd.choice((raw, bytearray(raw), memoryview(raw)))
        mem.write(va, data)
        for i, b in enumerate(raw):
            model[va + i] = b
        probe = 0x2000_0000 + rnd.randrange(4 * PAGE)
        want = bytearray()
        for a in range(probe, probe + 600):
            if a not in model:
                break
            want.append(model[a])
        assert mem.read_known(probe, 600) == bytes(want)
    _assert_pages_hold(mem, model)
    assert len(mem) == len(model)


def test_pages_written_whole_share_one_known_map():
    """A page that one write covers whole (module code uploads, a graph's QMDs) keeps no
    known map of its own (memory._FULL, shared), and reads still equal the byte model when
    later writes land on it or next to it (synthetic-memory-model)."""
    from decoders.launch.memory import _FULL
    rnd = random.Random(11)
    mem, model = SparseMemory(), {}
    base = 0x3000_0000
    for _ in range(1500):
        va = base + rnd.choice((rnd.randrange(6) * PAGE, rnd.randrange(6 * PAGE)))
        n = rnd.choice((1, 384, PAGE, 2 * PAGE, 3 * PAGE + 5, PAGE - 1))
        raw = bytes(rnd.randrange(256) for _ in range(n))
        mem.write(va, raw)
        for i, b in enumerate(raw):
            model[va + i] = b
        probe = base + rnd.randrange(7 * PAGE)
        want = bytearray()
        for a in range(probe, probe + 2 * PAGE):
            if a not in model:
                break
            want.append(model[a])
        assert mem.read_known(probe, 2 * PAGE) == bytes(want)
    shared = [page for page, (_, known) in mem._pages.items() if known is _FULL]
    assert shared
    for page, (_, known) in mem._pages.items():
        for off in range(PAGE):
            assert known[off] == (page * PAGE + off in model)


def test_blobs_equal_byte_model():
    """Writes of BLOB_MIN bytes or more stay lz4-packed until a read or a write reaches a
    page they lie on (module code the driver uploads, never read): reads, holds() and later
    writes that land on them, beside them or across several of them still equal a plain
    byte model; packed writes never overlap, and every page under one says so
    (synthetic-memory-model)."""
    rnd = random.Random(7)
    mem, model = SparseMemory(), {}
    mem.BLOB_MIN = 2 * PAGE + 1     # (16 KiB in a decode) small enough to mix many here
    base = 0x4000_0000
    packed = 0
    for _ in range(2500):
        va = base + rnd.choice((rnd.randrange(16) * PAGE, rnd.randrange(16 * PAGE)))
        op = rnd.random()
        if op < 0.45:
            n = rnd.choice((1, 384, 528, PAGE, 3 * PAGE - 1, 3 * PAGE, 4 * PAGE + 7, 6 * PAGE))
            raw = bytes(rnd.randrange(256) for _ in range(n))
            mem.write(va, raw)
            for i, b in enumerate(raw):
                model[va + i] = b
            packed = max(packed, sum(type(e) is list for e in mem._pages.values()))
        elif op < 0.9:
            n = rnd.choice((0, 1, 384, PAGE, 2 * PAGE + 3, 5 * PAGE))
            want = bytearray()
            for a in range(va, va + n):
                if a not in model:
                    break
                want.append(model[a])
            assert mem.read_known(va, n) == bytes(want)
            assert mem.read(va, n) == (bytes(want) if len(want) == n else None)
        else:
            n = rnd.choice((1, 64, 384))
            whole = all(a in model for a in range(va, va + n))
            prefix = bytes(model[a] for a in range(va, va + min(n, 8))) if whole else b"\x00"
            fits = va % PAGE + n <= PAGE
            assert mem.holds(va, n, prefix) == (whole and fits)
        blobs = {b for e in mem._pages.values() if type(e) is list for b in e[1:]}
        for start, end, _ in blobs:
            for other_start, other_end, _ in blobs:
                assert (start, end) == (other_start, other_end) or \
                    end <= other_start or other_end <= start        # never overlapping
            for page in range(start // PAGE, (end - 1) // PAGE + 1):
                assert type(mem._pages[page]) is list      # each of its pages says so
    assert packed, "no write was kept packed"
    assert len(mem) == len(model)       # (moves every blob into pages)
    assert not any(type(e) is list for e in mem._pages.values())
    _assert_pages_hold(mem, model)
