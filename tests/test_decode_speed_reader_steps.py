"""The reader's step closures (reader._step) == construct's parse of the same declaration on
synthetic bodies with 0 to 4 array items of odd sizes (synthetic-bodies): SUBMISSION segments,
API sections and IOCTL buffers take the one-loop form for items that are an integer run and
byte strings sized by it; every cut of a body raises only errors records() catches.
The generated RM control table (rm/controls_data.py, one line a row) == the TSV it is made
from, read here on its own."""
import random

import pytest

from decoders.capture import format as F
from decoders.capture import reader as R
from decoders.rm import controls_data
from decoders.rm.gen_controls import PREFIX, find_tsv
from conftest import plain



def _bodies(rnd):
    for n in range(5):
        sizes = [rnd.choice((0, 1, 4, 7, 8, 13, 1520)) for _ in range(n)]
        yield "SUBMISSION", dict(
            token=rnd.randrange(1 << 32), hClient=1, hChannel=2, hClass=0xC86F, gp_put_prev=3,
            gp_put=4, gp_entries=5, flags=rnd.randrange(64), gpfifo_va=1 << 40,
            doorbell_addr=2 << 40, rip=3, nentries=n, nsegments=n, lost=0, insn_len=2,
            entries=[rnd.randrange(1 << 64) for _ in range(n)],
            segments=[dict(va=rnd.randrange(1 << 48), size=s, flags=1, data=rnd.randbytes(s))
                      for s in sizes])
        yield "API_ENTER", dict(
            slot=rnd.randrange(64), call=n, result=-n, nargs=n, nsections=n,
            args=[rnd.randrange(1 << 64) for _ in range(n)],
            sections=[dict(tag=k, size=s, flags=0, full_size=s, data=rnd.randbytes(s))
                      for k, s in enumerate(sizes)])
        yield "IOCTL", dict(
            fd=3, request=0xC0104600 + n, arg=1 << 40, ret=0, err=0, arg_size=len(sizes) * 3,
            nbufs=n, flags=3, path_len=14, path=b"/dev/nvidiactl",
            before=rnd.randbytes(len(sizes) * 3), after=rnd.randbytes(len(sizes) * 3),
            buffers=[dict(role=1, size=s, addr=7, flags=3, field=0, before=rnd.randbytes(s),
                          after=rnd.randbytes(s)) for s in sizes])


def test_step_closures_equal_construct():
    from construct import ConstructError
    import struct
    rnd = random.Random(3)
    for tname, values in _bodies(rnd):
        declared = F.BODY[tname]
        body = declared.build(values)
        parsed, used = R._FAST[tname](body)
        assert used == len(body)
        assert plain(parsed) == plain(declared.parse(body))
        assert R._FAST[tname](bytearray(body))[0] == parsed
        for cut in sorted({len(body) - 1, len(body) - 8, len(body) // 2, 41, 3, 0}):
            if 0 <= cut < len(body):
                with pytest.raises(R._BODY_ERRORS):
                    R._FAST[tname](body[:cut])
                with pytest.raises((ConstructError, struct.error)):
                    declared.parse(body[:cut])


def test_item_loops_used():
    """The three array-of-Struct declarations on the hot path take the one-loop form."""
    for tname, field in (("SUBMISSION", "segments"), ("API_ENTER", "sections"),
                         ("IOCTL", "buffers")):
        first, steps = R._FAST[tname].layout
        step = [s for s in steps if s[0] == "structs" and s[1] == field]
        assert step and R._step(step[0]).__name__ == "item_loop"


def test_controls_table_equals_tsv():
    tsv = find_tsv()
    if tsv is None:
        pytest.skip("shared/reference/rm-ctrl-cmds.tsv not beside this checkout")
    want = []
    for line in tsv.read_text().splitlines():
        if not line or line.startswith("#") or line.startswith("value\t"):
            continue
        value, name, _cat, _idx, in580, source = line.split("\t")
        in580 = int(in580.split(":", 1)[1], 16) if in580.startswith("differs:") else in580
        want.append((int(value, 16), name, in580, source[len(PREFIX):]))
    assert controls_data.ROWS == tuple(want)
    assert {type(r[2]) for r in controls_data.ROWS} == {str, int}
