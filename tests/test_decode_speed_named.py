"""fields.named(): the dict a run of whole integers is named to in one display (the
reader's fast body parsers), equal to the zip of pairs it replaces, in the same order, on
every integer run of every fast body declaration and on the values of real records; a name
that is not an identifier is refused (nothing but declared field names is compiled)."""

import pytest

from decoders.capture import reader as R
from decoders.capture.reader import read_capture
from decoders.fields import named

from tests.conftest import capture_path as _path


def _runs():
    """(integer-run field names, struct) of every fast body declaration (with its items)."""
    out = []

    def walk(parse):
        first, steps = parse.layout
        if first is not None:
            out.append((first[2], first[1]))
        for step in steps:
            if step[0] == "fixed":
                out.append((step[2], step[1]))
            elif step[0] == "structs":
                walk(step[3])
    for parse in R._FAST.values():
        walk(parse)
    return out


def test_named_equals_zip_on_every_run():
    runs = _runs()
    assert len(runs) >= len(R._FAST)
    for names, st in runs:
        values = tuple(range(1000, 1000 + len(names)))
        got = named(names)(values)
        assert list(got.items()) == list(zip(names, values))


@pytest.mark.parametrize("name", ["launch-loop-10k", "torch-small"])
def test_named_on_real_record_values(name):
    _, records = read_capture(_path(name))
    seen = 0
    for rec in records[:3000]:
        parse = R._FAST.get(rec.type)
        if parse is None or rec.raw is None or parse.layout[0] is None:
            continue
        first = parse.layout[0]
        values = first[1].unpack_from(rec.raw)
        assert named(first[2])(values) == dict(zip(first[2], values))
        assert list(rec.body)[:len(first[2])] == list(first[2])
        seen += 1
    assert seen


@pytest.mark.parametrize("bad", [("a b",), ("x", "y']; import os #"), ("1x",), ("",)])
def test_named_refuses_what_is_not_a_field_name(bad):
    with pytest.raises(ValueError):
        named(bad)
