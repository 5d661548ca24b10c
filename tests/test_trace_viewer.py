"""The timeline of every capture, loaded in the Perfetto UI and in Chrome's trace viewer
(catapult, the code behind chrome://tracing), each run in headless Chromium by
scripts/trace_viewer.py: the viewer's own importer must take every event, with no warning.

Needs Chromium, Playwright and the viewers' files (.ci/run installs them; see
scripts/trace_viewer.py). Where one is missing the tests are skipped and say why."""
import json
import sys

import pytest

from conftest import ALL, CAPTURES, ROOT, capture_file
from decoders.session import decode_capture
from decoders.timeline import timeline

sys.path.insert(0, str(ROOT / "scripts"))
import trace_viewer  # noqa: E402

pytestmark = pytest.mark.viewer
VIEWERS = sorted(trace_viewer.VIEWERS)


@pytest.fixture(scope="module", params=VIEWERS)
def viewer(request):
    why = trace_viewer.missing(request.param)
    if why:
        pytest.skip(why)
    with trace_viewer.viewer_session(request.param) as open_trace:
        yield request.param, open_trace


def _load(open_trace, path):
    page = open_trace(str(path))
    try:
        return page.stats()
    finally:
        page.close()


@pytest.mark.parametrize("name", ALL)
def test_viewer_imports_every_event(name, viewer, tmp_path):
    kind, open_trace = viewer
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(timeline(decode_capture(str(capture_file(name))))))
    want = trace_viewer.expected(str(path))
    got = _load(open_trace, path)
    assert got["warnings"] == []
    assert sorted(got["processes"]) == want["processes"]
    assert got["threads"] == want["threads"]
    assert got["slices"] == want["slices"]
    assert got["instants"] == want["instants"]
    assert got["span_ms"] == pytest.approx(want["span_ms"], abs=1e-6)
    if kind == "perfetto":      # catapult moves the earliest event to 0 ms; Perfetto does not
        assert got["start_ms"] == pytest.approx(want["start_ms"], abs=1e-6)


# What each viewer said when tried on a file with one bad event (beside a good X event).
BAD = {
    "catapult": [({"name": "b", "ph": "E", "ts": 10, "pid": 1, "tid": 1}, "duration_parse_error"),
                 ({"name": "b", "ph": "Q", "ts": 10, "pid": 1, "tid": 1}, "parse_error")],
    # Perfetto ignores those two without a word, but drops an X event that overlaps another
    # of its thread without nesting (why decoders/timeline.py moves such events aside).
    "perfetto": [({"name": "b", "ph": "X", "ts": 0.5, "dur": 10, "pid": 1, "tid": 1},
                  "slice_drop_overlapping_complete_event")],
}


def test_viewer_reports_a_bad_file(viewer, tmp_path):
    """The check can fail: the viewer names what it did not take."""
    kind, open_trace = viewer
    for n, (event, warning) in enumerate(BAD[kind]):
        doc = {"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "p"}},
            {"name": "a", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}, event]}
        path = tmp_path / f"bad{n}.json"
        path.write_text(json.dumps(doc))
        got = _load(open_trace, path)
        assert [w.split(":")[0] for w in got["warnings"]] == [warning], event
