"""Submissions and API calls spilled as their records' bytes (SpillList.append_dumped,
session._submission_raw, ApiCall.compact) read back equal to the dicts built at once:
keep=0 and keep=3 (spilled, partly spilled) against keep=None (every dict made while
decoding), item for item; each read of a spilled item is a fresh copy."""

import pytest

from decoders.capture.reader import read_capture
from decoders.cuda.calls import ApiCall, ApiCalls
from decoders.session import SpillList, decode_capture

from tests.conftest import capture_path as _path


@pytest.mark.parametrize("name", ["torch-small", "two-streams", "sigkill", "graph-replay"])
def test_spilled_submissions_and_calls_equal_dicts(name):
    path = _path(name)
    ref = decode_capture(path, keep=None)
    assert isinstance(ref.submissions, list) and isinstance(ref.api_calls, list)
    for keep in (0, 3):
        model = decode_capture(path, keep=keep)
        assert isinstance(model.submissions, SpillList)
        assert list(model.submissions) == ref.submissions
        assert list(model.api_calls) == ref.api_calls
        assert [model.submissions[i] for i in range(len(ref.submissions))] == ref.submissions
        if len(model.api_calls) > keep:
            again = model.api_calls[keep]
            assert again == model.api_calls[keep] and again is not model.api_calls[keep]


def test_api_call_restore_equals_call():
    """synthetic-free: every call of a real capture, restored from compact(), gives the
    same to_json(); a record without its bytes (a test's fake record) has no compact form."""
    _, records = read_capture(_path("torch-small"))
    api = ApiCalls()
    calls = []
    for rec in records:
        if rec.type == "API_ENTER":
            calls.append(api.enter(rec))
        elif rec.type == "API_EXIT":
            api.exit(rec)
    assert calls
    loads = [c for c in calls if c.kind == "LOAD_IMAGE"]
    assert loads and len(loads) < len(calls)
    for c in calls:
        if c.kind == "LOAD_IMAGE":      # its body is the image: not kept twice (spilled as
            assert c.compact() is None  # its dict)
            continue
        assert ApiCall.restore(c.compact()).to_json() == c.to_json()
    c = calls[0]
    c._records = c._records[:5] + (None,) + c._records[6:]
    assert c.compact() is None
