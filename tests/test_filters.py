"""Report filters (decoders/select.py and `trace-decode CAPTURE --launch/--channel/--class/
--ioctl/--pid`) on the recordings. Every expected count is computed independently: from
the raw records with struct.unpack (conftest's record walker and the byte layouts of
docs/capture-format.md), not through the reader or the model under test."""
import io
import json
import struct
from collections import Counter
from functools import lru_cache

import pytest
from click.testing import CliRunner

from conftest import CAPTURES, SMALL, capture_bytes, capture_file, manifest, record_spans
from decoders.select import LISTED, SelectError, class_id, select
from decoders.session import decode_capture
from tracer.cli import trace_decode
from tracer.cli_common import print_report

RECORD_HEADER = 40
IOCTL, MMAP, MUNMAP, MREMAP, SUBMISSION, MARK = 5, 6, 7, 8, 10, 9
STATS, NOTE, API_ENTER, API_EXIT = 11, 13, 14, 15
NV_IOCTL_MAGIC = 0x46                  # 'F' (nv-ioctl-numbers.h)
NV_ESC_RM_CONTROL, NV_ESC_RM_ALLOC = 0x2A, 0x2B
HOPPER_COMPUTE_A, HOPPER_CHANNEL_GPFIFO_A = 0xCBC0, 0xC86F


def _pad8(n):
    return (n + 7) & ~7


@lru_cache(maxsize=None)
def raw(name):
    """[(type, pid, body bytes)] of every record, by struct.unpack alone."""
    data = capture_bytes(name)
    out = []
    for off, length, rtype in record_spans(name):
        pid = struct.unpack_from("<I", data, off + 12)[0]
        out.append((rtype, pid, data[off + RECORD_HEADER:off + length]))
    return out


DOORBELLS = 5      # TL_STATS_NAMES: records, records_dropped, bytes_dropped, ioctls, mmaps, doorbells


def raw_ioctls(name):
    """[(pid, path, escape nr or None, before-copy)] of IOCTL records (TL_IOCTL body:
    fd, request, arg(8), ret, err, arg_size, nbufs, flags, path_len, path, before, after)."""
    out = []
    for rtype, pid, b in raw(name):
        if rtype != IOCTL:
            continue
        request, = struct.unpack_from("<I", b, 4)
        arg_size, _, _, path_len = struct.unpack_from("<4I", b, 24)
        path = b[40:40 + path_len].split(b"\0")[0].decode()
        before = b[40 + _pad8(path_len):40 + _pad8(path_len) + arg_size]
        nr = request & 0xFF if "uvm" not in path and (request >> 8) & 0xFF == NV_IOCTL_MAGIC \
            else None
        out.append((pid, path, nr, before))
    return out


def raw_submissions(name):
    """[(pid, token, hChannel, hClass)] of SUBMISSION records (token, hClient, hChannel,
    hClass are the body's first four u32)."""
    out = []
    for rtype, pid, b in raw(name):
        if rtype == SUBMISSION:
            token, _, channel, hclass = struct.unpack_from("<4I", b, 0)
            out.append((pid, token, channel, hclass))
    return out


@lru_cache(maxsize=None)
def model(name):
    return decode_capture(str(capture_file(name)))


def pid_profiles(name):
    """{pid: Counter of its record types} of the manifest's pids, and the pids to check: one
    per distinct profile, and the two busiest. jax's captures hold ~110 helper processes of
    the same 3-4 records, and each select() walks the whole model: every pid made the test
    quadratic (~100 s of a 2-CPU run)."""
    types = {pid: Counter() for pid in manifest(name)["summary"]["pids"]}
    for t, p, _ in raw(name):
        if p in types:
            types[p][t] += 1
    first = {}
    for pid in sorted(types):
        first.setdefault(frozenset(types[pid].items()), pid)
    busiest = sorted(types, key=lambda p: -sum(types[p].values()))[:2]   # (ddp's two ranks)
    return types, sorted(set(first.values()) | set(busiest))


@pytest.mark.parametrize("name", SMALL)
def test_pid(name):
    m = model(name)
    pids = Counter(pid for _, pid, _ in raw(name))
    profiles, checked = pid_profiles(name)
    for pid in checked:
        f = select(m, pid=pid)
        types = profiles[pid]
        assert len(f.ioctls) == types[IOCTL]
        assert len(f.mmaps) == types[MMAP] + types[MUNMAP] + types[MREMAP]
        assert len(f.submissions) == types[SUBMISSION]
        assert len(f.marks) == types[MARK]
        assert set(f.processes) == {pid}
        assert f.stats()["ioctls"] == types[IOCTL]
        # what the report counts besides the lists: this process's notes, API calls and
        # the shim's STATS counters of this process (issue 27: they were the whole capture's)
        assert len(f.notes) == types[NOTE]
        assert len(f.api_calls) == f.stats()["api_calls"] == types[API_ENTER]
        assert sum(f.api_call_names.values()) == types[API_ENTER]
        doorbells = sum(struct.unpack_from("<Q", b, 8 + 8 * DOORBELLS)[0]
                        for t, p, b in raw(name) if t == STATS and p == pid)
        assert f.stats()["doorbells"] == (doorbells if types[STATS] else None)
    absent = max(pids) + 1
    held = sorted(manifest(name)["summary"]["pids"])    # (the tracer's own END record aside)
    # the message lists the first LISTED pids, lowest first, and counts the rest (jax-loops
    # holds ~110 processes)
    listed = ", ".join(map(str, held[:LISTED]))
    if len(held) > LISTED:
        listed += f" and {len(held) - LISTED} more"
    with pytest.raises(SelectError, match=rf"pid {absent} is not in the capture; it holds pids "
                                          rf"{listed}$"):
        select(m, pid=absent)


@pytest.mark.parametrize("name", SMALL)
def test_channel_by_token_and_handle(name):
    m = model(name)
    subs = raw_submissions(name)
    tokens = Counter(s[1] for s in subs)
    handles = Counter(s[2] for s in subs)
    token, n = tokens.most_common(1)[0]
    f = select(m, channel=token)
    assert len(f.submissions) == n + handles.get(token, 0)
    assert len(f.ioctls) == len(m.ioctls)                     # ioctls are not narrowed
    assert all(l.channel == token for l in f.launches)
    handle = next(s[2] for s in subs if s[1] == token)
    for spelled in (handle, hex(handle), str(handle)):
        f2 = select(m, channel=spelled)
        assert len(f2.submissions) == handles[handle] + tokens.get(handle, 0)
    # the launches of a channel: every launch decoded from one of its submissions
    records = {s["index"] for s in f.submissions}
    assert len(f.launches) == sum(1 for l in m.launches if l.record_index in records)


@pytest.mark.parametrize("name", SMALL)
def test_class(name):
    m = model(name)
    subs = raw_submissions(name)
    # RM_ALLOC of a class: NVOS21/NVOS64 parameters hRoot, hObjectParent, hObjectNew, hClass
    allocs = Counter(struct.unpack_from("<I", before, 12)[0]
                     for _, _, nr, before in raw_ioctls(name)
                     if nr == NV_ESC_RM_ALLOC and len(before) >= 16)
    for spelled in ("HOPPER_CHANNEL_GPFIFO_A", "0xc86f", "hopper_channel_gpfifo_a", 0xC86F):
        f = select(m, cls=spelled)
        assert len(f.submissions) == sum(1 for s in subs if s[3] == HOPPER_CHANNEL_GPFIFO_A)
        assert len(f.ioctls) == allocs[HOPPER_CHANNEL_GPFIFO_A] > 0
        assert f.launches == []
    f = select(m, cls="HOPPER_COMPUTE_A")
    assert len(f.ioctls) == allocs[HOPPER_COMPUTE_A] > 0
    assert f.submissions == []
    assert len(f.launches) == len(m.launches)   # every QMD here went through a 0xcbc0 subchannel


def test_class_names():
    assert class_id("HOPPER_COMPUTE_A") == 0xCBC0
    assert class_id("NV01_ROOT_CLIENT") == 0x41
    assert class_id("52160") == 0xCBC0
    with pytest.raises(SelectError):
        class_id("NO_SUCH_CLASS")


@pytest.mark.parametrize("name", SMALL)
def test_ioctl_by_escape_and_control(name):
    m = model(name)
    ios = raw_ioctls(name)
    controls = [before for _, _, nr, before in ios if nr == NV_ESC_RM_CONTROL]
    f = select(m, ioctl="RM_CONTROL")
    assert len(f.ioctls) == len(controls) > 0
    assert len(f.submissions) == len(m.submissions)       # other lists are whole
    uvm = sum(1 for _, path, _, _ in ios if "nvidia-uvm" in path)
    assert len(select(m, ioctl="uvm_").ioctls) == uvm
    # a control by (part of) its name: NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION is 0x101
    # (ctrl0000system.h); NVOS54_PARAMETERS: hClient, hObject, cmd
    build = sum(1 for before in controls if struct.unpack_from("<I", before, 8)[0] == 0x101)
    assert len(select(m, ioctl="get_build_version").ioctls) == build > 0


def test_launch_filter_builtin_vadd():
    """The marked launch of builtin-vadd is launch 3 and came from the SUBMISSION record
    between the BEGIN and END marks (manifest: one cuLaunchKernel)."""
    name = "builtin-vadd"
    m = model(name)
    spans = record_spans(name)
    marks = [n for n, (_, _, t) in enumerate(spans) if t == MARK]
    inside = [n for n in range(marks[0] + 1, marks[1]) if spans[n][2] == SUBMISSION]
    assert len(inside) == manifest(name)["ground_truth"]["launches"] == 1
    f = select(m, launches=[3])
    assert [s["index"] for s in f.submissions] == inside
    assert len(f.launches) == 1 and f.launches[0].summary["grid"] == \
        manifest(name)["ground_truth"]["grid"]
    assert f.meta["filter"] == {"launches": [3], "launch_indices": [3]}
    f = select(m, launches=[1, 3, 3])
    assert len(f.launches) == 2 and len(f.submissions) == 2   # launch 1 came from record 788
    with pytest.raises(SelectError):
        select(m, launches=[99])


def test_filters_combine_and_leave_the_model_alone():
    m = model("runtime-vadd")
    before = (len(m.ioctls), len(m.submissions), len(m.launches))
    f = select(m, ioctl="RM_CONTROL", pid=manifest("runtime-vadd")["summary"]["pids"][0],
               channel=10)
    assert len(f.ioctls) == len(select(m, ioctl="RM_CONTROL").ioctls)
    assert len(f.submissions) == len(select(m, channel=10).submissions)
    assert (len(m.ioctls), len(m.submissions), len(m.launches)) == before
    assert "filter" not in m.meta


def _runner():
    try:
        return CliRunner(mix_stderr=False)      # click < 8.2
    except TypeError:
        return CliRunner()


def test_cli_report_filters(capture_files):
    path = str(capture_files["builtin-vadd"])
    res = _runner().invoke(trace_decode, [path, "--json", "--launch", "3", "--ioctl", "RM_FREE"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["stats"]["launches"] == 1 and doc["stats"]["submissions"] == 1
    assert doc["launches"][0]["grid"] == [4096, 1, 1]
    n_free = sum(1 for _, _, nr, _ in raw_ioctls("builtin-vadd") if nr == 0x29)  # NV_ESC_RM_FREE
    assert doc["stats"]["ioctls"] == len(doc["ioctls"]) == n_free
    assert doc["meta"]["filter"]["ioctl"] == "RM_FREE"
    res = _runner().invoke(trace_decode, [path, "--launch", "3"])
    assert res.exit_code == 0
    assert res.stdout.startswith("selection: launch 3")
    assert "launch 0 is launch 3 of the capture" in res.stdout
    assert "launch 0: QMD V04_00" in res.stdout and "grid 4096x1x1" in res.stdout
    # many launches kept: a few pairs, and how many more the JSON lists
    many = str(capture_file("torch-small"))     # 14 launches
    res = _runner().invoke(trace_decode, [many] + [a for n in range(8) for a in ("--launch", str(n))])
    assert res.exit_code == 0, res.output
    line = next(l for l in res.stdout.splitlines() if "is launch" in l)
    assert line == "  " + ", ".join(f"launch {n} is launch {n} of the capture" for n in range(6)) \
        + ", and 2 more (--json: meta.filter.launch_indices)"


@pytest.mark.parametrize("args,message", [
    (["--class", "NO_SUCH_CLASS"], "unknown class name"),
    (["--launch", "99"], "no launch 99"),
    # issue 27: these selected nothing and exited 0 with "0 process(es)"
    (["--ioctl", "RM_CONTROL", "--pid", "495"], "pid 495 is not in the capture; it holds pids 843"),
    (["--channel", "0x99"], "channel 0x99 is not in the capture; it holds channels (token/handle) "
                            "0xa/0x"),
    (["--class", "0x1234"], "class 0x1234 is not in the capture; it holds classes 0x3e "
                            "NV01_MEMORY_SYSTEM, "),
    (["--class", "TURING_COMPUTE_A"], "class 0xc5c0 TURING_COMPUTE_A is not in the capture"),
    (["--ioctl", "NO_SUCH_THING"], "no ioctl of the capture has an escape, RM control or class "
                                   "name containing 'NO_SUCH_THING'; its escapes are "
                                   "NV_ESC_ALLOC_OS_EVENT, "),
])
def test_cli_filter_errors_one_line(capture_files, args, message):
    path = str(capture_files["builtin-vadd"])
    res = _runner().invoke(trace_decode, [path] + args)
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"trace-decode: {path}: ") and message in lines[0]
    assert "Traceback" not in res.stderr


def test_selection_counts_are_of_the_selection():
    """launch-loop-10k, channel 0xa (the compute channel): the doorbells, API calls and the
    kernel launch tally are the selection's, the table counts the manifest's launches."""
    name = "launch-loop-10k"
    m = decode_capture(str(capture_file(name)))
    truth = manifest(name)["ground_truth"]
    subs = [s for s in raw_submissions(name) if 0xA in (s[1], s[2])]
    f = select(m, channel=0xA)
    assert f.stats()["doorbells"] == len(f.submissions) == len(subs)
    assert f.stats()["doorbells"] < m.stats()["doorbells"]
    want = truth["launches"] + truth["warmup_launches"]
    ((key, tally),) = [(k, t) for k, t in f.kernel_tally.items() if k[0] == truth["kernel"]]
    assert tally["verified"] == want and f.verified["verified"] == want
    records = {s["index"] for s in f.submissions}
    assert all(set(c["submissions"]) & records for c in f.api_calls[:50])
    assert f.api_calls and len(f.api_calls) < len(m.api_calls)
    one = select(m, launches=[len(m.launches) - 1])
    assert one.stats()["doorbells"] == 1 and len(one.api_calls) == 1
    assert sum(sum(t.values()) for t in one.kernel_tally.values()) == 1


def test_cli_bad_channel_is_a_usage_error(capture_files):
    res = _runner().invoke(trace_decode, [str(capture_files["builtin-vadd"]), "--channel", "zz"])
    assert res.exit_code == 2 and "--channel" in res.stderr


def test_print_report_without_filters_unchanged(capture_files):
    a, b = io.StringIO(), io.StringIO()
    print_report(str(capture_files["runtime-vadd"]), a)
    print_report(str(capture_files["runtime-vadd"]), b, filters={"launches": (), "pid": None})
    assert a.getvalue() == b.getvalue() and not a.getvalue().startswith("selection")


def test_selection_holds_positions_not_items():
    """A filter on a long capture keeps numbers, never the items it selects (a 500-step
    job's `--channel` selection held all 157,170 launches read back from the spill file,
    1.9 GB; `--launch N` read them all to pick one): on launch-loop-10k (20,200 launches,
    most in the decode's file) a channel selection allocates under a few MB at its peak,
    and reads back the same launches, submissions and API calls a list would hold."""
    import tracemalloc

    from decoders.select import Picked
    m = decode_capture(str(capture_file("launch-loop-10k")))
    token = next(iter(m.submissions))["token"]
    tracemalloc.start()
    try:
        f = select(m, channel=token)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(f.launches, Picked) and len(f.launches) > 20_000
    assert peak < 8 << 20, peak
    want, ref = [], []
    for n, l in enumerate(m.launches):
        if token in (l.channel, l.hChannel):
            want.append(n)
            ref.append(l.record_index)
    assert list(f.launches.at) == want
    assert [l.record_index for l in f.launches] == ref
    assert f.launches[7].record_index == m.launches[want[7]].record_index
    assert [l.record_index for l in f.launches[5:9]] == \
        [m.launches[n].record_index for n in want[5:9]]
    subs = [s["index"] for s in m.submissions if token in (s["token"], s["channel"])]
    assert [s["index"] for s in f.submissions] == subs
    one = select(m, launches=[20_000])
    assert len(one.launches) == 1 and one.launches[0].record_index == \
        m.launches[20_000].record_index
