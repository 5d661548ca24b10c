"""The reader's one-step path for whole records (CaptureReader.records, _BY_TYPE) gives the
same records and problems as the general path, on real captures and on damaged copies of
one (synthetic-damaged-*: bit flips, a cut, a torn length, a zeroed hole)."""
import gzip
import io
import os
import random
import struct

import pytest

from decoders.capture import reader as R
from conftest import capture_file, plain

CAPTURES = os.path.join(os.path.dirname(__file__), "..", "captures")


def _read(raw, one_step):
    saved = dict(R._BY_TYPE)
    if not one_step:
        R._BY_TYPE.clear()
    try:
        rd = R.CaptureReader(io.BytesIO(raw), name="t")
        recs = list(rd.records())
    finally:
        R._BY_TYPE.update(saved)
    return ([(r.index, r.offset, r.type, r.flags, r.pid, r.tid, r.seq, r.t_start, r.t_end,
              r.body, r.complete, r.length) for r in recs],
            [(str(p), p.offset, p.record) for p in rd.problems], rd.end_record)


def _raw(name):
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    with gzip.open(path) as f:
        return f.read()


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small", "graph-replay"])
def test_one_step_records_equal_general_path(name):
    raw = _raw(name)
    assert _read(raw, True) == _read(raw, False)


def test_one_step_records_equal_general_path_damaged():
    raw = _raw("builtin-vadd")
    rnd = random.Random(7)
    cases = []
    offsets = [r[1] for r in _read(raw, True)[0]]
    for _ in range(24):        # bit flips in record headers and the counts after them
        b = bytearray(raw)
        for _ in range(rnd.randrange(1, 4)):
            k = rnd.choice(offsets) + rnd.randrange(4, 56)
            b[k] ^= 1 << rnd.randrange(8)
        cases.append(bytes(b))
    cases.append(raw[:len(raw) * 2 // 3])                 # cut short
    b = bytearray(raw)
    b[5000:5400] = bytes(400)                             # zeroed hole
    cases.append(bytes(b))
    damaged = 0
    for case in cases:
        one = _read(case, True)
        assert one == _read(case, False)
        damaged += bool(one[1])
    assert damaged >= 5                   # (7 with this seed)



@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small", "two-streams"])
def test_generated_parsers_equal_construct(name):
    """The fast parsers (_fast_body: the leading integer run before the step loop, integer
    arrays through remembered Structs) == construct's own parse of the same declaration, on
    every whole body of a recording; on each body cut short they raise one of the errors
    records() catches (as the construct parse raises one), never anything else."""
    from construct import ConstructError
    from decoders.capture import format as F
    raw = _raw(name)
    rd = R.CaptureReader(io.BytesIO(raw), name="t")
    seen = {}
    for rec in rd.records():
        if rec.raw is not None and rec.type in R._FAST:
            seen.setdefault(rec.type, []).append(rec.raw)
    assert {"SUBMISSION", "API_ENTER", "API_EXIT", "IOCTL"} <= set(seen)
    for tname, bodies in seen.items():
        fast, declared = R._FAST[tname], F.BODY[tname]
        for body in bodies[:200]:
            parsed, used = fast(body)
            assert used == len(body)
            assert plain(parsed) == plain(declared.parse(body))
            for cut in (len(body) - 1, len(body) // 2, 3):
                with pytest.raises(R._BODY_ERRORS):
                    fast(body[:cut])
                with pytest.raises((ConstructError, struct.error)):
                    declared.parse(body[:cut])


def test_render_plan_sizes_equal_construct():
    """escapes/render.py works out each Struct's plan once (field kinds, unpackers, size):
    its size and ioctl._sizeof == construct's sizeof() for every declared escape struct."""
    from decoders import ioctl as I
    from decoders.escapes import numbers as ESC
    from decoders.escapes import render
    structs = [st for row in ESC.ESCAPES.values() for k, st in row[1].items()
               if isinstance(k, int)]
    assert structs
    for st in structs:
        assert render.sizeof(st) == st.sizeof() == I._sizeof(st)
        assert [p[2] for p in render._plan(st)] == [sc.sizeof() for sc in st.subcons]


def test_general_body_parser_compiled_on_first_use(monkeypatch):
    """A body type without a fast parser goes through the declaration, compiled when first
    needed (_body_parser): same records as its fast parser gives."""
    raw = _raw("builtin-vadd")
    want = _read(raw, False)
    monkeypatch.setattr(R, "_FAST", {k: v for k, v in R._FAST.items() if k != "MMAP"})
    monkeypatch.setattr(R, "_BODIES", dict(R.F.BODY))
    got = _read(raw, False)
    assert R._BODIES["MMAP"] is not R.F.BODY["MMAP"]        # compiled now
    assert got[1:] == want[1:]
    assert [r[:9] + (plain(r[9]),) + r[10:] for r in got[0]] == \
        [r[:9] + (plain(r[9]),) + r[10:] for r in want[0]]
