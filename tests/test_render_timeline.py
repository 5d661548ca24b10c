"""scripts/render_timeline.py: the SVG of a trace-event file parses, has one row label per
process_name / thread_name metadata event and one box (or a tick counting it) per X event
in the window; on a synthetic trace and on the timeline of a real capture."""
import importlib.util
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from conftest import CAPTURES, ROOT, capture_file
from tracer.cli import trace_decode

SCRIPT = ROOT / "scripts" / "render_timeline.py"
SVG = "{http://www.w3.org/2000/svg}"
REAL = "two-streams"
IMAGES = ("timeline-two-streams.svg", "timeline-two-streams-launch.svg")

_spec = importlib.util.spec_from_file_location("render_timeline", SCRIPT)
rt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rt)


def synthetic():
    """Two processes (one with sort index), nested X events, a zero-duration X, instants."""
    ev = [
        {"name": "process_name", "ph": "M", "pid": 10, "tid": 0, "args": {"name": "app --flag <x>"}},
        {"name": "thread_name", "ph": "M", "pid": 10, "tid": 10, "args": {"name": "main thread"}},
        {"name": "thread_name", "ph": "M", "pid": 10, "tid": 11, "args": {"name": "worker & co"}},
        {"name": "process_name", "ph": "M", "pid": 99, "tid": 0, "args": {"name": "GPU channels"}},
        {"name": "process_sort_index", "ph": "M", "pid": 99, "tid": 0, "args": {"sort_index": 1 << 30}},
        {"name": "thread_name", "ph": "M", "pid": 99, "tid": 1, "args": {"name": "channel 1"}},
        {"name": "thread_sort_index", "ph": "M", "pid": 99, "tid": 1, "args": {"sort_index": 1}},
        {"name": "thread_name", "ph": "M", "pid": 99, "tid": 2, "args": {"name": "channel 2"}},
        {"name": "thread_sort_index", "ph": "M", "pid": 99, "tid": 2, "args": {"sort_index": 2}},
        # main thread: an outer call with two nested ones, then a later one
        {"name": "outer", "ph": "X", "ts": 100.0, "dur": 900.0, "pid": 10, "tid": 10},
        {"name": "RM_CONTROL A", "ph": "X", "ts": 150.0, "dur": 200.0, "pid": 10, "tid": 10},
        {"name": "RM_ALLOC <B>", "ph": "X", "ts": 500.0, "dur": 300.0, "pid": 10, "tid": 10},
        {"name": "late", "ph": "X", "ts": 3000.0, "dur": 500.0, "pid": 10, "tid": 10},
        {"name": "doorbell token 0xa", "ph": "i", "s": "t", "ts": 1200.0, "pid": 10, "tid": 10},
        {"name": "work", "ph": "X", "ts": 2000.0, "dur": 1500.0, "pid": 10, "tid": 11},
        {"name": "launch grid 4x1x1", "ph": "X", "ts": 1200.0, "dur": 0.0, "pid": 99, "tid": 1},
        {"name": "submission (1 GP entries)", "ph": "X", "ts": 3200.0, "dur": 400.0, "pid": 99, "tid": 2},
    ]
    return {"traceEvents": ev, "displayTimeUnit": "ns", "otherData": {"capture": "synthetic"}}


def parse(svg):
    root = ET.fromstring(svg.encode("utf-8"))
    assert root.tag == SVG + "svg"
    return root


def labels(root):
    """{kind: [full names]} of the row labels."""
    out = {}
    for t in root.iter(SVG + "text"):
        if t.get("class") == "label":
            out.setdefault(t.get("data-kind"), []).append(t.find(SVG + "title").text)
    return out


def boxes(root):
    """(rects drawn one per event, events counted by merged ticks)."""
    rects = list(root.iter(SVG + "rect"))
    ev = [r for r in rects if r.get("class") == "ev"]
    agg = sum(int(r.get("data-n")) for r in rects if r.get("class") == "agg")
    return ev, agg


def meta_names(events, which=("process_name", "thread_name")):
    return sorted(e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] in which)


def x_in(events, t0_us, t1_us):
    return [e for e in events if e["ph"] == "X" and rt.in_window(e, t0_us, t1_us)]


def test_synthetic_whole():
    doc = synthetic()
    root = parse(rt.render(doc["traceEvents"], doc["otherData"]))
    lab = labels(root)
    assert sorted(lab["process_name"] + lab["thread_name"]) == meta_names(doc["traceEvents"])
    assert "implicit" not in lab
    ev, agg = boxes(root)
    n_x = sum(1 for e in doc["traceEvents"] if e["ph"] == "X")
    assert len(ev) + agg == n_x
    assert agg == 1                      # the zero-duration launch is a tick, the rest boxes
    assert len(ev) == n_x - 1
    assert len([p for p in root.iter(SVG + "path") if p.get("class") == "inst"]) == 1
    titles = [r.find(SVG + "title").text.split("\n")[0] for r in ev]
    assert "RM_ALLOC <B>" in titles                      # escaped on the way in, parsed back
    # nesting: the two nested calls sit one level below "outer"
    ys = {r.find(SVG + "title").text.split("\n")[0]: float(r.get("y")) for r in ev}
    assert ys["RM_CONTROL A"] == ys["RM_ALLOC <B>"] > ys["outer"] == ys["late"]
    # order: the process with the large sort index comes last
    order = [t.find(SVG + "title").text for t in root.iter(SVG + "text") if t.get("class") == "label"]
    assert order == ["app --flag <x>", "main thread", "worker & co", "GPU channels", "channel 1", "channel 2"]


def test_synthetic_window_and_filter():
    doc = synthetic()
    events = doc["traceEvents"]
    root = parse(rt.render(events, doc["otherData"], t_from=1.1, t_to=2.5))
    ev, agg = boxes(root)
    want = x_in(events, 1100.0, 2500.0)
    assert sorted(e["name"] for e in want) == ["launch grid 4x1x1", "work"]
    assert len(ev) + agg == len(want)
    lab = labels(root)                   # without --skip-empty every track keeps its row
    assert sorted(lab["process_name"] + lab["thread_name"]) == meta_names(events)

    root = parse(rt.render(events, doc["otherData"], t_from=1.1, t_to=2.5, skip_empty=True))
    lab = labels(root)
    assert sorted(lab["thread_name"]) == ["channel 1", "main thread", "worker & co"]

    root = parse(rt.render(events, doc["otherData"], tracks="GPU channels"))
    lab = labels(root)
    assert lab["process_name"] == ["GPU channels"] and sorted(lab["thread_name"]) == ["channel 1", "channel 2"]
    ev, agg = boxes(root)
    assert len(ev) + agg == 2


def test_narrow_boxes_are_merged_and_counted():
    ev = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "t"}},
          {"name": "big", "ph": "X", "ts": 0.0, "dur": 100000.0, "pid": 1, "tid": 2}]
    ev += [{"name": f"tiny {k % 3}", "ph": "X", "ts": 200000.0 + k * 2, "dur": 1.0, "pid": 1, "tid": 1}
           for k in range(500)]
    root = parse(rt.render(ev, width=1000))
    boxes_, agg = boxes(root)
    assert len(boxes_) == 1 and agg == 500
    ticks = [r for r in root.iter(SVG + "rect") if r.get("class") == "agg"]
    assert len(ticks) == 1 and "500 events" in ticks[0].find(SVG + "title").text
    legend = " ".join(t.text for t in root.iter(SVG + "text") if t.get("class") == "legend")
    assert "500 narrower than 0.5 px" in legend
    lab = labels(root)                   # pid 1 has no process_name, tid 2 no thread_name
    assert lab["thread_name"] == ["t"] and lab["implicit"] == ["pid 1", "tid 2"]


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("timeline") / "trace.json"
    r = CliRunner().invoke(trace_decode, ["timeline", str(capture_file(REAL)), "-o", str(path)])
    assert r.exit_code == 0, r.output
    return path


def test_real_capture_whole(real_trace, tmp_path):
    out = tmp_path / "t.svg"
    subprocess.run([sys.executable, str(SCRIPT), str(real_trace), "-o", str(out)], check=True)
    assert out.stat().st_size < 300 * 1024
    root = parse(out.read_text(encoding="utf-8"))
    events = json.loads(real_trace.read_text())["traceEvents"]
    lab = labels(root)
    assert sorted(lab["process_name"] + lab["thread_name"]) == meta_names(events)
    assert "implicit" not in lab
    ev, agg = boxes(root)
    assert len(ev) + agg == sum(1 for e in events if e["ph"] == "X")
    assert any(" grid " in (r.find(SVG + "title").text or "")
               for r in root.iter(SVG + "rect") if r.get("class") in ("ev", "agg"))


def test_real_capture_launch_window(real_trace, tmp_path):
    events = json.loads(real_trace.read_text())["traceEvents"]
    launches = [e for e in events if e["ph"] == "X" and e.get("cat") == "submission"
                and " grid " in e["name"]]
    assert len(launches) == 2            # produce on one stream's channel, consume on the other's
    t0 = launches[0]["ts"] / 1000 - 0.5
    t1 = launches[-1]["ts"] / 1000 + 0.1
    out = tmp_path / "zoom.svg"
    subprocess.run([sys.executable, str(SCRIPT), str(real_trace), "-o", str(out), "--from", str(t0),
                    "--to", str(t1)], check=True)
    root = parse(out.read_text(encoding="utf-8"))
    ev, agg = boxes(root)
    assert len(ev) + agg == len(x_in(events, t0 * 1000, t1 * 1000))
    lab = labels(root)
    assert sorted(lab["process_name"] + lab["thread_name"]) == meta_names(events)


@pytest.mark.parametrize("name", IMAGES)
def test_docs_images(name):
    """The pictures docs/timeline.md shows (moved there from the README) are drawn and
    linked by a path relative to docs/."""
    path = ROOT / "docs" / "img" / name
    assert path.stat().st_size < 300 * 1024
    root = parse(path.read_text(encoding="utf-8"))
    assert boxes(root)[0] and labels(root)["thread_name"]
    assert f"](img/{name})" in (ROOT / "docs" / "timeline.md").read_text()
