"""trace-launch's report after a run (tracer/cli_common.py SHOWN_LAUNCHES): the first launches in
full, then every kernel launch counted by kernel, grid and block (decoders/session/launches.py
kernel_tally). The counts are checked against the manifests' truth and against the full
list of decoded launches."""
import io
import re
from collections import Counter

from conftest import capture_path, manifest
from decoders.session import _tally, decode_capture
from tracer.report import render_text

ROW = re.compile(r"^\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+(\S+)\s+(\S+)\s+(.*)$")


def _report(name, limit):
    model = decode_capture(capture_path(name))
    out = io.StringIO()
    render_text(model, out, launch_limit=limit)
    return model, out.getvalue()


def _rows(text):
    table = text[text.index("kernel launches by kernel, grid and block"):]
    return [ROW.match(line).groups() for line in table.splitlines()[2:] if ROW.match(line)]


def test_launch_loop_counts_match_the_program():
    """captures/launch-loop-10k: 100 warm-up and 10,000 timed launches of `empty`, grid 1x1x1,
    block 1x1x1 (manifest): one row of 10,100, all verified; 50 launches in full."""
    truth = manifest("launch-loop-10k")["ground_truth"]
    model, text = _report("launch-loop-10k", 50)
    assert len(re.findall(r"^  launch \d+: ", text, re.M)) == 50
    rows = _rows(text)
    want = truth["launches"] + truth["warmup_launches"]
    empty = [r for r in rows if r[6] == truth["kernel"]]
    assert len(empty) == 1
    n, verified, differ, unchecked, grid, block, _ = empty[0]
    assert int(n.replace(",", "")) == int(verified.replace(",", "")) == want
    assert (differ, unchecked) == ("0", "0")
    assert grid == "x".join(map(str, truth["grid"])) and block == "x".join(map(str, truth["block"]))
    assert f"({len(model.launches) - 50:,} more launches decoded" in text


def test_rows_sum_to_every_kernel_launch():
    """jax-jit (320 launches): the table holds every kernel launch once, by the same kernel,
    grid and block as the launches' own summaries, and the outcomes add up to the stats."""
    model, text = _report("jax-jit", 10)
    want = Counter()
    for l in model.launches:
        s = l.summary
        if s["kernel"]:
            k = (s["attribution"] or {}).get("kernel") if s.get("attribution") else None
            want[(k["name"] if k else None, tuple(s["grid"]), tuple(s["block"]))] += 1
    got = {key: sum(t.values()) for key, t in model.kernel_tally.items()}
    assert got == dict(want)
    rows = _rows(text)
    assert sum(int(r[0].replace(",", "")) for r in rows) == sum(want.values())
    stats = model.stats()["kernel_launches"]
    assert sum(int(r[1].replace(",", "")) for r in rows) == stats.get("verified", 0)
    assert sum(int(r[3].replace(",", "")) for r in rows) == stats.get("not_checked", 0)
    assert model.scheduling_qmds == sum(1 for l in model.launches if not l.summary["kernel"])


def test_no_limit_or_few_launches_shows_all():
    _, full = _report("torch-small", None)
    _, limited = _report("torch-small", 1000)
    assert full == limited and "kernel launches by kernel" not in full


def test_mismatched_launch_is_remembered_and_shown():
    """A launch whose attribution differs from its call is kept by index, and the report
    shows it in full after the first ones (a mismatch is never only a count)."""
    class M:
        kernel_tally, mismatched, scheduling_qmds, launches = {}, [], 0, [None] * 7
    s = {"kernel": True, "grid": [2, 1, 1], "block": [64, 1, 1]}
    _tally(M, s, {"kernel": {"name": "k"}, "verified": False, "graph_node": None})
    assert M.mismatched == [7] and M.kernel_tally[("k", (2, 1, 1), (64, 1, 1))]["mismatch"] == 1
    model = decode_capture(capture_path("launch-loop-10k"))
    model.mismatched = [5000]
    model.kernel_tally = {("empty", (1, 1, 1), (1, 1, 1)): Counter(mismatch=1, verified=10099)}
    out = io.StringIO()
    render_text(model, out, launch_limit=3)
    text = out.getvalue()
    assert "mismatched launches after the first 3:" in text
    assert re.search(r"^  launch 5000: ", text, re.M)
    assert len(re.findall(r"^  launch \d+: ", text, re.M)) == 4


def test_worker_processes_write_the_same_text(monkeypatch):
    """trace-decode's full text report with the launches rendered by forked workers
    (tracer/parallel.py, lines escaped and cut by each worker's TextOut) is byte for byte
    what one process writes, with and without colour and line cutting."""
    from tracer import parallel
    model = decode_capture(capture_path("launch-loop-10k"))
    assert len(model.launches) >= parallel.MIN_ITEMS
    for color, full in ((False, False), (True, True)):
        texts = []
        for jobs in ("1", "3"):
            monkeypatch.setenv("TRACE_LAUNCH_JOBS", jobs)
            out = io.StringIO()
            render_text(model, out, color=color, full_names=full)
            texts.append(out.getvalue())
        assert texts[0] == texts[1]
        assert len(re.findall(r"^  launch \d+: ", texts[0], re.M)) == len(model.launches)


def _cli_text(*args):
    from click.testing import CliRunner
    from tracer.cli import trace_decode
    res = CliRunner().invoke(trace_decode, [capture_path("launch-loop-10k"), *args])
    assert res.exit_code == 0, res.output[-2000:]
    return res.output


def test_trace_decode_summarises_by_default_and_all_launches_shows_all():
    """Issue 27: `trace-decode captures/launch-loop-10k/...` printed 192,020 lines. By
    default it shows the first 200 launches (tracer/cli_common.py SHOWN_LAUNCHES, as trace-launch
    does) and the table of all of them, whose one row counts the manifest's launches;
    --all-launches shows every launch the capture holds."""
    from tracer.cli_common import SHOWN_LAUNCHES
    truth = manifest("launch-loop-10k")["ground_truth"]
    want = truth["launches"] + truth["warmup_launches"]
    text = _cli_text()
    assert len(text.splitlines()) < 3000
    assert len(re.findall(r"^  launch \d+: ", text, re.M)) == SHOWN_LAUNCHES
    (row,) = [r for r in _rows(text) if r[6] == truth["kernel"]]
    assert int(row[0].replace(",", "")) == want
    assert "--all-launches shows every one" in text
    full = _cli_text("--all-launches")
    shown = re.findall(r"^  launch (\d+): ", full, re.M)
    assert len(shown) == 2 * want and shown[-1] == str(2 * want - 1)   # and a GRID_NULL each
    assert "kernel launches by kernel, grid and block" not in full
