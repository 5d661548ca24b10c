"""The shim, loaded into small C programs that drive fake device files (no GPU).

TRACE_LAUNCH_DEVDIR is the test-only switch: files under it count as NVIDIA devices, and
their ioctls (which fail with ENOTTY on plain files) are tracked as if RM had accepted
them. tests/c/fakedev.c exercises ioctls, mmaps, threads, fork and an fd-stealing storm;
tests/c/simdev.c is a simulated submission path (synthetic) in libcuda's write order.
Every record field is checked against what the program says it did.
"""
import json
import struct
import os
import shutil
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from decoders.capture import format as F
from decoders.capture.reader import read_capture
from decoders.capture.writer import append_end, create_capture

ROOT = Path(__file__).resolve().parent.parent
CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the shim and the test programs")


def _build(out, src, *extra):
    subprocess.run([CC, "-O1", "-o", str(out), str(src), *extra], check=True)
    return out


@pytest.fixture(scope="session")
def shim(tmp_path_factory):
    """The shim built from shim/tracelaunch.c exactly as setup.py builds it."""
    d = tmp_path_factory.mktemp("shim")
    so = d / "libtracelaunch.so"
    flags = (ROOT / "shim/cflags").read_text().split()
    subprocess.run([CC, *flags, "-fPIC", "-shared", "-I", str(ROOT / "shim"), "-o", str(so),
                    str(ROOT / "shim/tracelaunch.c"), "-ldl", "-lpthread"], check=True)
    return so


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bin")
    return {name: _build(d / name, ROOT / f"tests/c/{name}.c", "-lpthread")
            for name in ("fakedev", "simdev", "dupdev", "vforkdev")}


def _devdir(tmp_path, names=("nvidiactl", "nvidia0", "nvidia-uvm"), size=2 << 20):
    dev = tmp_path / "dev"
    dev.mkdir()
    for n in names:
        with open(dev / n, "wb") as f:
            f.truncate(size)
    return dev


def _run(shim, argv, cap, dev, mode="full", extra_env=None):
    create_capture(cap, {"argv": [str(a) for a in argv], "synthetic": True})
    env = dict(os.environ, LD_PRELOAD=str(shim), TRACE_LAUNCH_CAPTURE=str(cap),
               TRACE_LAUNCH_DEVDIR=str(dev), TRACE_LAUNCH_MODE=mode, **(extra_env or {}))
    proc = subprocess.run([str(a) for a in argv], env=env, capture_output=True, text=True,
                          timeout=120)
    append_end(cap, proc.returncode)
    reader, recs = read_capture(cap)
    assert reader.problems == []
    return proc, recs


@pytest.fixture(scope="module")
def fakedev_run(shim, programs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fakedev")
    dev = _devdir(tmp)
    truth_path = tmp / "truth.json"
    proc, recs = _run(shim, [programs["fakedev"], dev, truth_path], tmp / "c.tlc", dev)
    return proc, recs, json.loads(truth_path.read_text()), dev, tmp / "c.tlc"


def test_capture_file_is_private(fakedev_run):
    *_, cap = fakedev_run
    assert stat.S_IMODE(os.stat(cap).st_mode) == 0o600


def test_program_exit_status_and_output_unchanged(fakedev_run):
    proc, _, truth, _, _ = fakedev_run
    assert proc.returncode == 3            # fakedev's own exit status
    assert proc.stdout == ""               # nothing written into the program's stdout
    assert truth["child_status"] == 7


def test_opens_record_device_paths_and_fds(fakedev_run):
    _, recs, truth, dev, _ = fakedev_run
    opens = {r.body.fd: r.body.path.decode() for r in recs
             if r.type == "OPEN" and r.pid == truth["pid"]}
    assert opens[truth["ctl"]] == f"{dev}/nvidiactl"
    assert opens[truth["gpu"]] == f"{dev}/nvidia0"
    assert opens[truth["uvm"]] == f"{dev}/nvidia-uvm"
    closes = {r.body.fd for r in recs if r.type == "CLOSE" and r.pid == truth["pid"]}
    assert {truth["ctl"], truth["gpu"], truth["uvm"]} <= closes


def _ioctls(recs, pid):
    return [r for r in recs if r.type == "IOCTL" and r.pid == pid]


def test_rm_control_params_buffer_copied(fakedev_run):
    _, recs, truth, dev, _ = fakedev_run
    first = _ioctls(recs, truth["pid"])[0]
    b = first.body
    assert b.fd == truth["ctl"] and b.request == 0xC020462A and b.arg_size == 32
    assert b.path.decode() == f"{dev}/nvidiactl"
    assert b.ret == -1 and b.err == 25       # ENOTTY: a plain file, not a device
    assert b.flags & F.TL_IF_ARG_BEFORE and b.flags & F.TL_IF_ARG_AFTER
    (buf,) = b.buffers
    assert buf.role == 1 and buf.size == 16 and buf.addr == truth["control_params_addr"]
    assert bytes(buf.before) == bytes.fromhex("11111111222222223333333344444444")
    assert buf.flags & F.TL_BF_BEFORE and buf.flags & F.TL_BF_AFTER
    assert first.t_end >= first.t_start > 0 and first.complete


def test_bad_pointers_are_recorded_not_followed(fakedev_run):
    _, recs, truth, _, _ = fakedev_run
    ctl = [r for r in _ioctls(recs, truth["pid"]) if r.body.request == 0xC020462A]
    bad_params, bad_arg = ctl[1].body, ctl[2].body
    (buf,) = bad_params.buffers
    assert buf.addr == 0xDEAD0000 and buf.size == 64 and buf.flags == 0   # nothing copied
    assert bad_arg.arg == 0x10 and bad_arg.flags & (F.TL_IF_ARG_BEFORE | F.TL_IF_ARG_AFTER) == 0
    assert bad_arg.ret == truth["bad_arg_ret"] and bad_arg.err == truth["bad_arg_errno"]


def _controls(recs, pid, cmd):
    out = []
    for r in _ioctls(recs, pid):
        if r.body.request == 0xC020462A and r.body.flags & F.TL_IF_ARG_BEFORE:
            if struct.unpack_from("<I", bytes(r.body.before), 8)[0] == cmd:
                out.append(r.body)
    return out


def test_params_pointers_followed_before_and_after(fakedev_run):
    """GR_GET_INFO's grInfoList: count 3 x 8 B copied before and after the call (issue 18)."""
    _, recs, truth, _, _ = fakedev_run
    ok, bad, null, huge = _controls(recs, truth["pid"], 0x20801201)
    assert ok.flags & F.TL_IF_PTRS_FOLLOWED
    main, ptr = ok.buffers
    assert main.role == F.TL_BUF_BY_NAME["RM_CONTROL_PARAMS"] and main.size == 32
    assert ptr.role == F.TL_BUF_BY_NAME["RM_PARAMS_POINTER"] and ptr.field == 8
    assert ptr.addr == truth["gr_list_addr"] and ptr.size == 24
    assert ptr.flags & F.TL_BF_BEFORE and ptr.flags & F.TL_BF_AFTER
    assert struct.unpack("<6I", bytes(ptr.before)) == (0x0C, 0, 0x14, 0, 0x1D, 0)
    # bad pointer: a buffer whose copies failed, the program unharmed
    (_, bptr) = bad.buffers
    assert bptr.addr == 0xDEAD1000 and bptr.size == 32 and bptr.flags == 0
    # NULL pointer: looked at (the flag), nothing to copy
    assert null.flags & F.TL_IF_PTRS_FOLLOWED and len(null.buffers) == 1
    # a count past the cap is cut to TL_PTR_MAX and says so
    (_, hptr) = huge.buffers
    assert hptr.size == F.TL_PTR_MAX and hptr.flags & F.TL_BF_TRUNCATED


def test_params_string_pointers_followed(fakedev_run):
    _, recs, truth, _, _ = fakedev_run
    (bv,) = _controls(recs, truth["pid"], 0x00000101)
    ptrs = {b.field: bytes(b.before).split(b"\0")[0] for b in bv.buffers if b.role == 5}
    assert ptrs == {8: b"580.159.04", 16: b"580.159.04", 24: b"rel/gpu_drv"}


def test_followed_pointers_decode_end_to_end(fakedev_run):
    """The same capture through decode_capture: the pointees render under
    ioctl.params.<field> and the stats count them by outcome (docs/json.md)."""
    from decoders.session import decode_capture
    from tracer.report import coverage_stats
    *_, cap = fakedev_run
    pointers = coverage_stats(decode_capture(str(cap)))["params_pointers"]
    assert pointers["followed"] >= 4          # the good grInfoList + three version strings
    assert pointers["unreadable"] >= 1 and pointers["null"] == 1
    assert "not_captured" not in pointers


def test_uvm_request_sized_from_table_not_ioc_bits(fakedev_run):
    _, recs, truth, _, _ = fakedev_run
    (uvm,) = [r.body for r in _ioctls(recs, truth["pid"]) if r.body.request == 0x30000001]
    assert uvm.arg_size == 16                # UVM_INITIALIZE_PARAMS, not _IOC_SIZE = 12 KiB
    assert bytes(uvm.before)[:8] == (0x1234).to_bytes(8, "little")


def test_mmap_and_munmap(fakedev_run):
    _, recs, truth, dev, _ = fakedev_run
    (m,) = [r.body for r in recs if r.type == "MMAP" and r.pid == truth["pid"]]
    assert m.addr == truth["mmap_addr"] and m.length == 8192 and m.fd == truth["gpu"]
    assert m.prot == 3 and m.path.decode() == f"{dev}/nvidia0"
    (u,) = [r.body for r in recs if r.type == "MUNMAP" and r.pid == truth["pid"]]
    assert u.addr == truth["mmap_addr"] and u.length == 8192 and u.ret == 0


def test_threads_all_recorded(fakedev_run):
    _, recs, truth, _, _ = fakedev_run
    frees = [r for r in _ioctls(recs, truth["pid"]) if r.body.request == 0xC0104629
             and bytes(r.body.before)[:4] == (0xA).to_bytes(4, "little")]
    assert len(frees) == 100                  # 4 threads x 25 calls, none lost
    assert len({r.tid for r in frees}) == 4
    seqs = [r.seq for r in recs if r.pid == truth["pid"]]
    assert len(seqs) == len(set(seqs))        # per-process sequence numbers never repeat


def test_fork_child_writes_its_own_records(fakedev_run):
    _, recs, truth, dev, _ = fakedev_run
    child = truth["child_pid"]
    starts = {r.pid: r.body for r in recs if r.type == "PROCESS_START"}
    assert starts[child].how == 2 and starts[child].ppid == truth["pid"]
    (io,) = _ioctls(recs, child)
    assert io.body.request == 0xC0104629 and bytes(io.body.before)[:12] == bytes.fromhex("010000000200000003000000")
    (ex,) = [r for r in recs if r.type == "PROCESS_EXIT" and r.pid == child]
    assert ex.body.status == 7 and ex.complete


def test_program_cannot_take_the_capture_fd(fakedev_run):
    """After the program dup2'd and closed every fd from 900 to 1099, recording goes on."""
    _, recs, truth, _, _ = fakedev_run
    last = _ioctls(recs, truth["pid"])[-1].body
    assert bytes(last.before)[:12] == bytes.fromhex("090000000900000009000000")


def test_capture_fd_is_high_and_cloexec(shim, tmp_path):
    dev = _devdir(tmp_path)
    script = ("import os\n"
              "for fd in sorted(int(x) for x in os.listdir('/proc/self/fd')):\n"
              "    try:\n"
              "        flags = open(f'/proc/self/fdinfo/{fd}').read().split('flags:')[1].split()[0]\n"
              "        print(fd, os.readlink(f'/proc/self/fd/{fd}'), int(flags, 8) & 0o2000000)\n"
              "    except OSError:\n"
              "        pass  # the listing's own directory fd, closed by now\n")
    proc, _ = _run(shim, [sys.executable, "-c", script], tmp_path / "c.tlc", dev)
    ours = [line for line in proc.stdout.splitlines() if line.split()[1].endswith("c.tlc")]
    assert len(ours) == 1
    fd, _, cloexec = ours[0].split()
    assert int(fd) >= 1000 and int(cloexec) != 0


# ---- the doorbell trap on the simulated device ------------------------------------------

@pytest.fixture(scope="module")
def simdev_run(shim, programs, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("simdev")
    dev = _devdir(tmp)
    truth_path = tmp / "truth.json"
    proc, recs = _run(shim, [programs["simdev"], dev, truth_path, 4, 200], tmp / "c.tlc", dev)
    assert proc.returncode == 0, proc.stderr
    truth = json.loads(truth_path.read_text())
    truth["submissions"] = [s for s in truth["submissions"] if s["token"]]
    return recs, truth


def test_every_submission_captured_exactly(simdev_run):
    _check_exact(*simdev_run)


def test_streaming_load_copy_exact(shim, programs, tmp_path):
    """TRACE_LAUNCH_COPY=stream (streaming loads, for write-combined pushbuffers) copies
    every segment byte for byte, and puts back the program's xmm0 (I16)."""
    recs, truth = _small_simdev(shim, programs, tmp_path, {"TRACE_LAUNCH_COPY": "stream"})
    _check_registers(truth)
    truth["submissions"] = [s for s in truth["submissions"] if s["token"]]
    _check_exact(recs, truth)


def _check_exact(recs, truth):
    subs = [r.body for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_CHANNEL_KNOWN]
    assert len(subs) == len(truth["submissions"])
    by_token = {}
    for s in subs:
        by_token.setdefault(s.token, []).append(s)
    want_by_token = {}
    for w in truth["submissions"]:
        want_by_token.setdefault(w["token"], []).append(w)
    assert set(by_token) == set(want_by_token)
    for token, want in want_by_token.items():
        got = by_token[token]                 # per channel, in doorbell order
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert (g.gp_put_prev, g.gp_put, g.lost) == (w["put_prev"], w["put"], 0)
            assert list(g.entries) == [w["entry"]]
            (seg,) = g.segments
            assert seg.va == w["va"] and seg.flags == F.TL_SF_COPIED
            assert bytes(seg.data) == bytes.fromhex(w["hex"])


def test_ring_wrap_counted_and_nothing_lost(simdev_run):
    recs, truth = simdev_run
    ch0 = [r.body for r in recs if r.type == "SUBMISSION" and r.body.token == 0xA]
    assert len(ch0) == 42 + 32 and all(s.gp_entries == 16 for s in ch0)
    wraps = [s for s in ch0 if s.gp_put < s.gp_put_prev]
    assert len(wraps) == 4                     # 74 submissions around a 16-entry ring
    advance = sum((s.gp_put - s.gp_put_prev) % s.gp_entries for s in ch0)
    assert advance == len(ch0) and sum(s.lost for s in ch0) == 0


def test_concurrent_threads(simdev_run):
    recs, truth = simdev_run
    subs = [r for r in recs if r.type == "SUBMISSION" and 0x10012 <= r.body.token < 0x10016]
    assert Counter(r.body.token for r in subs) == {0x10012 + t: 200 for t in range(4)}
    assert len({r.tid for r in subs}) == 4


def test_unknown_encoding_takes_the_fallback(simdev_run):
    recs, truth = simdev_run
    fb = [r.body for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_FALLBACK]
    (want,) = [w for w in truth["submissions"] if w["fallback"]]
    assert len(fb) == 1 and fb[0].token == want["token"]
    assert bytes(fb[0].segments[0].data) == bytes.fromhex(want["hex"])
    (stats,) = [r.body for r in recs if r.type == "STATS"]
    counters = dict(zip(F.TL_STATS_NAMES, stats.counters))
    assert counters["fallbacks"] == 1
    assert counters["doorbells"] == len(truth["submissions"]) + 1   # + the unknown token


def test_unknown_token_recorded(simdev_run):
    recs, _ = simdev_run
    unknown = [r.body for r in recs if r.type == "SUBMISSION" and r.body.token == 0xDEAD]
    assert len(unknown) == 1 and unknown[0].flags & F.TL_SUB_CHANNEL_KNOWN == 0


def test_loads_and_own_signal_handler_still_work(simdev_run):
    _, truth = simdev_run
    assert truth["timer_read"] == truth["timer_written"]   # +0x80 read through the trap page
    assert truth["own_handler_ran"] == 1                   # its SIGSEGV reached its handler


def _counters(recs):
    (stats,) = [r.body for r in recs if r.type == "STATS"]
    return dict(zip(F.TL_STATS_NAMES, stats.counters))


def _site_notes(recs, kind=None):
    """{rip: what} from the shim's '<kind> store site 0x<rip>: <what>; code ...' NOTEs."""
    out = {}
    for r in recs:
        if r.type == "NOTE":
            text = bytes(r.body.text).decode()
            k, sep, rest = text.partition(" store site ")
            if sep and k in ("doorbell", "GP_PUT") and kind in (None, k):
                rip, what = rest.split(";")[0].split(": ", 1)
                out[int(rip, 16)] = what
    return out


def test_libcuda_shaped_sites_are_patched_and_hooked(simdev_run):
    """simdev's two stores shaped like libcuda's (mov %ecx,(%rax); jmp; padding) are patched
    at their first fault; every later doorbell from them comes through the stub."""
    recs, truth = simdev_run
    notes = _site_notes(recs, "doorbell")
    sites = [int(x) for x in truth["sites"]]
    assert all(notes[s] == "patched" for s in sites)
    assert [w for rip, w in notes.items() if rip not in sites]   # the C stores: refused, named
    assert all(w != "patched" for rip, w in notes.items() if rip not in sites)
    c = _counters(recs)
    assert c["sites_patched"] == 4                # + the GP_PUT site and the GP entry writer
    assert c["sites_refused"] == len(_site_notes(recs)) - 3
    hooked = [r.body for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_HOOKED]
    assert len(hooked) == c["doorbells_hooked"]
    from_sites = 4 * 200 + 3                  # the worker threads and the register check
    assert len(hooked) <= from_sites - 2 and {s.rip for s in hooked} == set(sites)
    # The first store at each site faults. So do the other threads' stores while the patch
    # is being made (how long that takes depends on the load on this machine); each is
    # still captured (test_every_submission_captured_exactly). Once the site is rewritten
    # the store is gone: after the first hooked doorbell of a site, only the threads that
    # were already faulting on it (4 workers at most) can still come through the fault.
    for site in sites:
        subs = sorted((r for r in recs if r.type == "SUBMISSION" and r.body.rip == site), key=lambda r: r.seq)
        first = next(i for i, r in enumerate(subs) if r.body.flags & F.TL_SUB_HOOKED)
        assert sum(1 for r in subs[first:] if not r.body.flags & F.TL_SUB_HOOKED) <= 4
    # the NOTE keeps the bytes from before the patch: the store, then the jmp
    codes = [bytes(r.body.text).decode().split("code from rip-16: ")[1] for r in recs
             if r.type == "NOTE" and bytes(r.body.text).decode().startswith("doorbell store site")]
    assert sum(c[32:38] == "8908e9" for c in codes) == 2


def test_gp_put_shadow_replaces_the_device_read(simdev_run):
    """GP_PUT shaped like libcuda's store (mov %esi,0x8c(%rdi); ret; padding) is patched at
    its first fault; the shadow it keeps is what the doorbell uses (I13), and the exact
    put ranges checked in test_every_submission_captured_exactly come from it. No
    mismatch is seen by the sampled device reads."""
    recs, truth = simdev_run
    notes = _site_notes(recs, "GP_PUT")
    assert notes[int(truth["gp_put_site"])] == "patched"
    c = _counters(recs)
    assert c["gp_put_shadow_mismatch"] == 0
    assert (4 * 200 + 3) * 0.8 <= c["gp_put_hooked"] <= 4 * 200 + 3 - 1


def _shadowed(recs, truth):
    """[(truth submission, its SUBMISSION body)] for the channels' submissions, in order."""
    subs = [r.body for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_CHANNEL_KNOWN]
    by_token = {}
    for s in subs:
        by_token.setdefault(s.token, []).append(s)
    out = []
    for w in truth["submissions"]:
        out.append((w, by_token[w["token"]].pop(0)))
    return out


def test_gp_entry_writer_hooked_and_its_entries_used(simdev_run):
    """simdev's GP entry writer is libcuda's byte for byte (shim/patch.c I14): it is found
    near the GP_PUT site and hooked at its entry, and the doorbell takes the entries it made
    instead of reading the ring. Entries written by plain stores, including the second lap
    of channel 0 over slots the writer filled in the first, are read from the ring (the
    exact-capture test checks their values)."""
    recs, truth = simdev_run
    texts = [bytes(r.body.text).decode() for r in recs if r.type == "NOTE"]
    writer = int(truth["gp_entry_writer"])
    assert f"GP entry writer site 0x{writer:012x}: patched" in [t.split(";")[0] for t in texts]
    c = _counters(recs)
    pairs = _shadowed(recs, truth)
    by_writer = [s for w, s in pairs if w["writer"]]
    plain = [s for w, s in pairs if not w["writer"]]
    assert not [s for s in plain if s.flags & F.TL_SUB_ENTRIES_SHADOWED]
    shadowed = [s for s in by_writer if s.flags & F.TL_SUB_ENTRIES_SHADOWED]
    # Those written before the hook was made (the first GP_PUT fault patches it) and those
    # sampled by the device check (every 64th doorbell of a channel) come from the ring.
    assert len(by_writer) * 0.8 <= len(shadowed) < len(by_writer)
    assert c["gp_entries_shadowed"] == len(shadowed)
    assert c["gp_entries_hooked"] >= len(shadowed)
    assert c["gp_entry_shadow_mismatch"] == 0 and c["gp_entry_shadow_busy"] == 0


def test_entry_rewritten_after_the_writer_is_caught_by_the_check(shim, programs, tmp_path):
    """An entry stored again by other code after the writer made it is not what the shadow
    holds. With TRACE_LAUNCH_SHADOW_CHECK=1 every doorbell compares the ring, so the capture
    stays exact, the mismatch is counted and the channel goes back to reading the ring."""
    recs, truth = _small_simdev(shim, programs, tmp_path,
                                {"SIMDEV_REWRITE": "1", "TRACE_LAUNCH_SHADOW_CHECK": "1"})
    truth["submissions"] = [s for s in truth["submissions"] if s["token"]]
    for w, s in _shadowed(recs, truth):
        assert list(s.entries) == [w["entry"]]
    (rewritten,) = [s for w, s in _shadowed(recs, truth) if w["writer"] == 2]
    assert not rewritten.flags & F.TL_SUB_ENTRIES_SHADOWED
    c = _counters(recs)
    assert c["gp_entry_shadow_mismatch"] == 1 and c["gp_entries_shadowed"] > 0


def test_capture_grown_ahead_by_the_helper_thread(shim, programs, tmp_path):
    """6,000 submissions of 8 KiB (about 48 MiB of capture): the helper thread (I15) grows
    and maps the file ahead of the cursor, and every bulk segment is captured whole."""
    recs, truth = _small_simdev(shim, programs, tmp_path, {"SIMDEV_BULK": "6000"})
    truth["submissions"] = [s for s in truth["submissions"] if s["token"]]
    bulk = [(w, s) for w, s in _shadowed(recs, truth) if not w["hex"]]
    assert len(bulk) == 6000
    for w, s in bulk:
        words = [0x20012000 | 2047 << 16 | 0x1B4 >> 2] + [(1 << 24 | w["put_prev"] << 8 | i) & 0xFFFFFFFF
                                                         for i in range(1, 2048)]
        assert bytes(s.segments[0].data) == struct.pack("<2048I", *words)
        assert list(s.entries) == [w["entry"]]
    c = _counters(recs)
    # simdev writes far faster than a GPU program (8 KiB per submission, no GPU), so here
    # the recording thread may also grow the file when the helper is behind.
    size = (tmp_path / "c.tlc").stat().st_size
    assert size > 40 << 20 and c["grows_helper"] >= 2       # 8 MiB each (GROW_STEP)
    assert (c["grows_helper"] + c["grows_inline"]) * (8 << 20) >= size
    assert c["records_dropped"] == 0 and c["populate_failed"] == 0


def test_stub_preserves_registers_flags_and_red_zone(simdev_run):
    """After the store, every register holds what it held before, whether the store faulted
    (first call) or went through the stub (later calls): GPRs, CF, xmm0-15, and a pointer
    kept in the red zone below %rsp (a corrupted one would have crashed simdev). The stub
    saves no vector state (I16): xmm0-15 survive because the shim never touches them."""
    _check_registers(simdev_run[1])


def test_xsave_stub_preserves_registers_too(shim, programs, tmp_path):
    """TRACE_LAUNCH_XSAVE=1 (the stub that also saves x87/SSE/AVX state, for measuring)."""
    recs, truth = _small_simdev(shim, programs, tmp_path, {"TRACE_LAUNCH_XSAVE": "1"})
    assert _counters(recs)["doorbells_hooked"] > 0
    _check_registers(truth)


def _check_registers(truth):
    db = int(truth["doorbell"])
    pat = {n: int(n[0] * 16, 16) for n in "123458abcde7"}
    want_gprs = [db, pat["2"], 0xB, pat["1"], pat["4"], pat["5"], pat["3"], pat["8"],
                 int("9" * 16, 16), pat["a"], pat["b"], pat["c"], pat["d"], pat["e"], pat["7"]]
    want_xmm = [pat["1"], pat["2"], pat["3"], pat["4"], pat["5"], pat["8"], int("9" * 16, 16),
                pat["a"], pat["b"], pat["c"], pat["d"], pat["e"], pat["7"], pat["1"], pat["2"],
                pat["3"]]
    runs = [[int(v) for v in regs] for regs in truth["regs_after"]]
    assert len(runs) == 3
    for regs in runs:
        assert regs[:15] == want_gprs
        assert regs[15] & 1                   # CF, set by stc before the store
        assert regs[16:32] == want_xmm
    assert runs[0][15] == runs[1][15] == runs[2][15]   # the whole flags word


def _small_simdev(shim, programs, tmp_path, env):
    """simdev with 2 threads x 20 submissions under extra environment: (records, truth)."""
    dev = _devdir(tmp_path)
    truth_path = tmp_path / "t.json"
    proc, recs = _run(shim, [programs["simdev"], dev, truth_path, 2, 20], tmp_path / "c.tlc",
                      dev, extra_env=env)
    assert proc.returncode == 0, proc.stderr
    return recs, json.loads(truth_path.read_text())


def test_sites_patched_with_only_small_holes_in_reach(shim, programs, tmp_path):
    """No free 1 MiB-aligned page within a rel32 jump of the sites (SIMDEV_CROWD, as a
    torch.compile process on the H100 had: its libraries and the capture's window left 26
    holes of under 1 MiB): the stub goes in the nearest hole /proc/self/maps shows, and
    the libcuda-shaped sites are still patched. Before, both sites were refused ("no page
    within reach for the stub") and every doorbell faulted."""
    recs, truth = _small_simdev(shim, programs, tmp_path, {"SIMDEV_CROWD": "1"})
    notes = _site_notes(recs, "doorbell")
    sites = [int(x) for x in truth["sites"]]
    assert all(notes[s] == "patched" for s in sites), notes
    c = _counters(recs)
    assert c["sites_patched"] == 4 and c["doorbells_hooked"] > 0
    truth["submissions"] = [s for s in truth["submissions"] if s["token"]]
    _check_exact(recs, truth)


def test_patching_off_keeps_every_doorbell_on_the_fault_path(shim, programs, tmp_path):
    recs, truth = _small_simdev(shim, programs, tmp_path, {"TRACE_LAUNCH_PATCH": "0"})
    c = _counters(recs)
    assert c["sites_patched"] == 0 and c["doorbells_hooked"] == 0
    assert set(_site_notes(recs).values()) == {"patching off (TRACE_LAUNCH_PATCH=0)"}
    subs = [r for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_CHANNEL_KNOWN]
    assert len(subs) == len([s for s in truth["submissions"] if s["token"]])


def test_ioctl_mode_sets_no_trap(shim, programs, tmp_path):
    dev = _devdir(tmp_path)
    proc, recs = _run(shim, [programs["simdev"], dev, tmp_path / "t.json", 2, 10],
                      tmp_path / "c.tlc", dev, mode="ioctl")
    assert proc.returncode == 0
    assert not [r for r in recs if r.type == "SUBMISSION"]
    assert [r for r in recs if r.type == "IOCTL"]


def test_abi_header_matches_declarations():
    """shim/abi.h is generated from the construct declarations; it must not drift."""
    from decoders import shimabi
    assert (ROOT / "shim/abi.h").read_text() == shimabi.render()


def test_probe_ring_names_the_ring_and_userd_store_sites(shim, programs, tmp_path):
    """TRACE_LAUNCH_PROBE=ring (the aid that found libcuda's sites, docs/doorbell-hook.md):
    every instruction storing to a channel's GPFIFO ring or USERD page is named once, with
    the address it stored to; the program's results are unchanged."""
    recs, truth = _small_simdev(shim, programs, tmp_path, {"TRACE_LAUNCH_PROBE": "ring"})
    texts = [bytes(r.body.text).decode() for r in recs if r.type == "NOTE"]
    ring = [t for t in texts if t.startswith("ring store site 0x")]
    rips = [int(t.split()[3], 16) for t in ring]
    targets = [int(t.split(" to 0x")[1].split(";")[0], 16) for t in ring]
    assert len(rips) == len(set(rips)) >= 3            # entry words and GP_PUT, each site once
    mm = [r.body for r in recs if r.type == "MMAP" and r.body.length == 0x40000]
    (rings,) = mm                                       # simdev's USERD + ring memory
    assert all(rings.addr <= a < rings.addr + rings.length for a in targets)
    assert any(a % 0x1000 == 0x8C for a in targets)     # a GP_PUT store (USERD + 0x8C)
    subs = [r for r in recs if r.type == "SUBMISSION" and r.body.flags & F.TL_SUB_CHANNEL_KNOWN]
    assert len(subs) == len([s for s in truth["submissions"] if s["token"]])


_RANK_VARS = dict(RANK="3", LOCAL_RANK="1", WORLD_SIZE="4", LOCAL_WORLD_SIZE="2",
                  CUDA_VISIBLE_DEVICES="1,0")


def test_process_env_records_the_rank_variables_only(shim, programs, tmp_path, monkeypatch):
    """PROCESS_ENV (issue 26): after PROCESS_START, the launcher's rank variables of each
    process, the exec'd one and its forked child, and nothing else of the environment."""
    for k in F.TL_ENV_NAMES:
        monkeypatch.delenv(k, raising=False)
    dev = _devdir(tmp_path)
    cap = tmp_path / "c.tlc"
    secret = "not-for-the-capture-5d1f"
    proc, recs = _run(shim, [programs["fakedev"], dev, tmp_path / "t.json"], cap, dev,
                      extra_env=dict(_RANK_VARS, TL_TEST_SECRET=secret))
    assert proc.returncode == 3
    starts = [r for r in recs if r.type == "PROCESS_START"]
    envs = [r for r in recs if r.type == "PROCESS_ENV"]
    assert len(starts) == len(envs) >= 2                   # fakedev forks a child
    for r in envs:
        start = next(s for s in starts if s.pid == r.pid)
        assert start.index < r.index and r.complete
        entries = bytes(r.body.env).split(b"\0")
        assert entries[-1] == b"" and r.body.env_len == len(r.body.env)
        assert sorted(e.decode() for e in entries[:-1]) == sorted(
            f"{k}={v}" for k, v in _RANK_VARS.items())
    assert secret.encode() not in cap.read_bytes()
    from decoders.ranks import processes_meta
    from decoders.session import decode_capture
    m = decode_capture(cap)
    for p in processes_meta(m):
        assert (p["rank"], p["local_rank"], p["world_size"], p["local_world_size"]) == (3, 1, 4, 2)
        assert p["env"]["CUDA_VISIBLE_DEVICES"] == "1,0"


def test_no_process_env_without_launcher_variables(shim, programs, tmp_path, monkeypatch):
    for k in F.TL_ENV_NAMES:
        monkeypatch.delenv(k, raising=False)
    dev = _devdir(tmp_path)
    _, recs = _run(shim, [programs["fakedev"], dev, tmp_path / "t.json"], tmp_path / "c.tlc", dev)
    assert not [r for r in recs if r.type == "PROCESS_ENV"]


def test_process_env_value_cut(shim, programs, tmp_path, monkeypatch):
    for k in F.TL_ENV_NAMES:
        monkeypatch.delenv(k, raising=False)
    dev = _devdir(tmp_path)
    long = "x" * (F.TL_ENV_VALUE_MAX + 100)
    _, recs = _run(shim, [programs["fakedev"], dev, tmp_path / "t.json"], tmp_path / "c.tlc", dev,
                   extra_env={"CUDA_VISIBLE_DEVICES": long, "RANK": "0"})
    env = next(r for r in recs if r.type == "PROCESS_ENV")
    entries = bytes(env.body.env).split(b"\0")[:-1]
    assert b"CUDA_VISIBLE_DEVICES=" + b"x" * F.TL_ENV_VALUE_MAX in entries and b"RANK=0" in entries


def test_copies_of_device_fds_are_recorded(shim, programs, tmp_path):
    """An fd copied by dup or fcntl F_DUPFD / F_DUPFD_CLOEXEC from a device fd is a device
    fd too (libcuda copies the /dev/nvidia0 fds it maps memory through: 8 of them held at
    the exit of a torch.compile max-autotune run had never been seen opened): an OPEN of
    the same path, then its ioctls, mmap and CLOSE are recorded. tests/c/dupdev.c says
    which fd is whose copy. (The copy's path is the shim's copy of the original's, kept to
    63 bytes as /dev/nvidia* paths are: the fake devices go in a short directory.)"""
    import tempfile
    short = Path(tempfile.mkdtemp(prefix="tl", dir="/tmp"))
    try:
        dev = _devdir(short)
        truth_path = tmp_path / "truth.json"
        proc, recs = _run(shim, [programs["dupdev"], dev, truth_path], tmp_path / "c.tlc", dev)
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    t = json.loads(truth_path.read_text())
    mine = [r for r in recs if r.pid == t["pid"]]
    opens = {r.body.fd: (r.body.path.decode(), r.body.oflags) for r in mine if r.type == "OPEN"}
    assert opens[t["dup"]][0] == f"{dev}/nvidiactl"
    assert opens[t["dupfd"]][0] == f"{dev}/nvidia0" and t["dupfd"] >= 60
    assert opens[t["dupfd_cloexec"]] == (f"{dev}/nvidia0", os.O_CLOEXEC) and t["cloexec_flag"]
    ioctl_fds = Counter(r.body.fd for r in mine if r.type == "IOCTL")
    assert all(ioctl_fds[t[k]] == 1 for k in ("dup", "dupfd", "dupfd_cloexec"))
    maps = [r.body for r in mine if r.type == "MMAP"]
    assert [(m.fd, m.addr) for m in maps] == [(t["dupfd_cloexec"], t["mmap_addr"])]
    closes = {r.body.fd for r in mine if r.type == "CLOSE"}
    assert {t["dup"], t["dupfd"], t["dupfd_cloexec"]} <= closes


def _after_vfork_child(recs, pid, fds):
    """The parent's records on `fds`: (OPEN, IOCTL, MMAP, CLOSE) in order, as (type, fd)."""
    return [(r.type, r.body.fd) for r in recs if r.pid == pid
            and r.type in ("OPEN", "IOCTL", "MMAP", "CLOSE") and r.body.fd in fds]


def test_vfork_child_closing_every_fd_leaves_the_parents_recorded(shim, programs, tmp_path):
    """A vfork child runs in its parent's memory until it execs: when it closes every fd
    (close, then close_range, as the child of Python's subprocess does), the parent's
    device fds are still open and the shim's table of them must stay as it was. Before
    the fix, the child's closes were recorded under the parent's pid and emptied the
    parent's table: no later ioctl or mmap of the parent was recorded (a torch.compile
    max-autotune run lost every ioctl after its first subprocess)."""
    dev = _devdir(tmp_path)
    truth_path = tmp_path / "truth.json"
    proc, recs = _run(shim, [programs["vforkdev"], dev, truth_path], tmp_path / "c.tlc", dev)
    assert proc.returncode == 0, proc.stderr
    t = json.loads(truth_path.read_text())
    assert t["child_status"] == 0 and t["child"] != t["pid"]
    ctl, gpu = t["ctl"], t["gpu"]
    assert _after_vfork_child(recs, t["pid"], {ctl, gpu}) == [
        ("OPEN", ctl), ("OPEN", gpu), ("IOCTL", ctl),           # before the child
        ("IOCTL", ctl), ("IOCTL", gpu), ("MMAP", gpu),          # after it
        ("CLOSE", ctl), ("CLOSE", gpu)]                         # the parent's own closes
    mmap_rec = next(r.body for r in recs if r.type == "MMAP" and r.pid == t["pid"])
    assert mmap_rec.addr == t["mmap_addr"]
    # the parent's exit is its own (a child's exit record would have taken its place)
    exits = [r.pid for r in recs if r.type == "PROCESS_EXIT"]
    assert exits.count(t["pid"]) == 1


def test_python_subprocess_leaves_the_parents_device_fds_recorded(shim, tmp_path):
    """The same through the real trigger: a Python program with device fds runs a
    subprocess (CPython's _posixsubprocess: vfork where it can, close_range in the child),
    then makes an ioctl on each fd: both are recorded."""
    dev = _devdir(tmp_path)
    prog = tmp_path / "sub.py"
    prog.write_text(
        "import fcntl, json, os, subprocess, sys\n"
        "ctl = os.open(sys.argv[1] + '/nvidiactl', os.O_RDWR)\n"
        "gpu = os.open(sys.argv[1] + '/nvidia0', os.O_RDWR)\n"
        "arg = bytearray(16)\n"
        "subprocess.run(['true'], check=True)\n"
        "for fd in (ctl, gpu):\n"
        "    try:\n"
        "        fcntl.ioctl(fd, 0xC0104629, arg)\n"
        "    except OSError:\n"
        "        pass\n"
        "json.dump({'pid': os.getpid(), 'ctl': ctl, 'gpu': gpu}, open(sys.argv[2], 'w'))\n")
    truth_path = tmp_path / "truth.json"
    proc, recs = _run(shim, [sys.executable, prog, dev, truth_path], tmp_path / "c.tlc", dev)
    assert proc.returncode == 0, proc.stderr
    t = json.loads(truth_path.read_text())
    ctl, gpu = t["ctl"], t["gpu"]
    seen = _after_vfork_child(recs, t["pid"], {ctl, gpu})
    assert seen[:2] == [("OPEN", ctl), ("OPEN", gpu)]
    assert seen[2:4] == [("IOCTL", ctl), ("IOCTL", gpu)], seen
