"""The streaming decode (SpillList, launches handed to a sink as they are final, JSON
written item by item) gives exactly what the all-in-memory decode gives, on every
recording in captures/."""
import io
import json
import os

import pytest

from decoders.capture.reader import read_capture
from decoders.submissions import decode_submissions
from decoders.session import SpillList, decode_capture
from tracer.report import render_json, render_text, to_json
from tests.conftest import capture_file

ROOT = os.path.join(os.path.dirname(__file__), "..")
CAPTURES = sorted(n for n in os.listdir(os.path.join(ROOT, "captures"))
                  if capture_file(n).exists())
SMALL = [n for n in CAPTURES if n != "launch-loop-10k"]


def _path(name):
    return str(capture_file(name))


def _text(model):
    out = io.StringIO()
    render_text(model, out, show_ioctls=True, show_objects=True, show_stats=True)
    return out.getvalue()


@pytest.mark.parametrize("name", SMALL)
def test_spilled_equals_in_memory(name):
    """keep=0 puts every submission and launch in the temporary file; keep=None keeps
    them all as objects. Text, JSON (streamed and whole) are byte-identical."""
    mem = decode_capture(_path(name), keep=None)
    spill = decode_capture(_path(name), keep=0)
    assert isinstance(mem.launches, list) and isinstance(spill.launches, SpillList)
    assert _text(mem) == _text(spill)
    a, b = io.StringIO(), io.StringIO()
    render_json(mem, a)
    render_json(spill, b)
    assert a.getvalue() == b.getvalue()
    assert a.getvalue() == json.dumps(to_json(mem), indent=1, default=str) + "\n"
    assert [str(p) for p in mem.problems] == [str(p) for p in spill.problems]


def test_session_launches_equal_decode_submissions():
    """decode_capture's streamed launches (sink) equal decode_submissions over the whole
    list of SUBMISSION bodies (the path that keeps everything), launch for launch."""
    path = _path("launch-loop-10k" if "launch-loop-10k" in CAPTURES else SMALL[0])
    _, records = read_capture(path)
    result = decode_submissions([(r.index, r.body, r.pid) for r in records
                                 if r.type == "SUBMISSION"])
    model = decode_capture(path, keep=1000)
    assert len(model.launches) == len(result.launches)
    for a, b in zip(model.launches, result.launches):
        sa = dict(a.summary)
        assert sa.pop("resolved")["qmd_address"] is not None   # added by the session
        for key in ("api_call", "verified", "attribution"):     # the session's API attribution
            sa.pop(key, None)
        assert sa == b.summary
        assert a.qmd_bytes == b.qmd_bytes and a.record_index == b.record_index


def test_spill_list_sequence():
    s = SpillList(keep=2)
    for k in range(1000):
        s.append({"k": k, "b": bytes([k % 256]) * (k % 7)})
    assert len(s) == 1000 and s[0]["k"] == 0 and s[999]["k"] == 999 and s[-1]["k"] == 999
    assert [x["k"] for x in s] == list(range(1000))
    assert [x["k"] for x in s[10:13]] == [10, 11, 12]
    assert s[500]["b"] == bytes([500 % 256]) * (500 % 7)
    it1, it2 = iter(s), iter(s)
    assert next(it1)["k"] == 0 and next(it2)["k"] == 0 and next(it1)["k"] == 1
    with pytest.raises(IndexError):
        s[1000]


def test_spill_list_batches_sealed_by_reads():
    """Reads in the middle of appending seal a partial batch: batches of any size, items
    in order, each read a fresh copy (synthetic items)."""
    s = SpillList(keep=1, dump=lambda x: {"v": x}, load=lambda d: d["v"])
    want = []
    for k in range(3 * SpillList.BATCH + 5):
        s.append([k])
        want.append([k])
        if k % 37 == 0:
            assert s[k] == [k] and s[k // 2] == [k // 2]
            assert list(s) == want
    assert len(s) == len(want) and s[-1] == want[-1] and s[1:4] == want[1:4]
    a = s[SpillList.BATCH]
    a.append("changed")
    assert s[SpillList.BATCH] == [SpillList.BATCH]
    s.close()
