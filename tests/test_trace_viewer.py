"""The timeline of every capture, loaded in Chrome's trace viewer (catapult, the code behind
chrome://tracing, run in headless Chromium by scripts/trace_viewer.py): the viewer's own
importer must take every event, with no import warning.

Needs Chromium, Playwright and the viewer files (.ci/run installs them; see
scripts/trace_viewer.py). Where one is missing the tests are skipped and say why."""
import json
import sys

import pytest

from conftest import ALL, CAPTURES, ROOT
from decoders.session import decode_capture
from decoders.timeline import timeline

sys.path.insert(0, str(ROOT / "scripts"))
import trace_viewer  # noqa: E402

pytestmark = pytest.mark.viewer
WHY = trace_viewer.missing()


@pytest.fixture(scope="module")
def open_trace():
    if WHY:
        pytest.skip(WHY)
    with trace_viewer.viewer_session() as open_trace:
        yield open_trace


@pytest.mark.parametrize("name", ALL)
def test_viewer_imports_every_event(name, open_trace, tmp_path):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(timeline(decode_capture(str(CAPTURES / name / "capture.tlc.gz")))))
    want = trace_viewer.expected(str(path))
    page = open_trace(str(path))
    got = trace_viewer.stats(page)
    page.close()
    assert got["warnings"] == []
    assert sorted(map(tuple, got["processes"])) == [tuple(p) for p in want["processes"]]
    assert got["threads"] == want["threads"]
    assert got["slices"] == want["slices"]
    assert got["instants"] == want["instants"]
    # The importer moves the earliest event to 0 ms.
    assert got["bounds_ms"][0] == 0
    assert got["bounds_ms"][1] == pytest.approx(want["end_ms"] - want["start_ms"], abs=1e-6)


@pytest.mark.parametrize("event, warning", [
    ({"name": "b", "ph": "E", "ts": 10, "pid": 1, "tid": 1}, "duration_parse_error"),
    ({"name": "b", "ph": "Q", "ts": 10, "pid": 1, "tid": 1}, "parse_error")])
def test_viewer_reports_a_bad_file(event, warning, open_trace, tmp_path):
    """The check can fail: the viewer warns about an E with no B, and about a phase it does
    not know (what it printed when tried)."""
    doc = {"traceEvents": [
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "p"}},
        {"name": "a", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}, event]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    page = open_trace(str(path))
    got = trace_viewer.stats(page)
    page.close()
    assert [w.split(":")[0] for w in got["warnings"]] == [warning]
