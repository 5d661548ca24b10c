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
    monkeypatch.setattr(shard, "LIVE_WARMUP", 16)

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


def test_the_first_launches_a_report_shows_may_come_from_several_blocks(small_blocks,
                                                                        monkeypatch):
    """A report that shows more launches in full than the first block holds (here 8,000 of
    launch-loop-10k's 20,200, in 3 blocks of ~6,700): each block keeps its own first ones,
    and the merge takes them in turn, numbered on. Before, only the first block kept any,
    and such a capture was decoded again in one process (held-out mix3: its first block,
    the job's start, had 62 launches in 4,000 submissions)."""
    path = capture_path("launch-loop-10k")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path, brief=8000)
    text3, problems3, how = small_blocks(path, brief=8000)
    assert how == "3 blocks"
    assert (text3, problems3) == (text, problems)


def test_a_miss_counts_when_any_earlier_witness_had_the_history(small_blocks):
    """jax-cmdbuf cut in 3: block 2 hangs two releases of channel 11 (records 10820-10821)
    on no launch, where one decode hangs them on the channel's last launch, which came
    before block 1's warm-up. Block 1 skimmed it too, so its witness says the channel had
    no launch: only block 0's, exact, has it. Asked of block 1's alone, the merged report
    counted 797 releases on channels with no launch against one decode's 795."""
    text, problems, how = small_blocks(capture_path("jax-cmdbuf"))
    assert "not sharded: block 2: record 10820: release before any launch" in how
    assert "795 releases on channels with no launch" in text


def test_a_release_after_a_launch_call_skimmed_is_left_to_the_block_before(small_blocks,
                                                                            monkeypatch):
    """torch-small cut in 3: block 2 meets a release (record 1129) on a channel with no
    launch since its warm-up, which a launch call the skim passed over had used. One decode
    hangs it on that channel's last launch, which the block that decoded it still holds
    and hangs it on too: block 2 leaves it out of its syncs, and the blocks merge (they
    were decoded again in one process before), their report the one process's. The claim
    is checked: it counts as a miss where no block before had a launch on the channel."""
    from decoders.session.skim import counts
    path = capture_path("torch-small")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    text3, problems3, how = small_blocks(path)
    assert how == "3 blocks"
    assert (text3, problems3) == (text, problems)
    key = (7, 0xc1d00001, 11)
    assert counts(("no launch", key), {"launch": set()})
    assert not counts(("no launch", key), {"launch": {key}})


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


def test_progress_follows_the_blocks_to_their_end(small_blocks, monkeypatch):
    """The progress a sharded decode shows is the records its blocks decoded, in bytes of the
    capture (shard.Board): it reaches the file's size once the last block has ended, and not
    before, although the decoding process's own skim is done much sooner."""
    path = capture_path("launch-loop-10k")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    seen, skimmed = [], []
    follower_next = shard._Follower.next

    def next_result(self, wait=None):   # called first once this process's skim is done
        if not skimmed:
            skimmed.append(len(seen))
        return follower_next(self, wait)
    monkeypatch.setattr(shard._Follower, "next", next_result)
    model = decode_capture(path, brief=BRIEF, progress=lambda done, total: seen.append(
        (done, total)))
    assert model.split == "3 blocks"
    size = os.path.getsize(path)
    assert seen and all(total == size for _, total in seen)
    dones = [d for d, _ in seen]
    assert dones == sorted(dones)
    assert dones[skimmed[0] - 1] < size     # the skim done, the blocks not
    assert dones[-1] == size


def test_board_counts_each_block_over_its_own_records(tmp_path):
    """_Shown over a Board: block m covers the records from its first to the next block's
    first, each record in bytes as the decoding process met it (interpolated between the
    points it noted). Three blocks of 100 records, 1 byte each after a 10-byte header: the
    first done, the second half way, the third in its warm-up (no slot yet)."""
    from types import SimpleNamespace
    f = open(tmp_path / "board", "w+b")
    board = shard.Board(f.fileno())
    board.mark(0, SimpleNamespace(lo=shard.INF, end=100, n=150), None)   # block 0: from 0
    board.mark(1, SimpleNamespace(lo=100, end=shard.INF, n=160), 150)
    board.mark(2, SimpleNamespace(lo=shard.INF, end=shard.INF, n=160), 160)
    assert board.read() == [(0, 100, 1), (100, 150, 0)]
    where = iter([(10, 310), (110, 310), (310, 310)])
    seen = []
    shown = shard._Shown(lambda d, t: seen.append((d, t)), lambda: next(where), board)
    shown.note(100)     # (record 150 is past what it read: counted as far as it read)
    shown.note(300)
    assert seen == [(10 + 100, 310), (10 + 100 + 50, 310)]
    f.close()


SLEEPER = '''
import os, sys, time
def main(argv):
    out = argv[argv.index("--pids") + 1]
    kid = os.fork()
    if kid == 0:
        time.sleep(60)
        os._exit(0)
    with open(out, "w") as f:
        f.write(f"{os.getpid()} {kid}")
    if "--leave" in argv:
        os._exit(0)      # the leader goes; what it forked stays in its session
    time.sleep(60)
'''


def _sleeper(tmp_path, *extra):
    (tmp_path / "tl_sleeper.py").write_text(SLEEPER)
    return ["--pids", str(tmp_path / "pids")] + list(extra)


def _pids(tmp_path):
    import time
    for _ in range(200):
        p = tmp_path / "pids"
        if p.exists() and p.read_text().count(" ") == 1:
            return [int(x) for x in p.read_text().split()]
        time.sleep(0.05)
    raise AssertionError("the sleeper did not start")


def _gone(pids, within=10.0):
    import time
    end = time.monotonic() + within
    while time.monotonic() < end:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                # a zombie (not reaped yet by its parent) has ended too
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                        alive.append(pid)
            except (ProcessLookupError, FileNotFoundError):
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_a_tracer_that_exits_ends_the_sessions_it_started(tmp_path, monkeypatch):
    """The follower runs in a session of its own (out of the terminal's signals): a tracer
    that exits, as at a Ctrl-C while its report is made, ends it and what it forked
    (split._end_sessions at exit), not seconds later."""
    import subprocess
    args = _sleeper(tmp_path)
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
            "from decoders.session.split import start_child; "
            f"start_child('tl_sleeper', {args!r}, 'x', session=True); "
            "import time; time.sleep(0.5); sys.exit(0)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path))
    subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=True)
    assert _gone(_pids(tmp_path))


def test_stopping_a_session_whose_leader_exited_ends_what_it_forked(tmp_path, monkeypatch):
    """A follower that found a block it cannot merge exits at once and leaves the blocks'
    processes it forked: stopping it ends them (the group outlives its leader)."""
    from decoders.session.split import start_child, stop_child
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    proc, fd = start_child("tl_sleeper", _sleeper(tmp_path, "--leave"), "x", session=True)
    leader, kid = _pids(tmp_path)
    assert leader == proc.pid
    assert _gone([leader]) and not _gone([kid], within=0.5)
    stop_child(proc, fd, group=True)
    assert _gone([kid])


def _json_text(model):
    from tracer.report import render_json
    buf = io.StringIO()
    render_json(model, buf, all_fields=False)
    return buf.getvalue()


@pytest.mark.parametrize("name", ALL)
def test_sharded_json_is_the_one_process_json(name, small_blocks, monkeypatch):
    """A full decode (the JSON report: every launch, submission, API call, sync and copy)
    in 3 blocks gives the JSON one decode in one process gives, byte for byte: each list
    the blocks' files laid end to end (decoders/spill.py SpillChain), or the capture decoded
    again where a block could not give its part."""
    path = capture_path(name)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    one = _json_text(decode_capture(path, full_blocks=True))
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    model = decode_capture(path, full_blocks=True)
    assert _json_text(model) == one, model.split


@pytest.mark.parametrize("name", ["launch-loop-10k", "multi-gpu", "jax-cmdbuf", "torch-graph",
                                  "ddp-2rank", "torch-eager", "graph-replay", "triton-add"])
def test_sharded_timeline_is_the_one_process_timeline(name, small_blocks, monkeypatch):
    """`trace-decode timeline` reads the lists of the JSON's full decode: in 3 blocks it
    writes, byte for byte, what one decode in one process gives."""
    from decoders.timeline import write_timeline
    path = capture_path(name)
    texts = []
    for shards in ("1", "3"):
        monkeypatch.setenv("TRACE_LAUNCH_SHARDS", shards)
        buf = io.StringIO()
        model = decode_capture(path, full_blocks=True)
        write_timeline(model, buf)
        texts.append(buf.getvalue())
    assert texts[1] == texts[0]
    if name in ("launch-loop-10k", "multi-gpu"):    # (merged: test_full_decode_in_blocks...)
        assert "3 blocks" in model.split


@pytest.mark.parametrize("name, criteria, cost", [
    ("launch-loop-10k", {"launches": (5, 9000, 20000)}, False), ("multi-gpu", {"pid": None}, False),
    ("jax-cmdbuf", {"cls": 0xcbc0}, False), ("torch-graph", {"launches": (3,)}, False),
    ("launch-loop-10k", None, True), ("torch-graph", None, True)])
@pytest.mark.parametrize("as_json", [True, False])
def test_sharded_selection_is_the_one_process_selection(name, criteria, cost, as_json,
                                                        small_blocks, monkeypatch):
    """A selection (and the text's --ioctls), and --cost, read every list: decoded in 3
    blocks, the report is the one-process report, byte for byte."""
    import decoders.session as S
    from tracer.cli_common import print_report
    decode, splits = S.decode_capture, []

    def decoded(*a, **k):
        model = decode(*a, **k)
        splits.append(model.split)
        return model
    monkeypatch.setattr(S, "decode_capture", decoded)
    outs = []
    for shards in ("1", "3"):
        monkeypatch.setenv("TRACE_LAUNCH_SHARDS", shards)
        buf = io.StringIO()
        print_report(capture_path(name), buf, as_json=as_json, filters=criteria,
                     ioctls=not as_json and not cost, cost=cost)
        outs.append(buf.getvalue())
    assert outs[1] == outs[0]
    if name == "launch-loop-10k":
        assert "3 blocks" in splits[-1]


@pytest.mark.parametrize("name, how", [
    ("launch-loop-10k", "3 blocks"),
    # a channel's last launch is held until the capture's end: its block hands it over then
    ("multi-gpu", "3 blocks"),
    # block 1's programmatic launch at record 4995 waits on a launch of its warm-up: the
    # follower gives the number (test_sharded_json_is_the_one_process_json checks the JSON;
    # before session 41, "a programmatic launch waits on a launch before the block")
    ("jax-loops", "3 blocks")])
def test_full_decode_in_blocks_merges_or_says_why(name, how, small_blocks, monkeypatch):
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    model = decode_capture(capture_path(name), full_blocks=True)
    assert how in model.split
    if name == "launch-loop-10k":   # the manifest's 10,100 launches, each with its GRID_NULL
        assert len(model.launches) == 20200
        assert sum(1 for _ in model.launches) == 20200
        assert [l.record_index for l in model.launches.iter_range(6730, 6736)] == \
            [l.record_index for l in list(model.launches)[6730:6736]]


def test_live_full_decode_in_blocks_is_the_offline_json(tmp_path, small_blocks, monkeypatch):
    """trace-launch --json's decode, of a capture read while a writer replays it, in blocks
    forked as the follower reaches them: the offline JSON of one process."""
    from tests.test_live_decode import decode_while_written
    monkeypatch.setattr(shard, "BLOCK", 1024)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    live, path = decode_while_written(tmp_path, "launch-loop-10k", 4, full_blocks=True)
    assert live.split.endswith(" blocks") and int(live.split.split()[0]) >= 3
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    offline = decode_capture(path, full_blocks=True)
    live.header = offline.header        # (read at the start: the cursor moved since)
    assert _json_text(live) == _json_text(offline)


def test_spill_chain_reads_its_parts_as_one(tmp_path):
    """SpillChain: each block's list handed over by its file (adopted: opened, unlinked),
    an empty one, and a tail appended to after them, read as one list."""
    from decoders.spill import SpillChain, SpillList
    parts = []
    for lo, hi in ((0, 100), (100, 250), (250, 250)):
        lst = SpillList(0, directory=str(tmp_path))
        for i in range(lo, hi):
            lst.append({"i": i})
        parts.append(SpillList.adopt(lst.handed()))
    assert os.listdir(tmp_path) == []       # (each file goes with its last descriptor)
    chain = SpillChain(parts, SpillList(4))
    for i in range(250, 260):
        chain.append({"i": i})
    assert len(chain) == 260 and [x["i"] for x in chain] == list(range(260))
    assert (chain[99]["i"], chain[100]["i"], chain[-1]["i"]) == (99, 100, 259)
    assert [x["i"] for x in chain[95:105]] == list(range(95, 105))
    assert [x["i"] for x in chain.iter_range(95, 255)] == list(range(95, 255))
    assert [x["i"] for x in chain.iter_range(0, 1000)] == list(range(260))
    with pytest.raises(IndexError):
        chain[260]


def _block_told(path, m, block, warmup, seed=None):
    """Block m of `path` (blocks of `block` SUBMISSION records, a warm-up of `warmup`)
    decoded in this process as its own would, with what it told the follower (`seed`: as
    decoded again, seeded: skim.seeds())."""
    from decoders.capture.reader import open_capture
    from decoders.session.blocks import Block
    told = []
    with open_capture(path) as f:
        dec = Block(path, f, BRIEF)
        dec.seed = seed
        if m == 0:
            dec.begin_warmup(0, 0, block)
            dec.tell = told.append
        for rec in dec.reader.records():
            if m and rec.type == "SUBMISSION" and dec.nsub == m * block - warmup:
                dec.begin_warmup(dec.nsub, m * block, (m + 1) * block)
                dec.tell = told.append
            if dec.feed(rec) is False:
                break
        else:
            dec.finish(True)
            return told, dec
        dec.finish(False)
    return told, dec


def test_blocks_tell_their_misses_and_what_they_knew_before_they_end(small_blocks):
    """jax-cmdbuf in 3 blocks, as test_a_miss_counts_when_any_earlier_witness_had_the_history
    cuts it: block 2 tells its miss (record 10820, the release one decode hangs on channel
    11's last launch) as it meets it, and blocks 0 and 1 tell their known() where their
    spans end, the same as their results say; with the two, the miss counts: the follower
    can stop the blocks then, not once block 0 hands its last launch over at the end."""
    from decoders.session.skim import counts, union
    path = capture_path("jax-cmdbuf")
    block = shard.blocks_of(shard.cuts(path), 3)
    had = {}
    for m in (0, 1):
        told, dec = _block_told(path, m, block, 16)
        assert [item for kind, item in told if kind == "known"] == [dec.known]
        # block 1's own misses (record 4143: channel 10) name nothing block 0 had
        assert not any(counts(item[2], had) for kind, item in told if kind == "miss")
        union(had, dec.known)
    told, dec = _block_told(path, 2, block, 16)
    misses = [item for kind, item in told if kind == "miss"]
    assert len({m[2] for m in misses}) == len(misses) <= dec.EARLY_MISSES
    assert set(misses) <= set(dec.misses)
    assert [m for m in misses if counts(m[2], had)][0][:2] == \
        (10820, "release before any launch")


def _early_verdict(tell, check_after):
    """What a follower's _Results says (its message on `out`, its exit status) of two fake
    blocks whose processes told `tell` [(block, item)], checking after item `check_after`."""
    import marshal
    import tempfile
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        results = shard._Results(w)
        files = [tempfile.TemporaryFile() for _ in range(2)]
        senders = [shard._Early(f) for f in files]
        for j, f in enumerate(files):
            results.add(-1 - j, None, f)
        for n, (j, item) in enumerate(tell):
            senders[j].send(item)
            if n == check_after:
                results.early_check()
        results.early_check()
        os._exit(3)         # no verdict
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    msg = marshal.loads(data[8:]) if data else None
    return msg, os.waitstatus_to_exitcode(status)


def test_the_follower_stops_at_a_told_miss_once_the_blocks_before_told_theirs():
    """A miss told by block 1 counts against what block 0 told it knew where its span
    ended: the verdict is sent at once (the blocks not yet ended). Before block 0 told it
    (the miss waits), or where block 0 knew nothing of it, there is none."""
    key = (7, 0xc1d00001, 11)
    miss = ("miss", (500, "release before any launch", ("launch", key)))
    knew = ("known", {"launch": [key]})
    assert _early_verdict([(1, miss), (0, knew)], 0) == \
        ({"why": "block 1: record 500: release before any launch"}, 0)
    assert _early_verdict([(1, miss), (0, knew)], 5) == \
        ({"why": "block 1: record 500: release before any launch"}, 0)
    assert _early_verdict([(1, miss), (0, ("known", {"launch": []}))], 0) == (None, 3)
    assert _early_verdict([(1, miss)], 0) == (None, 3)


def test_a_dependent_qmd_unseen_by_its_block_is_checked_by_its_image(monkeypatch):
    """A stream's QMD ring slot launched before a block's warm-up, and reached there again as
    a dependent QMD the block reads and launches: one decode calls it "already decoded" only
    where the image last launched at that VA is the one the block read (skim._Launched
    unseen, counts() against the digests the blocks before told in known()). ddp-2rank (two
    ranks, NCCL), cut in 3 blocks with the offline warm-up of 256 submissions: its blocks
    met such slots, and every one was a new image, which any launch before the block
    counted as a miss (the capture was decoded again); now it merges, and its text report
    and its JSON are the one-process ones."""
    monkeypatch.setattr(shard, "MIN_SUBMISSIONS", 64)
    path = capture_path("ddp-2rank")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    one = _json_text(decode_capture(path, full_blocks=True))
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    text3, problems3, how = _report(path)
    assert how == "3 blocks" and (text3, problems3) == (text, problems)
    model = decode_capture(path, full_blocks=True)
    assert model.split == "3 blocks" and _json_text(model) == one


def test_an_unseen_dependent_counts_where_one_decode_had_launched_that_image():
    """counts() on the "launched" misses (synthetic known()): a VA no block before launched
    from never counts; one launched from counts where the block did not know the bytes
    there, or read the very image launched there last (one decode: "already decoded"),
    unless that image is a kernel's QMD run again (both decodes launch it)."""
    from decoders.session.skim import _digest, counts, union
    a, b = _digest(b"\x01" * 384), _digest(b"\x02" * 384)
    had = {}
    union(had, {"launched": [(7, 0x1000, a, True, False)]})
    union(had, {"launched": [(7, 0x1000, b, True, False)]})    # a later block's, last
    assert not counts(("launched", 7, 0x2000, a, False), had)
    assert counts(("launched", 7, 0x1000, None, False), had)
    assert counts(("launched", 7, 0x1000, b, False), had)
    assert not counts(("launched", 7, 0x1000, a, False), had)
    assert not counts(("launched", 7, 0x1000, b, True), had)
    assert not counts(("launched", 8, 0x1000, b, False), had)     # another process's VA


def test_a_dependent_no_block_before_knew_of_is_answered_by_the_merge():
    """dependent_answer() (synthetic known()): where a block knew no byte of the QMD a
    dependent pointer leads to, one decode says "already decoded" where the image last
    launched there is still there and is not a kernel's QMD run again; not decoded (as the
    block said) where no block before launched there or knew a byte there; anything else
    (the image rewritten since, bytes there known to a later block, a kernel's QMD run
    again, bytes known with no launch) counts: the capture is decoded again."""
    from decoders.launch.memory import PAGE
    from decoders.session.skim import _COUNTS, _digest, counts, dependent_answer, union
    d = _digest(b"\x01" * 384)
    va = 5 * PAGE + 0x800

    def answer(blocks, rerun=False, pid=7):
        had = {}
        for got in blocks:
            union(had, got)
        what = ("dependent", pid, va, rerun)
        got = dependent_answer(what, had)
        assert counts(what, had) == (got is _COUNTS)
        return got
    page = ((7, 5), ((0x800, 0xA00),))
    assert answer([]) is None
    assert answer([{"memory": [((7, 6), ((0, 16),))]}]) is None     # another page
    assert answer([{"memory": [page]}]) is _COUNTS                   # bytes, no launch
    launched = {"launched": [(7, va, d, True, False)], "memory": [page]}
    assert answer([launched]) == "already decoded"
    assert answer([launched], pid=8) is None                         # another process
    assert answer([launched], rerun=True) == "already decoded"       # a GRID_NULL's image
    kernel = {"launched": [(7, va, d, True, True)], "memory": [page]}
    assert answer([kernel]) == "already decoded"
    assert answer([kernel], rerun=True) is _COUNTS                   # run again: a launch
    assert answer([{"launched": [(7, va, d, False, False)]}]) is _COUNTS    # rewritten
    assert answer([launched, {"memory": [page]}]) is _COUNTS         # known after it
    assert answer([launched, {"memory": [((7, 5), ((0, 0x800),))]}]) == "already decoded"
    assert answer([launched, {"memory": [page], "launched": [(7, va, d, True, False)]}]) \
        == "already decoded"                                         # launched again


@pytest.mark.parametrize("name", ["torch-eager", "cupy-kernels"])
def test_a_ring_slot_idle_since_before_the_warm_up_merges(name, small_blocks, monkeypatch):
    """A stream's driver GRID_NULL QMD points at the stream's last launch, a ring slot that
    an idle stream last wrote before the block's warm-up, where the block knows no byte:
    the block marks the pointer and tells a "dependent" miss, and the merge gives one
    decode's answer from what the blocks before knew. These captures cut in 3 (warm-up 16)
    used to be decoded again in one process for it ("384 bytes at ... read, 0 known"); now
    they merge, and the text report and the JSON are the one-process ones."""
    from decoders.session.skim import counts, dependent_answer, union
    path = capture_path(name)
    block = shard.blocks_of(shard.cuts(path), 3)
    had, answers = {}, []
    for m in range(3):
        _, dec = _block_told(path, m, block, 16)
        assert not any(counts(what, had) for _, _, what in dec.misses)
        answers += [dependent_answer(what, had) for _, _, what in dec.misses
                    if what[0] == "dependent"]
        union(had, dec.known or {})     # (the last block's: none)
    assert "already decoded" in answers
    _, one = _merged_as_one(path, "3 blocks", small_blocks, monkeypatch)
    assert "\"_unknown\"" not in one


def _merged_as_one(path, how, small_blocks, monkeypatch):
    """`path` cut in 3 (small_blocks) merges (its split `how`), its text report and the
    JSON of a full decode the one-process ones: (the full decode's model, that JSON)."""
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    one = _json_text(decode_capture(path, full_blocks=True))
    text3, problems3, split = small_blocks(path)
    assert split == how and (text3, problems3) == (text, problems)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    model = decode_capture(path, full_blocks=True)
    assert model.split == how and _json_text(model) == one
    return model, one


def test_a_qmd_sent_again_long_after_its_upload_merges_seeded(small_blocks, monkeypatch):
    """jax-jit's driver GRID_NULL QMD at 0x204e66800 is uploaded at record 1197 and sent
    again unchanged by SEND_PCAS_A at 1218 and 1435 (then uploaded anew at 1566). Cut in 3
    with a warm-up of 16, block 1 starts at record 1420: it knows no byte of that QMD, and
    one decode did (the miss counts). The follower decodes the block again, seeded with the
    QMD images the blocks before it say one decode holds there (skim.seeds()): the seeded
    block misses nothing that counts, and the capture merges, its text report and JSON the
    one-process ones. Before, it was decoded again in one process."""
    from decoders.session.skim import counts, seeded, seeds, union
    path = capture_path("jax-jit")
    block = shard.blocks_of(shard.cuts(path), 3)
    had = {}
    _, dec0 = _block_told(path, 0, block, 16)
    union(had, dec0.known)
    _, dec1 = _block_told(path, 1, block, 16)
    counted = [(i, what) for i, _, what in dec1.misses if counts(what, had)]
    assert counted and counted[0][0] == 1435
    assert counted[0][1][0] == "memory" and counted[0][1][2] == 0x204e66800
    assert all(seeded(what, had) for _, what in counted)
    seed = seeds(had)
    assert any(va == 0x204e66800 and by == 1197 for items in seed.values()
               for va, _, by in items)
    _, again = _block_told(path, 1, block, 16, seed)
    assert not [what for _, _, what in again.misses if counts(what, had)]
    model, _ = _merged_as_one(path, "3 blocks, 1 decoded again", small_blocks, monkeypatch)
    sent = [l.summary for l in model.launches if l.record_index == 1435]
    assert [(s["qmd_type"], s["qmd_written_by"]) for s in sent
            if s["qmd_address"] == 0x204e66800] == [("GRID_NULL", 1197)]


def test_a_programmatic_launch_waiting_on_a_latch_of_a_block_before_merges(monkeypatch):
    """jax-train's programmatic launch at submission 3114 (record 14091) waits on latch 71
    of channel 14, which a launch of submission 3003 arrived at last. Cut there, with a
    warm-up of 16, the second block has seen no launch arrive at it: it tells a "latch"
    miss, and the follower answers it with the capture's number of the last launch of a
    block before that arrived there (each block says its own: _pack's "arrivals"). The
    capture merges, its JSON the one-process one (after_launch 3299, not null). Before,
    such a miss always counted (the 1,000-step JAX data-parallel job's block 2)."""
    path = capture_path("jax-train")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    model = decode_capture(path, full_blocks=True)
    one = _json_text(model)
    waits = [l.summary["programmatic"] for l in model.launches
             if l.submission_index == 3114 and l.summary.get("programmatic")]
    assert waits == [{"waits_on_latch": 71, "after_launch": 3299}]
    _, dec = _block_told(path, 1, 3114, 16)
    assert [(i, what[1][1:]) for i, _, what in dec.misses if what[0] == "latch"] == \
        [(14091, (14, 71))]
    monkeypatch.setattr(shard, "MIN_SUBMISSIONS", 16)
    monkeypatch.setattr(shard, "WARMUP", 16)
    monkeypatch.setattr(shard, "LIVE_WARMUP", 16)
    monkeypatch.setattr(shard, "blocks_of", lambda n, k: 3114)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "4")
    model = decode_capture(path, full_blocks=True)
    # (its second block is also decoded again, seeded: a QMD sent again, as jax-jit's)
    assert model.split == "2 blocks, 1 decoded again" and _json_text(model) == one


def test_a_block_decoded_again_while_the_capture_is_written(tmp_path, small_blocks,
                                                            monkeypatch):
    """The seeded decode again of a block (test_a_qmd_sent_again_long_after_its_upload_
    merges_seeded) while a writer still replays jax-jit: blocks of 276 submissions (as it
    cuts in 3), the second's warm-up after the QMD's upload at record 1197; its twin decodes
    it again, and the report is the offline one-process JSON."""
    from tests.test_live_decode import decode_while_written
    monkeypatch.setattr(shard, "BLOCK", 276)
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "3")
    live, path = decode_while_written(tmp_path, "jax-jit", 4, full_blocks=True)
    import re
    assert re.fullmatch(r"(\d+) blocks, 1 decoded again", live.split), live.split
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    offline = decode_capture(path, full_blocks=True)
    live.header = offline.header        # (read at the start: the cursor moved since)
    assert _json_text(live) == _json_text(offline)


def test_two_blocks_decoded_again_merge_and_past_the_cap_go_to_one_decode(small_blocks,
                                                                          monkeypatch):
    """jax-jit in blocks of 256 submissions needs two blocks decoded again, seeded (its
    second and fourth begin after a QMD's upload that is sent again): both are, and the
    report is the one-process one. With at most one (TRACE_LAUNCH_AGAIN=1, session 41's
    shard.MAX_AGAIN), the second's miss sends the capture to a decode as before, which says
    why; the same report."""
    path = capture_path("jax-jit")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    monkeypatch.setattr(shard, "blocks_of", lambda n, k: 256)
    text4, problems4, how = small_blocks(path, k=4)
    assert how == "4 blocks, 2 decoded again"
    assert (text4, problems4) == (text, problems)
    monkeypatch.setenv("TRACE_LAUNCH_AGAIN", "1")
    text4, problems4, how = small_blocks(path, k=4)
    assert "not sharded: block 3: record 3477: 384 bytes at 0x204e64800 read, 0 known" in how
    assert (text4, problems4) == (text, problems)


def test_the_skim_attributes_no_launch(monkeypatch):
    """A decode in blocks' skim (a blocks.Block given no block: the process that follows
    the capture) hands its launches to scratch lists no report reads: it counts them but
    attributes none (LaunchSink.light). jax-cmdbuf's skim decodes 425 launches (graph
    replays after an exec update: XLA's command buffers), which one decode attributes; a
    block attributes those of its warm-up and its own."""
    from decoders.capture.reader import open_capture
    from decoders.cuda.attribute import Attribution
    from decoders.session.blocks import Block
    path = capture_path("jax-cmdbuf")
    attributed = []
    for_launch = Attribution.for_launch
    monkeypatch.setattr(Attribution, "for_launch",
                        lambda self, launch, *a, **k: attributed.append(launch) or
                        for_launch(self, launch, *a, **k))
    dec = Block(path, open_capture(path), 10)
    for rec in dec.reader.records():
        dec.feed(rec)
    assert dec.sink.light and len(dec.model.launches) > 400 and not attributed
    dec = Block(path, open_capture(path), 10)
    dec.begin_warmup(100, 116, 400)
    for rec in dec.reader.records():
        if dec.feed(rec) is False:
            break
    assert not dec.sink.light and attributed
    assert min(l.submission_index for l in attributed) >= 100


def test_a_failed_calls_launch_before_from_a_block_before():
    """(Synthetic numbers, from the 1,000-step JAX data-parallel job on the H200 x2: its
    cuLibraryGetKernel at record 26066 of pid 2365 failed; one decode named launch 3281 the
    last kernel launch of that process before it, in a block before the call's.) A block
    that has no answer asks (its launches before the call); the merge answers from the last
    kernel launch per process of the blocks before, within WALK_BACK launches, as one
    decode looks back."""
    from decoders.session.blocks import answered_before
    from decoders.session.launches import WALK_BACK
    key = (26066, 2365)
    assert answered_before([(key, 12)], {2365: 3281}, 3300) == {key: 3281}
    assert answered_before([(key, 12)], {2364: 3281}, 3300) == {}      # another process's
    assert answered_before([(key, 12)], {2365: 3281}, 3281 + WALK_BACK - 11) == {}  # too far
    assert answered_before([(key, 12)], {2365: 3281}, 3281 + WALK_BACK - 12) == {key: 3281}


def test_a_failed_calls_launch_before_from_a_block_before_on_a_capture(small_blocks,
                                                                       monkeypatch):
    """captures/failed-calls (recorded for this): its first two failed calls come after 8
    copies that follow the program's 40th launch (submission 255, the copies 256-263). Cut
    at submission 260, the calls are the second block's and the launch before them the
    first's: the merge names it (blocks.answered_before), as one decode does and as the
    program's truth says (grid 55 of the 40th vadd). Without that answer the block's text
    would say there was none."""
    from decoders.session import blocks
    path = capture_path("failed-calls")
    monkeypatch.setenv("TRACE_LAUNCH_SHARDS", "1")
    text, problems, _ = _report(path)
    line = "the launch before it: launch 79, vadd grid 55x1x1 block 256x1x1"
    assert text.count(line) == 2
    monkeypatch.setattr(shard, "blocks_of", lambda n, k: 260)
    text2, problems2, how = small_blocks(path, k=2)
    assert how == "2 blocks"
    assert (text2, problems2) == (text, problems)
    monkeypatch.setattr(blocks, "answered_before", lambda asks, last, offset: {})
    text2, _, how = small_blocks(path, k=2)
    assert how == "2 blocks" and text2.count(line) == 0
    assert text2.count("no kernel launch of this process before it") == 2
