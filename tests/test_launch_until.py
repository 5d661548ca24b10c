"""`trace-decode explain` decodes only as far as the story needs (decoders/pick.py
LaunchUntil, decode_capture's `until`): on a long job the first kernel launch's story took
a decode of the whole capture (55.6 s for the 500-step transformer on 2 CPUs, session 34)
when it needs the records up to that launch and a few after. The stopped decode must tell
the story the whole capture's decode tells, word for word, on every committed capture."""
import functools
import io
from glob import glob

import pytest

from conftest import CAPTURES, capture_file
from decoders.session import (MarkedRecords, capture_marks, decode_capture,
                              marked_submissions)
from decoders.spill import SpillList
from tracer import explain as E
from tracer.cli_decode import _print_diff, trace_decode
from decoders.pick import Choice, LaunchUntil

NAMES = sorted(p.split("/")[-2] for p in glob(str(CAPTURES / "*" / "capture.tlc*")))


def _path(name):
    return str(capture_file(name))


@functools.lru_cache(maxsize=3)
def _full(name):
    """The whole capture decoded (the diff test's pairs share their captures)."""
    return decode_capture(_path(name))


def _told(model, index):
    out = io.StringIO()
    E.render_text(E.build_story(model, index), out)
    return out.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_stopped_story_is_the_whole_captures(name):
    """The default launch's story and the story of the launch a third of the way in: the
    same text from explain (stopped where its story is whole) as from a full decode."""
    full = _full(name)
    if not len(full.launches):
        pytest.skip("no launch in this capture")
    for want in (None, len(full.launches) // 3):
        out = io.StringIO()
        E.explain(_path(name), out, launch=want)
        assert out.getvalue() == _told(full, E.pick_launch(full, want)), want


@pytest.mark.parametrize("a,b", list(zip(NAMES, NAMES[1:] + NAMES[:1])))
def test_stopped_diff_is_the_whole_captures(a, b):
    """`trace-decode diff A B` (each stopped where its default launch is whole) prints what
    the whole captures' decodes give."""
    from click.testing import CliRunner
    from decoders.diff import DiffError, default_launch, diff_launches
    full_a, full_b = _full(a), _full(b)
    try:
        ia, ib = default_launch(full_a), default_launch(full_b)
    except DiffError:
        pytest.skip("a capture without a launch")
    want = []
    _print_diff(full_a, ia, full_b, ib, diff_launches(full_a, ia, full_b, ib), want.append)
    try:
        runner = CliRunner(mix_stderr=False)      # click < 8.2
    except TypeError:
        runner = CliRunner()
    res = runner.invoke(trace_decode, ["diff", _path(a), _path(b)])
    assert res.exit_code in (0, 2), res.output
    assert res.stdout == "".join(want)


def test_the_decode_stops_early_on_a_long_capture():
    """launch-loop-10k (20,200 launches): the default story's decode reads a few thousand
    of its records, and the launch it picks is the whole capture's pick."""
    path = _path("launch-loop-10k")
    until = LaunchUntil(Choice(None, MarkedRecords(capture_marks(path))))
    model = decode_capture(path, until=until)
    full = decode_capture(path)
    assert model.until_record is not None and model.until_record < full.records // 4
    assert not model.problems
    assert until.choice.index == E.pick_launch(full)


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith(("builtin", "torch-window"))])
def test_marked_records_are_marked_submissions(name):
    """MarkedRecords (asked one record at a time, from a skim of the MARK records) marks
    the submissions marked_submissions finds."""
    model = decode_capture(_path(name))
    marks = capture_marks(_path(name))
    assert [(m["index"], m["kind"], m["id"]) for m in marks] == \
        [(m["index"], m["kind"], m["id"]) for m in model.marks]
    marked = MarkedRecords(marks)
    want = {s["index"] for _, subs in marked_submissions(model) for s in subs}
    got = {s["index"] for s in model.submissions if (s["pid"], s["tid"], s["index"]) in marked}
    assert got == want


def test_following_leaves_the_open_batch_open():
    """SpillList.following reads the items appended so far, the open batch's too, without
    sealing it: a reader that follows the list leaves its batches as appending makes them."""
    lst = SpillList(keep=3, dump=list, load=tuple)
    for k in range(100):
        lst.append((k, str(k)))
    sealed = (len(lst._ends), len(lst._batch))
    assert sealed == (1, 100 - 3 - SpillList.BATCH)
    assert list(lst.following(0)) == [(k, str(k)) for k in range(100)]
    assert list(lst.following(70)) == [(k, str(k)) for k in range(70, 100)]
    assert (len(lst._ends), len(lst._batch)) == sealed
    lst.append((100, "100"))
    assert list(lst.following(99)) == [(99, "99"), (100, "100")]
