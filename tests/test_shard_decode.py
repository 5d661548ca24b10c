"""bench/shard_decode.py, the probe of a decode sharded by time (issue 24): its blocks,
decoded apart from what the shim keeps outside a capture window, laid end to end against
one decode of the whole capture. On a steady launch loop they agree and no block says it
missed history; on a short eager capture the comparison finds the history a block did not
see (a semaphore release that a whole decode attaches to its channel's last launch, made
before the block), and the block's decode says it missed it."""
import importlib.util
import json
import os

import pytest
from tests.conftest import capture_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location(
        "shard_decode", os.path.join(ROOT, "bench", "shard_decode.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _blocks(probe, path, k, w):
    subs = probe.submission_records(path)
    starts = [0] + [subs[len(subs) * j // k] for j in range(1, k)]
    out = []
    for lo, hi in zip(starts, starts[1:] + [None]):
        warm = subs[max(0, subs.index(lo) - w)] if lo else 0
        facts, _, problems = probe.decode(path, lo, warm, hi)
        out.append((lo, facts, problems))
    return out


def _split(facts):
    """(launches, syncs and copies): a launch's fact has 8 parts, the others 3."""
    return [f for f in facts if len(f) == 8], [f for f in facts if len(f) != 8]


def test_launch_loop_blocks_agree_with_one_decode(probe):
    path = str(capture_file("launch-loop-10k"))
    whole, _, problems = probe.decode(path)
    assert not problems
    blocks = _blocks(probe, path, 3, 16)
    merged = [f for _, facts, _ in blocks for f in facts]
    a, b = _split(merged), _split(whole)
    # the manifest's 10,000 launches and 100 of warm-up, each with its GRID_NULL QMD
    assert len(a[0]) == len(b[0]) == 20200
    assert sum(1 for f in a[0] if f[1] and f[2] == "empty") == 10100
    assert a == b
    assert not any(probe.real_misses(path, [(lo, ps) for lo, _, ps in blocks]))
    # each later block started cold: its first launch is one the whole decode had too
    for lo, facts, _ in blocks[1:]:
        assert facts and facts[0][0] >= lo


def test_short_eager_capture_shows_the_history_a_block_misses(probe):
    path = str(capture_file("torch-eager"))
    whole, _, _ = probe.decode(path)
    blocks = _blocks(probe, path, 2, 16)
    merged = [f for _, facts, _ in blocks for f in facts]
    (la, oa), (lb, ob) = _split(merged), _split(whole)
    assert [f[:6] for f in la] == [f[:6] for f in lb]      # the launches themselves agree
    # the second block turns into syncs the releases the whole decode hangs on its
    # channel's last launch, which came before the block
    extra = [f for f in oa if f not in ob]
    assert extra and all(f[1] == "sync" and '"RELEASE"' in f[2] for f in extra)
    # and the block says so: a sharded decode would decode it again with its history
    entries = [json.loads(f[2]) for f in extra]
    channels = {(e["pid"], e["hChannel"], e["channel"]) for e in entries}
    assert {("launch", c) for c in channels} <= {w for _, w in blocks[1][2]}
    real = probe.real_misses(path, [(lo, ps) for lo, _, ps in blocks])
    assert real[1] and not real[0]      # (the first block has all its history)
