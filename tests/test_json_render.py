"""render_json's one-walk writer (tracer/report.py _json_text) against what it replaces:
json.dumps(_clean(obj), indent=1, default=str) nested `level` deep (_json_at), byte for byte."""
import enum
import math

from decoders.session import SpillList
from tracer.report import _clean, _json_at, _json_text


class _Flag(enum.IntEnum):
    A = 3


class _Name(str):
    pass


def _values():
    spill = SpillList(keep=1)
    for i in range(5):
        spill.append({"i": i, "b": bytes([i])})
    return [
        {}, [], (), "", "é\u2028\"\\\n", 0, -1, 2 ** 70, True, False, None, 1.5, -0.0,
        math.nan, math.inf, -math.inf, b"\x00\xff", bytearray(b"ab"), _Flag.A, _Name("x"),
        {1, 2}, complex(1, 2), spill,
        {"_hidden": 1, "shown": {"_x": [], "y": ({"z": None},)}, "": "empty key"},
        {"nested": [[[]], [{}], [1, [2, [3, {"a": b"\x01"}]]]], "f": [0.1, 1e300, 5e-324]},
        [{"k": True, "n": None, "s": "t", "i": 7, "l": [1, "2", None, False]}],
    ]


def test_json_text_equals_dumps_of_clean():
    for level in (0, 1, 2, 5):
        for v in _values():
            assert _json_text(v, level) == _json_at(_clean(v), level), (level, v)
        whole = {"items": _values(), "_no": 1}
        assert _json_text(whole, level) == _json_at(_clean(whole), level)
