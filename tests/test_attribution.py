"""Launches tied to their API calls, kernels and arguments, on H100 recordings made with
the driver-API brackets (captures/two-streams, kernel-fault, graph-replay, memcpy-memset,
sigkill, runtime-vadd). Expectations come from each manifest's ground truth, written by
the program itself at capture time (kernels/corpus_*.cu: the launch configuration it
passed and cuFuncGetParamInfo for each kernel)."""
import struct

import pytest

from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_file, manifest

_MODELS = {}


def model(name):
    if name not in _MODELS:
        _MODELS[name] = decode_capture(capture_file(name))
    return _MODELS[name]


def kernel_launches(m):
    return [(launch, m.attribute(launch)) for launch in m.launches if launch.kernel]


def base(demangled):
    return demangled.split("(")[0]


@pytest.mark.parametrize("name", ["two-streams", "kernel-fault", "graph-replay", "runtime-vadd",
                                  "launch-shapes"])
def test_every_kernel_launch_is_attributed_and_verified(name):
    m = model(name)
    gt = manifest(name)["ground_truth"]
    got = kernel_launches(m)
    # driver-internal kernels (memset) run inside non-launch calls (tests/test_driver_kernels.py);
    # every other one is ours
    ours = [(l, a) for l, a in got if a and a["kernel"] and not a.get("driver_kernel")]
    assert ours, "no attributed kernel launch"
    results = {c["index"]: c["result"] for c in m.api_calls}
    for launch, a in ours:
        assert a["verified"] is True, (launch.record_index, a["differences"])
        assert launch.summary["verified"] is True and launch.summary["api_call"] == a["api_call"]
        call = a["graph_node"]["index"] if a["graph_node"] else a["api_call"]["index"]
        assert results[call] == 0
    if "kernels" in gt:   # the corpus programs: parameter layout from cuFuncGetParamInfo
        for launch, a in ours:
            k = gt["kernels"][base(a["kernel"]["name"])]
            assert [[x["offset"], x["size"]] for x in a["args"]] == k["params"]


def test_two_streams_arguments_and_pointers():
    m = model("two-streams")
    gt = manifest("two-streams")["ground_truth"]
    got = [(l, a) for l, a in kernel_launches(m) if a and a["kernel"]]
    assert [base(a["kernel"]["name"]) for _, a in got] == [x["kernel"] for x in gt["launches"]]
    for (launch, a), want in zip(got, gt["launches"]):
        assert a["api_call"]["launch"]["grid"] == want["grid"] == launch.summary["grid"]
        assert a["api_call"]["launch"]["block"] == want["block"] == launch.summary["block"]
        *ptrs, n = a["args"]
        assert n["type"] == "int" and n["value"] == gt["args"]["n"]
        for p in ptrs:   # every pointer argument lands at the start of a cuMemAlloc
            assert "*" in p["type"]
            assert p["points_to"]["call"] == "cuMemAlloc_v2" and p["points_to"]["offset"] == 0
            assert p["points_to"]["size"] == gt["args"]["n"] * 4
    # consume reads what produce wrote: its first pointer is produce's only one
    assert got[1][1]["args"][0]["value"] == got[0][1]["args"][0]["value"]


def test_fault_arguments_as_the_hardware_saw_them():
    gt = manifest("kernel-fault")["ground_truth"]
    (launch, a), = [(l, a) for l, a in kernel_launches(model("kernel-fault")) if a and a["kernel"]]
    p, v = a["args"]
    assert p["value"] == gt["args"]["p"] and "points_to" not in p   # 0x10: no allocation
    assert v["value"] == gt["args"]["v"]


def test_graph_replays_run_the_captured_launches():
    m = model("graph-replay")
    gt = manifest("graph-replay")["ground_truth"]
    got = [(l, a) for l, a in kernel_launches(m) if a and a["api_call"]
           and a["api_call"]["name"] == "cuGraphLaunch"]
    replays = {a["api_call"]["index"] for _, a in got}
    assert len(replays) == gt["replays"]
    for launch, a in got:
        assert a["graph_node"] is not None and a["verified"] is True
        assert a["api_call"]["launch"] is None   # cuGraphLaunch itself has no launch config
    floats = sorted({a["args"][2]["value"] for _, a in got})
    assert floats == sorted(x["a"] for x in gt["node_args"])
    # the captured calls submitted nothing themselves
    captured = [c for c in m.api_calls if c["base"] == "cuLaunchKernel"]
    assert len(captured) == len(gt["graph_nodes"]) and all(not c["submissions"] for c in captured)
    assert {a["graph_node"]["index"] for _, a in got} == {c["index"] for c in captured}


def test_non_launch_calls_run_driver_kernels():
    """cuMemcpyDtoD and cuMemsetD8 run kernels of the driver's own: named after the call and
    checked against it (tests/test_driver_kernels.py has the field-by-field truth)."""
    m = model("memcpy-memset")
    names = {a["api_call"]["name"]: a for l, a in kernel_launches(m) if a and a["api_call"]}
    assert set(names) == {"cuMemcpyDtoD_v2", "cuMemsetD8_v2"}   # both run as driver kernels
    assert names["cuMemcpyDtoD_v2"]["kernel"]["name"] == "[driver copy, cuMemcpyDtoD]"
    assert names["cuMemsetD8_v2"]["kernel"]["name"] == "[driver memset, cuMemsetD8]"
    for a in names.values():
        assert a["verified"] is True and a["driver_kernel"]["source"] == "docs/driver-kernels.md"


@pytest.mark.parametrize("name", ["two-streams", "builtin-vadd", "launch-shapes", "memcpy-memset"])
def test_grid_null_qmd_has_its_kernels_call_and_is_not_checked(name):
    """On the H100 each launch submits the driver's GRID_NULL QMD and then the kernel's, in one
    submission (h100-measured.md). Both were handed over by one doorbell, so both carry that
    call; the GRID_NULL QMD runs no kernel, so nothing is checked against the call. (The
    GRID_NULL QMD used to get no call when it was decoded before its kernel's, and in
    two-streams one was checked against cuLaunchKernel and reported as not matching.)"""
    m = model(name)
    by_record = {}
    for launch in m.launches:
        s = launch.summary
        by_record.setdefault(s["record_index"], []).append(s)
    pairs = 0
    for group in by_record.values():
        kernels = [s for s in group if s["kernel"]]
        for s in group:
            if s["kernel"] or not kernels:
                continue
            pairs += 1
            assert s["qmd_type"] == "GRID_NULL"
            assert s["api_call"] == kernels[0]["api_call"] and s["api_call"] is not None
            a = s["attribution"]
            assert s["verified"] is None and a["kernel"] is None and a["differences"] == []
            assert a["why"].startswith("a GRID_NULL QMD runs no kernel")
    assert pairs >= 2


def test_killed_program_leaves_one_call_unfinished():
    m = model("sigkill")
    gt = manifest("sigkill")["ground_truth"]
    assert [c.name for c in m.api.unfinished] in (["cuLaunchKernel"], ["cuLaunchKernel_ptsz"])
    assert [c["name"] for c in m.api_calls if not c["complete"]] == [m.api.unfinished[0].name]
    assert m.stats()["api_calls_unfinished"] == 1
    launches = [a for _, a in kernel_launches(m) if a and a["kernel"]]
    assert len(launches) >= gt["launches_before_kill"]
    assert all(base(a["kernel"]["name"]) == "tick" and a["verified"] for a in launches)


def test_json_carries_api_call_and_verified():
    import io
    import json
    from tracer.report import render_json
    buf = io.StringIO()
    render_json(model("two-streams"), buf)
    doc = json.loads(buf.getvalue())
    ks = [x for x in doc["launches"] if x.get("kernel")]
    assert ks and all("api_call" in x and "verified" in x for x in doc["launches"])
    assert all(x["verified"] is True for x in ks if x["api_call"] and x["api_call"]["name"]
               == "cuLaunchKernel")
    assert doc["api_calls"] and doc["api_calls"][0]["name"] == "cuMemAlloc_v2"


def test_param_bytes_match_the_call_bytes():
    """The argument bytes the call passed (API_ENTER) equal constant bank 0 (QMD)."""
    for launch, a in kernel_launches(model("launch-shapes")):
        if not a or not a["args"]:
            continue
        for arg in a["args"]:
            if arg["api_hex"] is not None:
                assert arg["api_hex"] == arg["hex"]


def test_double_and_struct_arguments_from_shapes():
    """tl_args(int, double, pointer, struct by value, ...): each argument's bytes, placed at
    its offset, rebuild exactly the block the launcher packed (manifest param_bytes)."""
    gt = manifest("launch-shapes")["ground_truth"]
    want, = [l for l in gt["launches"] if l.get("kernel") == "tl_args"]
    got, = [a for _, a in kernel_launches(model("launch-shapes")) if a and a["kernel"]
            and base(a["kernel"]["name"]) == "tl_args"]
    packed = bytes.fromhex(want["param_bytes"])
    rebuilt = bytearray(len(packed))
    for x in got["args"]:
        rebuilt[x["offset"]:x["offset"] + x["size"]] = bytes.fromhex(x["hex"])
    covered = {i for x in got["args"] for i in range(x["offset"], x["offset"] + x["size"])}
    assert all(rebuilt[i] == packed[i] for i in covered)
    assert max(covered) + 1 == len(packed)
    # extern "C" kernels carry no signature: no types, 8-byte values shown as integers
    assert "(" not in got["kernel"]["name"] and all(x["type"] is None for x in got["args"])
    assert all(x["value"] == int.from_bytes(bytes.fromhex(x["hex"]), "little")
               for x in got["args"] if x["size"] in (1, 2, 4, 8))


def test_cubin_layout_applied_to_pointer_windows():
    """Synthetic: a driver without cuFuncGetParamInfo (LAYOUT_UNKNOWN) leaves the shim only
    the windows behind kernelParams; the layout then comes from the kernel's cubin
    (tests/fixtures/cubins/shapes.sm_90.cubin, tl_1d: 8 bytes @0, 4 bytes @8)."""
    from types import SimpleNamespace

    from decoders.cubin import find_cubins
    from decoders.cuda.attribute import Attribution
    from tests.conftest import ROOT
    (_, cubin), = find_cubins(ROOT / "tests/fixtures/cubins/shapes.sm_90.cubin")
    info = cubin.kernel("tl_1d")
    call = SimpleNamespace(param_windows=[struct.pack("<Q", 0x7F0000001000).ljust(64, b"\xee"),
                                          struct.pack("<i", 1 << 20).ljust(64, b"\xee")])
    got = Attribution._from_windows(call, info)
    assert [(p["offset"], p["size"]) for p in got] == [(0, 8), (8, 4)]
    assert [p["bytes"] for p in got] == [struct.pack("<Q", 0x7F0000001000), struct.pack("<i", 1 << 20)]
    assert Attribution._from_windows(SimpleNamespace(param_windows=None), info) is None


def test_a_module_image_without_the_launched_kernel(tmp_path):
    """Synthetic (found by bench/fuzz.py, seed 6): the real builtin-vadd capture with the
    kernel's names in its cubin renamed, so the image no longer holds the kernel that
    cuModuleGetFunction named. The launch decodes and is attributed to `vadd` by its call,
    with no cubin for it; before the fix the decode raised KeyError('vadd')."""
    from tests.conftest import capture_bytes
    data = bytearray(capture_bytes("builtin-vadd"))
    start = data.find(b"\x7fELF")
    end = data.find(b"TLCR", start)         # the next record: the image is all before it
    data[start:end] = bytes(data[start:end]).replace(b"vadd\x00", b"vadx\x00")
    path = tmp_path / "renamed.tlc"
    path.write_bytes(bytes(data))
    m = decode_capture(str(path))
    attributed = [a for _, a in kernel_launches(m)
                  if a and a["kernel"] and not a.get("driver_kernel")]   # (not the memset)
    assert attributed
    for a in attributed:
        assert a["kernel"]["name"] == "vadd"
        assert a["kernel"]["cubin_arch"] is None


def test_sass_of_a_kernel_the_cubin_lacks_is_one_line(tmp_path):
    """`trace-decode sass --kernel NAME` for a name the cubin does not hold: exit 2 and one
    line naming the kernels it has (tl_* are kernels/shapes.cu's, in the fixture)."""
    from click.testing import CliRunner
    from tracer.cli import trace_decode
    from tests.conftest import ROOT
    r = CliRunner().invoke(trace_decode, ["sass", str(ROOT / "tests/fixtures/cubins/shapes.sm_100.cubin"),
                                          "--kernel", "nosuch"])
    assert r.exit_code == 2
    line, = r.output.strip().splitlines()
    assert "no kernel 'nosuch' in this sm_100 cubin" in line and "tl_empty" in line


def test_a_pointer_is_named_as_the_tree_stood_when_its_launch_arrived():
    """jax-jit's cuMemsetD32Async at record 1424 stays its channel's last launch (held for
    later semaphores) until the capture's end, where one decode hands it over; by then the
    program has freed the memory object its destination lies in. Its pointer is named as
    the object tree stood when the launch's submission was decoded (LaunchSink.settle asks
    the tree about a held launch's argument words before the tree changes): the same object
    a tree fed the capture's own ioctls, mmaps and munmaps before record 1424 names. The
    tree at the end names none (before, the report said nothing of the pointer)."""
    from decoders.capture.reader import CaptureReader, open_capture
    from decoders.rm.objects import ObjectTree
    m = decode_capture(capture_file("jax-jit"))
    launch = next(l for l in m.launches if l.record_index == 1424 and l.kernel)
    s, a = launch.summary, m.attribute(launch)
    assert a["api_call"]["name"] == "cuMemsetD32Async"
    dst = a["args"][0]
    then = ObjectTree()
    with open_capture(capture_file("jax-jit")) as f:
        for rec in CaptureReader(f).records():
            if rec.index >= 1424:
                break
            b = rec.body
            if rec.type == "IOCTL":
                then.feed_ioctl(b, pid=rec.pid)
            elif rec.type == "MMAP" and not b.err:
                then.feed_mmap(b.addr, b.length, b.fd, None, b.offset, pid=rec.pid)
            elif rec.type == "MUNMAP" and b.ret == 0:
                then.feed_munmap(b.addr, b.length, pid=rec.pid)
    want = then.resolve_va(dst["value"], pid=s["pid"])
    assert want and "memory object" in want
    assert dst["points_to"] == {"what": want}
    assert m.objects.resolve_va(dst["value"], pid=s["pid"]) is None


def test_pointers_into_mapped_memory_are_named_by_their_mapping():
    """captures/torch-vmm: PyTorch on expandable segments maps physical memory into reserved
    ranges (cuMemAddressReserve, cuMemMap), and unmaps it when the cache is emptied. Every
    argument of a kernel launch that points into one of the allocator's segments (as
    torch.cuda.memory_snapshot() listed them, at three points of the run: the manifest) is
    named by a cuMemMap mapping that lies inside that segment, holds it, and was not unmapped
    between its map and the launch (empty_cache() unmapped the 64 MiB tensor's pages)."""
    gt = manifest("torch-vmm")["ground_truth"]
    assert gt["alloc_conf"] == "expandable_segments:True"
    segments = {(s["address"], s["address"] + s["total_size"])
                for snap in gt["segments"].values() for s in snap}
    assert segments and all(s["is_expandable"] for snap in gt["segments"].values() for s in snap)
    m = model("torch-vmm")
    calls = {c["index"]: c for c in m.api_calls}
    unmaps = [c for c in calls.values() if c["base"] == "cuMemUnmap" and c["result"] == 0]
    assert unmaps
    pointers = 0
    for launch in m.launches:
        s = launch.summary
        if not s["kernel"]:
            continue
        assert s["verified"], s["record_index"]
        for a in s["attribution"]["args"] or []:
            v = a.get("value")
            inside = [(lo, hi) for lo, hi in segments if isinstance(v, int) and lo <= v < hi]
            if not inside:
                continue
            pointers += 1
            p = a.get("points_to")
            assert p is not None and p["call"] == "cuMemMap", (s["record_index"], a)
            assert p["base"] <= v < p["base"] + p["size"] and p["offset"] == v - p["base"]
            assert any(lo <= p["base"] and p["base"] + p["size"] <= hi for lo, hi in inside)
            mapped = calls[p["call_index"]]
            assert mapped["base"] == "cuMemMap" and mapped["args"]["ptr"] == p["base"]
            assert not [u for u in unmaps if p["call_index"] < u["index"] < s["record_index"]
                        and u["args"]["ptr"] <= p["base"] < u["args"]["ptr"] + u["args"]["size"]]
    assert pointers >= 60


def test_an_unmap_ends_every_mapping_that_starts_in_its_range():
    """(Synthetic numbers.) cuMemUnmap takes a range, which may hold several mappings side
    by side (PyTorch maps a segment 2 MiB or 20 MiB at a time and may unmap more at once):
    each of them ends there; another process's, and one starting past the range, do not."""
    from decoders.cuda.allocations import Allocations
    a = Allocations()
    mib = 1 << 20
    base = 0x302000000
    for k in range(3):
        a.add(1, base + 2 * mib * k, 2 * mib, "cuMemMap", 10 + k)
    a.add(2, base, 2 * mib, "cuMemMap", 13)
    assert a.find(base + 3 * mib, 20, 1)[0] == base + 2 * mib
    a.free_range(1, base, 4 * mib, 30)
    assert a.find(base + 1, 31, 1) is None and a.find(base + 3 * mib, 31, 1) is None
    assert a.find(base + 5 * mib, 31, 1)[0] == base + 4 * mib
    assert a.find(base + 1, 31, 2)[0] == base
