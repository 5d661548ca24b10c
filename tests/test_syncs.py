"""Semaphore waits and launch-less releases (decoders/launch/syncs.py, docs/json.md syncs[]):
each wait is tied to the memory it lives in and to the release it waits for, and no launch
lists a wait as its own semaphore. Checked on real recordings against the capture itself:
the release a wait names is a semaphore method or QMD release at that address in that
SUBMISSION record, of the channel named, submitted before the wait."""
import pytest

from decoders.launch.syncs import acquire_satisfied, sync_operation
from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_file

WITH_WAITS = ("two-streams", "multi-gpu", "ddp-2rank")


def test_acquire_operations():
    assert acquire_satisfied("ACQUIRE", 5, 5) and not acquire_satisfied("ACQUIRE", 6, 5)
    assert acquire_satisfied("ACQ_STRICT_GEQ", 6, 5) and not acquire_satisfied("ACQ_GEQ", 4, 5)
    # circular: a payload that wrapped past 2^32 is still "after"
    assert acquire_satisfied("ACQ_CIRC_GEQ", 3, 0xFFFFFFF0)
    assert not acquire_satisfied("ACQ_CIRC_GEQ", 0xFFFFFFF0, 3)
    assert acquire_satisfied("ACQ_CIRC_GEQ", 7, 7)
    assert acquire_satisfied("ACQ_AND", 0b110, 0b010) and not acquire_satisfied("ACQ_NOR", 1, 1)
    assert acquire_satisfied("REDUCTION", 1, 1) is None
    assert sync_operation({"fields": {"OPERATION": "ACQ_CIRC_GEQ"}}) == "ACQ_CIRC_GEQ"
    assert sync_operation({"fields": {"SEMAPHORE_TYPE": "RELEASE_ONE_WORD_SEMAPHORE"}}) == \
        "RELEASE_ONE_WORD_SEMAPHORE"
    assert sync_operation({"source": "qmd.RELEASE0"}) is None


@pytest.fixture(scope="module", params=WITH_WAITS)
def model(request):
    return request.param, decode_capture(capture_file(request.param))


def test_every_wait_names_a_real_earlier_release(model):
    name, m = model
    syncs = list(m.syncs)
    waits = [s for s in syncs if s["waits"]]
    assert waits, name
    subs = {s["index"]: s for s in m.submissions}
    # every release address of each process: launch-less ones and the launches' own (a
    # release a later submission adds to its channel's last launch is listed there)
    released = {(s["pid"], s["address"]) for s in syncs if not s["waits"]}
    for launch in m.launches:
        sm = launch.summary
        for sem in sm["semaphores"]:
            released.add((sm["pid"], sem["address"]))
    for w in waits:
        assert w["operation"].startswith("ACQ") and w["source"] == "host.SEM_EXECUTE"
        assert w["resolved"] is not None, w          # the memory it lives in
        by = w["released_by"]
        assert by is not None, (name, w)             # (every wait in these captures)
        assert by["record_index"] <= w["record_index"]
        assert (w["pid"], w["address"]) in released, (name, w)
        rel = subs[by["record_index"]]
        assert rel["token"] == by["channel"] and rel["pid"] == w["pid"]
        assert acquire_satisfied(w["operation"], by["payload"], w["payload"])
    counts = m.stats()["syncs"]
    assert counts["waits"] == len(waits)
    assert counts["releases_without_launch"] == len(syncs) - len(waits)
    assert counts.get("waits_released_by_another_channel", 0) == \
        sum(1 for w in waits if w["released_by"]["channel"] != w["channel"])


def test_ddp_waits_on_both_ranks_and_gpus():
    m = decode_capture(capture_file("ddp-2rank"))
    by_pid = {}
    for s in m.syncs:
        if s["waits"]:
            by_pid.setdefault(s["pid"], set()).add(s["gpu"])
    assert len(by_pid) == 2 and sorted(g for gs in by_pid.values() for g in gs) == [0, 1]


@pytest.mark.parametrize("name", ["two-streams", "multi-gpu", "ddp-2rank", "torch-graph"])
def test_no_launch_holds_a_wait(name):
    m = decode_capture(capture_file(name))
    for launch in m.launches:
        for sem in launch.summary["semaphores"]:
            assert not (sync_operation(sem) or "").startswith("ACQ"), (name, sem)


def test_timeline_shows_each_wait_on_its_channel():
    """trace-decode timeline: each wait an instant on its channel's track (the track of the
    channel token the wait's SUBMISSION names), with the release it waits for."""
    from decoders.timeline import timeline
    from tests.test_timeline import validate_trace
    m = decode_capture(capture_file("ddp-2rank"))
    doc = timeline(m)
    assert validate_trace(doc) == []
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    waits = [e for e in doc["traceEvents"] if e.get("cat") == "sync"]
    assert len(waits) == m.stats()["syncs"]["waits"]
    token = {s["index"]: s["token"] for s in m.submissions}
    for e in waits:
        sub = {"token": token[e["args"]["record_index"]]}
        assert f"channel token {sub['token']:#x}" in names[(e["pid"], e["tid"])]
        assert e["args"]["released_by"]["record_index"] <= e["args"]["record_index"]


def test_selection_keeps_the_syncs_of_its_submissions():
    """--pid / --channel: syncs[] and stats.syncs count only the selected submissions'."""
    from decoders.select import select
    m = decode_capture(capture_file("ddp-2rank"))
    pids = sorted({s["pid"] for s in m.syncs})
    total = 0
    for pid in pids:
        sel = select(m, pid=pid)
        kept = {s["index"] for s in sel.submissions}
        assert sel.syncs and all(x["pid"] == pid and x["record_index"] in kept for x in sel.syncs)
        total += sel.stats()["syncs"]["waits"]
    assert total == m.stats()["syncs"]["waits"]


def test_ddp_copies_know_where_each_side_is():
    """copies[]: each rank's copy engine transfers, each side placed through the rank's own
    tree. A host-to-device copy writes vidmem of the GPU its channel runs on (a rank copies
    to its own GPU); the counts by direction are the list's."""
    from collections import Counter
    m = decode_capture(capture_file("ddp-2rank"))
    copies = list(m.copies)
    assert copies and Counter(x["direction"] for x in copies) == m.stats()["copies"]
    h2d = [x for x in copies if x["direction"] == "host to device"]
    assert len(h2d) > 100 and {x["pid"] for x in h2d} == {s["pid"] for s in m.submissions}
    for x in h2d:
        assert x["src_resolved"]["memory"] == "sysmem"
        assert x["dst_resolved"]["memory"] == "vidmem" and x["dst_on"] == x["gpu"]
    fills = [x for x in copies if x["direction"].startswith("fill")]
    assert fills and all(x["remap"] and x["src"] is None for x in fills)
    assert not any(x["direction"] == "between GPUs" for x in copies)


def test_peer_copy_two_gpus_one_process():
    """captures/peer-copy (two H200s, one process): each GPU's stream waits for the other's
    event and copies from it. Both GPUs reuse work-submit tokens (0xb on each: shim I21),
    and every kernel CUPTI saw is decoded; the peer copies are the copy engine transfers
    between GPUs, as many as CUPTI's PtoP memcpys; each GPU's wait for the other's event is
    a wait on another GPU, released by the other GPU's channel."""
    from tests.conftest import manifest
    m = decode_capture(capture_file("peer-copy"))
    truth = manifest("peer-copy")["ground_truth"]
    cupti_kernels = sum(k["count"] for k in truth["kernel_configs"])
    timed = [l.summary for l in m.launches if l.summary["kernel"] and
             "vectorized_elementwise_kernel" in l.summary["attribution"]["kernel"]["name"]]
    assert len(timed) == cupti_kernels and all(s["verified"] for s in timed)
    peer = truth["copies_memsets"]["gpu_memcpy:Memcpy PtoP (Device -> Device)"]
    between = [x for x in m.copies if x["direction"] == "between GPUs"]
    assert len(between) == peer and {(x["src_on"], x["dst_on"]) for x in between} == \
        {(0, 1), (1, 0)}
    assert all(x["bytes"] == 4 << 20 for x in between)        # 1 << 20 floats
    cross = [w for w in m.syncs if w["waits"] and w["released_by"] and
             w["released_by"]["gpu"] != w["gpu"]]
    assert len(cross) == m.stats()["syncs"]["waits_on_another_gpu"] == 6
    assert {(w["released_by"]["gpu"], w["gpu"]) for w in cross} == {(0, 1), (1, 0)}
    assert m.stats()["submissions_lost"] == 0


def test_reduction_releases_are_named_and_their_waits_counted_apart():
    """A QMD release with RELEASE_REDUCTION_ENABLE is an atomic on the word (a CUDA graph's
    RED_ADD of 1), not a write of its payload: the summary says so from the QMD's own
    fields, and a wait whose address last saw such a release is neither "released by" it
    (the value it leaves is not in the capture) nor "no release before" (captures/
    graph-replay: 2 waits follow scale_add's RED_ADD releases)."""
    m = decode_capture(capture_file("graph-replay"))
    reductions = set()
    for launch in m.launches:
        for sem in launch.summary["semaphores"]:
            if not sem["source"].startswith("qmd.RELEASE"):
                assert "reduction" not in sem
                continue
            f = sem["fields"]
            enabled = next(v for n, v in f.items() if "REDUCTION_ENABLE" in n)
            op = next(v for n, v in f.items() if "REDUCTION_OP" in n)
            assert sem.get("reduction") == (op if enabled == "TRUE" else None)
            if enabled == "TRUE":
                reductions.add(sem["address"])
    assert reductions
    waits = [s for s in m.syncs if s["waits"]]
    after = [s for s in waits if (s.get("released_by") or {}).get("reduction")]
    assert after and all(s["address"] in reductions for s in after)
    stats = m.stats()["syncs"]
    assert stats["waits_after_reduction"] == len(after)
    assert stats.get("waits_no_release_before", 0) == \
        sum(1 for s in waits if not s.get("released_by"))


def test_a_fill_reads_no_source_whatever_a_copy_before_left():
    """A remapped transfer whose SET_REMAP_COMPONENTS writes constants only (CONST_A: the
    driver's fills; clc8b5.h) reads no source, so its OFFSET_IN registers, left by a copy
    before it on the same subchannel, are not its source. cdp: host-to-device copies
    (records 649-747) then the fills at records 1123-1145 on the same channel: each fill
    has no source and counts as a fill; before, each took the copy's source and counted as
    a host-to-device copy."""
    from collections import Counter
    m = decode_capture(capture_file("cdp"))
    copies = list(m.copies)
    assert Counter(x["direction"] for x in copies) == m.stats()["copies"]
    fills = [x for x in copies if x["remap"]]
    assert fills and all(x["src"] is None and x["direction"].startswith("fill") and
                         x["why"] == "a fill of remap constants" for x in fills)
    plain = [x for x in copies if not x["remap"] and x["src"]]
    after = [x for x in fills if any(p["channel"] == x["channel"] and
                                     p["record_index"] < x["record_index"] for p in plain)]
    assert len(after) >= 10 and {x["record_index"] for x in after} >= {1123, 1145}
