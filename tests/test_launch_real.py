"""Truth tests on real H100 captures: decoded launches against each manifest's ground truth.

For every captures/<name>/manifest.json with a `ground_truth`, the whole capture is decoded
(decode_submissions over every SUBMISSION, every channel), and the kernel launch(es) whose
submission rang between the MARK BEGIN/END records (or, in a capture without marks, every
kernel launch) must show the manifest's grid, block, cluster, dynamic shared memory and
argument bytes (STYLE.md 19: never the decoder's own earlier output).

The measured facts of h100-measured.md section 1 are checked on the marked submission too.
Where the real capture differs from that write-up it is said inline (captures/builtin-vadd):
  - the 4-byte semaphore seed (step 6) is uploaded BEFORE the kernel QMD's SEND_PCAS_A,
    not after it;
  - the first QMD ("the previous QMD") is a GRID_NULL QMD (no program, grid 0) with
    DEPENDENCE_COUNTER 2 whose DEPENDENT_QMD0_POINTER (ACTION QMD_SCHEDULE) names the next
    kernel-QMD slot; the kernel QMD's dependent action on it is QMD_DECREMENT_DEPENDENCE;
  - SHARED_MEMORY_SIZE is static + dynamic + 1 KiB (launch-shapes tl_dynsmem: 256 B static);
  - an inline transfer's data may come from CALL_MME_MACRO instead of LOAD_INLINE_DATA
    (torch-small record 816): LaunchDecoder.unreconstructed, not a problem.
Captures without marks (runtime-vadd, launch-loop-10k) check every kernel launch against
the one expectation; torch-small's manifest has no launch shape (skipped, said inline).
"""
import glob
import json
import os
import re
import struct

import pytest

from decoders.fields import align_up

from decoders.capture.reader import CaptureReader, open_capture
from decoders.submissions import decode_submissions
from decoders.methods import method_table
from decoders.pushbuf import IMMD, INC, NON_INC, ONE_INC, StreamDecoder

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MANIFESTS = sorted(glob.glob(os.path.join(ROOT, "captures", "*", "manifest.json")))
TRUTH = [m for m in MANIFESTS if json.load(open(m)).get("ground_truth")]
MARK_BEGIN, MARK_END = 1, 2
# h100-measured.md 1: SHARED_MEMORY_SIZE shows the requested dynamic size + 1 KiB.
# captures/builtin-vadd (0 B requested) shows 0x400. captures/launch-shapes shows static +
# dynamic + 1 KiB: tl_dynsmem with 1 KiB / 100 KiB dynamic shows 0x900 / 0x19500.
SMEM_DRIVER_RESERVED = 1024
# Static shared memory per kernel, which no manifest records: kernels/shapes.cu line 53,
# `__shared__ unsigned tl_static[64]` in tl_dynsmem.
STATIC_SMEM = {"tl_dynsmem": 256}


def _capture_file(manifest):
    d = os.path.dirname(manifest)
    for name in ("capture.tlc.gz", "capture.tlc.zst", "capture.tlc"):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


class Decoded:
    """One pass over a capture (every SUBMISSION through decode_submissions)."""

    def __init__(self, path):
        stream = open_capture(path)
        try:
            reader = CaptureReader(stream, name=path)
            self.marks = []
            self.subs = {}      # record index -> body
            self.pids = {}
            order = []

            def submissions():
                for rec in reader.records():
                    if rec.type == "MARK":
                        self.marks.append((rec.index, rec.pid, rec.tid, rec.body.kind, rec.body.id))
                    elif rec.type == "SUBMISSION":
                        self.subs[rec.index] = rec.body
                        self.pids[rec.index] = rec.pid
                        order.append(rec.index)
                        yield rec.index, rec.body, rec.pid
            self.result = decode_submissions(submissions(), gpu="hopper")
            self.reader_problems = reader.problems
            self.order = order
        finally:
            stream.close()

    def windows(self):
        """[(begin record, end record, pid, tid, mark id)] of each BEGIN/END pair."""
        opened, out = {}, []
        for index, pid, tid, kind, mid in self.marks:
            if kind == MARK_BEGIN:
                opened[(pid, tid, mid)] = index
            elif kind == MARK_END and (pid, tid, mid) in opened:
                out.append((opened.pop((pid, tid, mid)), index, pid, tid, mid))
        return out

    def window_launches(self):
        """{mark id: [Launch]} (every QMD) of each window."""
        return {mid: [l for l in self.result.launches if lo < l.record_index < hi and l.pid == pid]
                for lo, hi, pid, _, mid in self.windows()}

    def window_records(self):
        """{mark id: [submission record indexes]} of each window."""
        return {mid: [i for i in self.order if lo < i < hi and self.pids[i] == pid]
                for lo, hi, pid, _, mid in self.windows()}


_CACHE = {}


def decoded(manifest):
    if manifest not in _CACHE:
        _CACHE[manifest] = Decoded(_capture_file(manifest))
    return _CACHE[manifest]


def truth(manifest):
    return json.load(open(manifest))["ground_truth"]


def expected_launches(gt):
    """The manifest's ground truth as a list of expected kernel launches, each a dict:
    id (the MARK id that brackets it, None for a capture without marks), grid, block,
    cluster, smem (dynamic bytes, None when the manifest does not say), count, params
    (bytes, None when the manifest has neither packed bytes nor names + param info)."""
    if isinstance(gt.get("launches"), list) and gt["launches"] and "id" not in gt["launches"][0]:
        # the runtime-API corpus programs (kernels/corpus_*.cu) place no marks: their launches
        # are matched through the API_ENTER records instead (tests/test_attribution.py)
        return []
    if isinstance(gt.get("launches"), list):          # captures/launch-shapes
        return [{"id": l["id"], "kernel": l.get("kernel"), "grid": l["grid"], "block": l["block"],
                 "cluster": l["cluster"],
                 "smem": l.get("shared_mem_dynamic"), "count": 1,
                 **({"static": l["shared_mem_static"]} if "shared_mem_static" in l else {}),
                 "params": bytes.fromhex(l["param_bytes"]) if "param_bytes" in l else None}
                for l in gt["launches"]]
    if "grid" not in gt or "block" not in gt:   # torch-small: output checks only; triton-descriptors: its grid alone (test_tma.py)
        return []
    # launch-loop-10k: `launches` timed launches after `warmup_launches` of the same kernel.
    count = gt.get("launches", 1) + gt.get("warmup_launches", 0)
    return [{"id": None, "kernel": gt.get("kernel"), "grid": gt["grid"], "block": gt["block"], "cluster": gt.get("cluster"),
             "smem": gt.get("shared_mem_dynamic"), "count": count,
             "params": expected_params(gt) if "param_info" in gt else None}]


def expected_params(gt):
    """The argument block as the kernel sees it: each value packed at its
    cuFuncGetParamInfo offset/size (pointers as u64, 4-byte ints as i32)."""
    names = [a.strip().split()[-1].lstrip("*&") for a in
             re.search(r"\((.*)\)", gt["signature"]).group(1).split(",")]
    info = sorted(gt["param_info"], key=lambda p: p["index"])
    size = max(p["offset"] + p["size"] for p in info)
    out = bytearray(size)
    for p in info:
        value = gt["args"][names[p["index"]]]
        fmt = {8: "<Q" if value >= 0 else "<q", 4: "<i" if value < 0x80000000 else "<I",
               2: "<h", 1: "<b"}[p["size"]]
        struct.pack_into(fmt, out, p["offset"], value)
    return bytes(out)


def kernels_by_expectation(d, gt):
    """[(expected launch, [decoded kernel Launch])]: by MARK id when the capture has
    marks (a single-launch manifest takes every window), else every kernel launch."""
    exp = expected_launches(gt)
    if not exp:
        pytest.skip("the manifest's ground truth names no launch shape")
    wins = d.window_launches()
    if not wins:
        assert len(exp) == 1
        return [(exp[0], [l for l in d.result.launches if l.summary["kernel"]])]
    out = []
    for e in exp:
        mine = [l for mid, ls in sorted(wins.items()) if e["id"] is None or mid == e["id"]
                for l in ls if l.summary["kernel"]]
        out.append((e, mine))
    return out


def i2m_uploads(bodies):
    """(dst, size, first word) of every inline-to-memory upload in the given submission
    bodies, read from the method packets directly (not from decoders.launch): the
    OFFSET_OUT_UPPER/OFFSET_OUT and LINE_LENGTH_IN x LINE_COUNT in force at each LAUNCH_DMA
    (compute class 0x1B0), the first LOAD_INLINE_DATA word after it. Also the ordered
    list of (method, value) of the compute subchannel for order checks."""
    dec = StreamDecoder(gpu="hopper")
    regs, out, calls = {}, [], []
    for body in bodies:
        for seg in body.segments:
            for pkt in dec.feed(bytes(seg.data), seg.va):
                if pkt.form not in (INC, NON_INC, ONE_INC, IMMD) or pkt.subchannel != 1:
                    continue
                for method, value in pkt.calls():
                    calls.append((method, value))
                    if method in (0x180, 0x184, 0x188, 0x18C):
                        regs[method] = value
                    elif method == 0x1B0:
                        out.append([(regs[0x188] << 32) | regs[0x18C], regs[0x180] * regs[0x184], None])
                    elif method == 0x1B4 and out and out[-1][2] is None:
                        out[-1][2] = value
    return [tuple(u) for u in out], calls


needs_capture = pytest.mark.skipif(not TRUTH, reason="no captures/*/manifest.json with ground_truth")
by_capture = pytest.mark.parametrize("manifest", TRUTH,
                                     ids=lambda m: os.path.basename(os.path.dirname(m)))


@needs_capture
@by_capture
def test_capture_decodes_without_problems(manifest):
    d = decoded(manifest)
    assert d.reader_problems == []
    assert [str(p) for p in d.result.problems] == []


@needs_capture
@by_capture
def test_launches_match_ground_truth(manifest):
    gt = truth(manifest)
    d = decoded(manifest)
    for e, kernels in kernels_by_expectation(d, gt):
        assert len(kernels) == e["count"], e
        for launch in kernels:
            s = launch.summary
            assert (s["grid"], s["block"], s["cluster"]) == (e["grid"], e["block"], e["cluster"]), e
            if e["smem"] is not None:
                # docs/shared-memory.md: the reserve plus static + dynamic in 128 B granules
                want = SMEM_DRIVER_RESERVED + align_up(
                    e["smem"] + e.get("static", STATIC_SMEM.get(e["kernel"], 0)), 128)
                assert s["shared_memory_bytes"] == want, e
                assert s["qmd_fields"]["SHARED_MEMORY_SIZE"] == want
            assert s["params"]["offset"] == 0x210 and s["params"]["arch"] == gt.get("arch", "sm_90")
            if e["params"] is not None:
                assert bytes.fromhex(s["params"]["hex"]) == e["params"], e
                assert s["params"]["uploaded"] is True
            # cbank0 driver constants: blockDim at +0x0, gridDim at +0xC (h100-measured.md 1).
            drv = s["cbank0_driver"]["fields"]
            assert [drv["blockDim.x"], drv["blockDim.y"], drv["blockDim.z"]] == e["block"]
            assert [drv["gridDim.x"], drv["gridDim.y"], drv["gridDim.z"]] == e["grid"], e


@needs_capture
@by_capture
def test_program_and_cbank0_addresses(manifest):
    gt = truth(manifest)
    d = decoded(manifest)
    if not d.windows():
        pytest.skip("no MARK records: no submission is known to hold one given launch's uploads")
    wrecs = d.window_records()
    for e, kernels in kernels_by_expectation(d, gt):
        recs = [i for mid, ids in wrecs.items() if e["id"] is None or mid == e["id"] for i in ids]
        uploads, _ = i2m_uploads(d.subs[i] for i in recs)
        dsts = {dst: size for dst, size, _ in uploads}
        for launch in kernels:
            s = launch.summary
            assert s["program_address"] != 0
            cb0 = next(cb for cb in s["constant_buffers"] if cb["index"] == 0)
            assert cb0["valid"] and cb0["address"] != 0
            assert dsts.get(cb0["address"]) == 0x210, e           # the driver-constant upload
            if e["params"] is not None:                            # the argument upload
                assert dsts.get(cb0["address"] + 0x210) == len(e["params"]), e


@needs_capture
@by_capture
def test_h100_measured_launch_shape(manifest):
    """h100-measured.md 1 on every marked submission: one GP entry per launch, two QMDs per
    launch (both V04_00, both by SEND_PCAS_A + SEND_SIGNALING_PCAS2_B = 0xA), the kernel
    QMD's DEPENDENT_QMD0_POINTER at the first one, its RELEASE_SEMAPHORE0 at the 4-byte
    I2M seed (value 5), then SET_REPORT_SEMAPHORE_A..D with D = 4."""
    d = decoded(manifest)
    if not d.windows():
        pytest.skip("capture has no MARK records: no single launch submission to check")
    wrecs, wl = d.window_records(), d.window_launches()
    for mid, launches in wl.items():
        assert len(launches) == 2, mid
        first, kernel = launches[0].summary, launches[1].summary
        assert not first["kernel"] and kernel["kernel"]
        assert first["qmd_version"] == kernel["qmd_version"] == "V04_00"
        assert first["source"] == kernel["source"] == "SEND_PCAS_A"
        # Measured on these captures: the first QMD is GRID_NULL, no program.
        assert first["qmd_type"] == "GRID_NULL" and first["program_address"] == 0
        f = kernel["qmd_fields"]
        assert f["DEPENDENT_QMD_ENABLE(0)"] == 1
        assert f["DEPENDENT_QMD0_POINTER"] << 8 == first["qmd_address"]
        assert f["DEPENDENT_QMD_ACTION(0)"] == 4                   # QMD_DECREMENT_DEPENDENCE
        assert first["qmd_fields"]["DEPENDENCE_COUNTER"] == 2
        assert first["qmd_fields"]["DEPENDENT_QMD_ACTION(0)"] == 1  # QMD_SCHEDULE
        bodies = [d.subs[i] for i in wrecs[mid]]
        entries = [e for b in bodies for e in b.entries]
        assert len(entries) == 1, mid
        uploads, calls = i2m_uploads(bodies)
        assert [size for _, size, _ in uploads] == [0x210, kernel["params"]["size"], 0x180, 0x180, 4]
        assert [dst for dst, _, _ in uploads][2:4] == [first["qmd_address"], kernel["qmd_address"]]
        pcas = [(m, v) for m, v in calls if m in (0x2B4, 0x2C0)]
        assert pcas == [(0x2B4, first["qmd_address"] >> 8), (0x2C0, 0xA),
                        (0x2B4, kernel["qmd_address"] >> 8), (0x2C0, 0xA)]
        # Semaphore: QMD release 0 at the seeded word; the seed (5 on builtin-vadd) is
        # uploaded before the kernel QMD's SEND_PCAS_A (h100-measured.md lists it after).
        sem_dst, _, seed = uploads[4]
        rel = [x for x in kernel["semaphores"] if x["source"] == "qmd.RELEASE0"]
        assert len(rel) == 1 and rel[0]["address"] == sem_dst
        assert rel[0]["payload"] == seed + 1
        order = [m for m, _ in calls if m in (0x1B0, 0x2B4)]
        assert order == [0x1B0, 0x1B0, 0x1B0, 0x2B4, 0x1B0, 0x1B0, 0x2B4]
        assert [v for m, v in calls if m == 0x1B0C] == [4]
        # Reports rung in later submissions of the channel attach to its last launch too.
        payload = next(v for m, v in calls if m == 0x1B08)
        reports = [x for x in kernel["semaphores"] if x["source"] == "SET_REPORT_SEMAPHORE"]
        assert reports[0]["payload"] == payload
        assert [m for m, _ in calls[-4:]] == [0x1B00, 0x1B04, 0x1B08, 0x1B0C]


@needs_capture
@by_capture
def test_every_method_in_capture_is_in_a_table(manifest):
    """STYLE.md 9: every class/method pair decoded from every submission on every channel
    (compute and copy channels, host methods included) is in a method table."""
    d = decoded(manifest)
    streams = {}
    seen, unknown = set(), set()
    for index in d.order:
        body = d.subs[index]
        key = (d.pids[index], body.hClient, body.hChannel, body.token)
        dec = streams.get(key)
        if dec is None:
            dec = streams[key] = StreamDecoder(gpu="hopper", host_class=body.hClass)
        for seg in body.segments:
            for pkt in dec.feed(bytes(seg.data), seg.va):
                if pkt.form not in (INC, NON_INC, ONE_INC, IMMD):
                    continue
                for method in {m for m, _ in pkt.calls()}:
                    cls = pkt.class_for(method)
                    seen.add((cls, method))
                    table = method_table(cls) if cls is not None else None
                    if table is None or table.get(method) is None:
                        unknown.add((cls, method, body.token))
    assert seen
    # a capture window keeps only the window's submissions (and graph setup): the copy
    # engine's start-up uploads fall outside it
    windowed = json.load(open(manifest)).get("capture_range")
    engines = {0xC86F, 0xCBC0} if windowed else {0xC86F, 0xCBC0, 0xC8B5}
    assert {c for c, _ in seen} >= engines
    assert sorted(unknown) == []
