"""SparseMemory's pages (memoryviews over bytearrays, written by slice assignment) hold what a
plain byte-by-byte model of the same writes holds, for writes given as bytes, bytearray or
memoryview, inside a page and across pages (synthetic-memory-model)."""
import random

from decoders.launch import PAGE, SparseMemory


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
    for page, (data, known) in mem._pages.items():
        for off in range(PAGE):
            a = page * PAGE + off
            assert known[off] == (a in model)
            if a in model:
                assert data[off] == model[a]
    assert len(mem) == len(model)
