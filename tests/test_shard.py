"""decoders/session/shard.py: a brief decode sharded by time gives the report one decode in
one process gives, on every committed capture: merged where its blocks had all the history
they needed, decoded again in one process where one of them did not (or where anything
else stops the merge). The blocks are made small here (16 submissions at least, a warm-up
of 16) so that the short captures are cut too."""
import io
import os
import sys

import pytest

from decoders.session import decode_capture, shard
from decoders.text import TextOut
from tests.conftest import ALL, capture_path
from tracer.report import render_text

BRIEF = 2           # launches the report shows in full: the rest are counted


def _report(path, brief=BRIEF):
    model = decode_capture(path, brief=brief)
    buf = io.StringIO()
    render_text(model, TextOut(buf, color=False, limit=200), color=False, launch_limit=brief)
    return buf.getvalue(), [str(p) for p in model.problems], model.split


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(shard, "MIN_SUBMISSIONS", 16)
    monkeypatch.setattr(shard, "WARMUP", 16)

    def sharded(path, k=3, brief=BRIEF):
        monkeypatch.setenv("TRACE_LAUNCH_SHARDS", str(k))
        got = _report(path, brief)
        monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
        return got
    return sharded


@pytest.mark.parametrize("name", ALL)
def test_sharded_report_is_the_one_process_report(name, small_blocks, monkeypatch):
    path = capture_path(name)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    text3, problems3, how = small_blocks(path)
    assert (text3, problems3) == (text, problems), how


@pytest.mark.parametrize("name,launches", [("launch-loop-10k", 20200), ("jax-loops", None)])
def test_steady_captures_are_merged_from_their_blocks(name, launches, small_blocks,
                                                      monkeypatch):
    """Where no block missed history, the report is the blocks' merged (not a decode in one
    process after all), and it counts every launch: launch-loop-10k's manifest has 10,100
    kernel launches (its 10,000 and 100 of warm-up), each with the driver's GRID_NULL QMD."""
    path = capture_path(name)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    model = decode_capture(path, brief=BRIEF)
    assert model.split == "3 blocks"
    if launches is not None:
        assert len(model.launches) == launches
        assert sum(model.verified.values()) == launches // 2


def test_a_miss_counts_when_any_earlier_witness_had_the_history(small_blocks):
    """jax-cmdbuf cut in 3: block 2 hangs two releases of channel 11 (records 10820-10821)
    on no launch, where one decode hangs them on the channel's last launch, which came
    before block 1's warm-up. Block 1 skimmed it too, so its witness says the channel had
    no launch: only block 0's, exact, has it. Asked of block 1's alone, the merged report
    counted 797 releases on channels with no launch against one decode's 795."""
    text, problems, how = small_blocks(capture_path("jax-cmdbuf"))
    assert "not sharded: block 2: record 10820: release before any launch" in how
    assert "795 releases on channels with no launch" in text


def test_a_follower_that_dies_leaves_the_one_process_decode(small_blocks, monkeypatch):
    """The process that follows the capture and forks the blocks' ends without a word
    (here it cannot start: its Python is /bin/false): no result, and the capture is
    decoded in one process instead, its report the same."""
    path = capture_path("launch-loop-10k")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    monkeypatch.setattr(sys, "executable", "/bin/false")
    text3, problems3, how = small_blocks(path)
    assert "not sharded: the process that follows the capture ended early" in how
    assert (text3, problems3) == (text, problems)


def test_a_capture_with_windows_is_not_sharded(small_blocks):
    _, _, how = small_blocks(capture_path("torch-window-nvtx"))
    assert "not sharded: a capture with windows" in how


def test_shards_from_the_environment(monkeypatch):
    for env, want in (("0", 1), ("1", 1), ("4", 4), ("99", shard.MAX_SHARDS), ("x", None)):
        monkeypatch.setenv("TRACE_LAUNCH_SHARDS", env)
        got = shard.shards()
        if want is not None:
            assert got == want
        else:
            assert got >= 1
    assert os.environ.get("TRACE_LAUNCH_SHARDS") == "x"


@pytest.mark.parametrize("name, seed, never, block", [
    ("launch-loop-10k", 4, (), 1024), ("torch-small", 2, (), 32), ("two-streams", 3, (40,), 16)])
def test_live_sharded_report_is_the_offline_one(tmp_path, name, seed, never, block,
                                                small_blocks, monkeypatch):
    """A capture decoded while it is written (a writer replays a recording as the shim
    writes it: tests/test_live_decode.py), in blocks forked as the follower reaches them:
    the report of the finished file decoded in one process."""
    from tests.test_live_decode import decode_while_written
    monkeypatch.setattr(shard, "BLOCK", block)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    live, path = decode_while_written(tmp_path, name, seed, never, brief=BRIEF)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    from decoders.session import capture_header
    from decoders.capture.reader import CaptureReader, open_capture
    with open_capture(path) as f:       # (read at the start: the cursor moved since)
        live.header = capture_header(CaptureReader(f, name=path).header)
    buf = io.StringIO()
    render_text(live, TextOut(buf, color=False, limit=200), color=False, launch_limit=BRIEF)
    assert (buf.getvalue(), [str(p) for p in live.problems]) == (text, problems), live.split
    if name == "launch-loop-10k":
        assert live.split.endswith(" blocks") and int(live.split.split()[0]) >= 3
