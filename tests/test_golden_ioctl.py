"""The ioctl decoders on the recorded captures (captures/*/manifest.json), checked against what
came from the GPU and the driver: the manifest's ground truth and the shim's SUBMISSION records
(the doorbell token libcuda stored, the GPFIFO VA and pushbuffer segments the shim read).
Never against the decoder's own earlier output (STYLE.md 19).

Each test runs on every capture directory; a capture that lacks what a test needs is skipped
with the reason. Coverage targets (issue 5): every escape, class and UVM call named; every
control named or listed non-public (decoders/rm/controls.NON_PUBLIC) and then shown as
class/category/index; params decoded for >= 95% of the calls, and every call whose params are
not decoded explained (ctrlparams.UNDECLARED, controls.NON_PUBLIC, or a capture note).
"""
import functools
import json
from pathlib import Path

import pytest

from decoders import ioctl as I
from decoders.capture.reader import read_capture
from decoders.rm import controls as C
from decoders.rm import ctrlparams as CP
from decoders.rm.classes import class_name
from decoders.rm.objects import ObjectTree

ROOT = Path(__file__).resolve().parents[1] / "captures"
MANIFESTS = sorted(ROOT.glob("*/manifest.json"))
CAPTURE_NAMES = ("capture.tlc.gz", "capture.tlc.zst", "capture.tlc")

GET_NAME_STRING = 0x20800110
WORK_SUBMIT_TOKEN = 0xC36F0108
TL_SF_COPIED = 0x1


def _capture_path(d):
    for name in CAPTURE_NAMES:
        if (d / name).exists():
            return d / name
    return None


@functools.lru_cache(maxsize=None)
def load(name):
    """(manifest, records, [(record, decoded node, info)] for IOCTLs, ObjectTree, branch)."""
    d = ROOT / name
    manifest = json.loads((d / "manifest.json").read_text())
    path = _capture_path(d)
    if path is None:
        pytest.skip(f"{name}: no capture file beside the manifest")
    reader, records = read_capture(str(path))
    records = list(records)
    assert not reader.problems, [str(p) for p in reader.problems]
    bodies = [r.body for r in records if r.type == "IOCTL"]
    branch = I.detect_branch(bodies, default=I.branch_of(manifest.get("driver")) or "580")
    ioctls = []
    tree = ObjectTree(branch)
    for r in records:
        b = r.body
        if r.type == "IOCTL":
            node, builder = I._decode(b, branch)
            ioctls.append((r, node, builder.info))
            tree.feed_ioctl(b, pid=r.pid)
        elif r.type == "MMAP":
            p = bytes(b.path).split(b"\0", 1)[0].decode("utf-8", "replace")
            if b.err == 0:
                tree.feed_mmap(b.addr, b.length, b.fd, p, b.offset, pid=r.pid)
        elif r.type == "MUNMAP":
            tree.feed_munmap(b.addr, b.length, pid=r.pid)
    return manifest, records, ioctls, tree, branch


NAMES = [m.parent.name for m in MANIFESTS]
pytestmark = pytest.mark.skipif(not NAMES, reason="no captures/*/manifest.json in this checkout")


def _controls(ioctls, cmd):
    return [(r, n, i) for r, n, i in ioctls if i.control == cmd and not i.failed]


def _submissions(records):
    return [r.body for r in records if r.type == "SUBMISSION"]


# -- truth from the GPU ------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_gpu_name_string_is_the_manifest_gpu(name):
    manifest, _, ioctls, _, _ = load(name)
    if not manifest.get("gpu"):
        pytest.skip(f"{name}: manifest has no 'gpu'")
    calls = _controls(ioctls, GET_NAME_STRING)
    if not calls:
        pytest.skip(f"{name}: no NV2080_CTRL_CMD_GPU_GET_NAME_STRING in the capture")
    for _, node, info in calls:
        raw = info.params_after["gpuNameString"]
        assert bytes(raw).split(b"\0", 1)[0].decode("ascii") == manifest["gpu"]
        shown = node.find("ioctl.params.out.gpuNameString")
        assert shown is not None and manifest["gpu"] in shown.display


@pytest.mark.parametrize("name", NAMES)
def test_work_submit_token_is_the_doorbell_token(name):
    _, records, ioctls, _, _ = load(name)
    subs = _submissions(records)
    if not subs:
        pytest.skip(f"{name}: no SUBMISSION records (capture made without doorbell trapping)")
    tokens = {}
    for _, _, info in _controls(ioctls, WORK_SUBMIT_TOKEN):
        tokens[info.args_before["hObject"]] = info.params_after["workSubmitToken"]
    assert tokens, "no NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN decoded"
    for s in subs:
        assert s.hChannel in tokens, f"channel {s.hChannel:#x} rang but its token query is missing"
        assert tokens[s.hChannel] == s.token


@pytest.mark.parametrize("name", NAMES)
def test_channel_gpfifo_offset_is_the_submitted_ring(name):
    _, records, ioctls, tree, _ = load(name)
    subs = _submissions(records)
    if not subs:
        pytest.skip(f"{name}: no SUBMISSION records")
    alloc = {}
    for _, _, info in ioctls:
        if info.escape and info.escape.startswith("NV_ESC_RM_ALLOC") and "gpFifoOffset" in info.params_before:
            alloc[info.args_after["hObjectNew"]] = info.params_before
    mmaps = [r.body for r in records if r.type == "MMAP" and r.body.err == 0]
    for s in subs:
        p = alloc[s.hChannel]
        assert p["gpFifoOffset"] == s.gpfifo_va
        assert p["gpFifoEntries"] == s.gp_entries
        r = tree.resolve(s.gpfifo_va)
        assert r is not None, f"GPFIFO {s.gpfifo_va:#x} resolves to nothing"
        assert r.obj.role == "memory"
        # The shim read the entries through a CPU mapping: it must be one the process made.
        assert r.cpu_addr is not None
        assert any(m.addr <= r.cpu_addr < m.addr + m.length for m in mmaps)


@pytest.mark.parametrize("name", NAMES)
def test_pushbuffer_segments_resolve_to_mapped_memory(name):
    _, records, _, tree, _ = load(name)
    subs = _submissions(records)
    segs = [(s, g) for s in subs for g in s.segments]
    if not segs:
        pytest.skip(f"{name}: no pushbuffer segments in SUBMISSION records")
    for s, g in segs:
        r = tree.resolve(g.va)
        assert r is not None, f"segment {g.va:#x} of channel {s.hChannel:#x} resolves to nothing"
        assert r.obj.role == "memory" and r.how == "UVM_MAP_EXTERNAL_ALLOCATION"
        if g.flags & TL_SF_COPIED:
            assert r.cpu_addr is not None
            assert tree.resolve(g.va + g.size - 1).obj is r.obj   # the whole segment, one object


# -- coverage and tables -----------------------------------------------------------------------
# recording commit -> the controls whose params pointers its shim did not yet follow
SHIM_FOLLOWS_LATER = {
    "ae5f5558f536db39921e0310bb6e75c93725e382": {0x00410110},   # followed from 6fa5366
}


@pytest.mark.parametrize("name", NAMES)
def test_coverage_targets(name):
    man, records, ioctls, _, branch = load(name)
    cov = I.coverage([r.body for r in records if r.type == "IOCTL"], branch)
    named = cov["named"]
    assert named["escapes"] == 1.0
    assert named["classes"] == 1.0
    assert named["uvm"] == 1.0
    assert named["controls"] == 1.0          # class and category known for every control
    unnamed = {i.control for _, _, i in ioctls if i.control is not None and not i.control_public}
    assert unnamed <= set(C.NON_PUBLIC), f"unnamed controls not listed non-public: {unnamed - set(C.NON_PUBLIC)}"
    # params_decoded is over every ioctl, the opaque non-public controls included: JAX issues
    # 50 legacy GSS pass-throughs (bit 15) among 758 ioctls (0.92), so the target is on the
    # public ones below, and the rest must each be a listed non-public control
    # issue 18: of the ioctls whose params layout the public headers define, 99 % decoded;
    # every other one is counted by control in params_opaque, and each is a listed non-public
    assert cov["params_decoded_public"] >= 0.99, cov
    assert {int(k, 16) for k in cov["params_opaque"]} <= set(C.NON_PUBLIC), cov["params_opaque"]
    # issue 18: re-recorded with the shim that follows params pointers, every NvP64 field is
    # followed (or NULL); multi-gpu (two GPUs, not re-recordable on one) and sigkill (kept:
    # its kill landed inside a cuLaunchKernel, which a re-recording did not reproduce)
    # predate it and say their pointees are not in the capture
    pointers = set(cov["params_pointers"])
    if name in ("multi-gpu", "sigkill"):
        assert pointers <= {"not_captured", "null"}, cov["params_pointers"]
        return
    assert "followed" in pointers, cov["params_pointers"]
    # A shim follows the pointers of the controls in its table (shim/abi.h) at the commit it
    # was built from. ddp-2rank was recorded at ae5f555 (manifest git_commit), before 6fa5366
    # added NV0041_CTRL_CMD_GET_SURFACE_INFO's surfaceInfoList to that table: its 96 calls'
    # lists are not in the capture. Every other pointer of every capture is followed or NULL.
    late = SHIM_FOLLOWS_LATER.get(man.get("git_commit"), set())
    missed = {i.control for _, _, i in ioctls if "not_captured" in i.pointers}
    assert missed <= late, sorted(map(hex, missed - late))
    assert pointers <= {"followed", "null"} | ({"not_captured"} if missed else set()), \
        cov["params_pointers"]


@pytest.mark.parametrize("name", NAMES)
def test_every_control_and_class_seen_is_in_the_tables(name):
    _, _, ioctls, _, branch = load(name)
    for _, node, info in ioctls:
        if info.control is not None:
            c = C.control_info(info.control, branch)
            assert c.public or info.control in C.NON_PUBLIC, f"{info.control:#010x}"
            if not c.public:   # shown as class/category/index with the reason
                shown = node.find("ioctl.control").display
                assert f"idx {c.index:#04x}" in shown and "non-public" in shown
        if info.hclass is not None:
            assert class_name(info.hclass, branch)[0], f"class {info.hclass:#06x}"


@pytest.mark.parametrize("name", NAMES)
def test_declared_control_params_have_the_callers_size(name):
    _, _, ioctls, _, _ = load(name)
    for _, _, info in ioctls:
        row = CP.CTRL_PARAMS.get(info.control)
        if row is None:
            continue
        size = info.args_before["paramsSize"]
        spec = row[1]
        if isinstance(spec, CP.LIST):
            assert (size - spec.head.sizeof()) % spec.entry.sizeof() == 0, f"{info.control:#x}"
        else:
            assert spec.sizeof() == size, f"{row[0]}: sizeof {spec.sizeof()} != paramsSize {size}"


@pytest.mark.parametrize("name", NAMES)
def test_every_undecoded_call_is_explained(name):
    _, _, ioctls, _, _ = load(name)
    for _, _, info in ioctls:
        if info.params_decoded:
            continue
        if info.control is not None:
            assert info.control in CP.UNDECLARED or info.control in C.NON_PUBLIC, f"{info.control:#010x}"
        else:
            assert info.notes, f"{info.escape} class {info.hclass}: undecoded without a note"


# -- object tree -------------------------------------------------------------------------------
# RM handles, UVM bases and CPU addresses are per process: the two ranks of ddp-2rank allocate
# the same handles and map the same UVM bases in their own address spaces, so each fact below
# is checked in the tree of the process whose record states it.
@pytest.mark.parametrize("name", NAMES)
def test_object_tree_channels_and_memory(name):
    _, records, ioctls, tree, _ = load(name)
    subs = [r for r in records if r.type == "SUBMISSION"]
    if not subs:
        pytest.skip(f"{name}: no SUBMISSION records")
    for pid, h in {(r.pid, r.body.hChannel) for r in subs}:
        proc = tree.view(pid)
        ch = proc.channels[h]
        assert None not in (ch.token, ch.gpfifo_va, ch.entries, ch.userd_memory, ch.userd_offset,
                            ch.runlist)
        assert ch.engine not in (None, "NULL")
        userd = proc.objects[ch.userd_memory]
        assert userd.cpu_mappings, "USERD (GP_PUT) must be CPU-mapped for the shim to read it"
    # Every successful UVM_MAP_EXTERNAL_ALLOCATION gave its memory object a GPU VA, and a
    # successful UVM_FREE of that base took it away again. Replayed here from the calls alone:
    # the tree must hold exactly the mappings still live at the end, each on its hMemory.
    # (torch-small: PyTorch's caching allocator grows a block at records 909-913: UVM_FREE of
    # 0x7f98fa000000, RM_FREE of hMemory 0x5c000094, RM_ALLOC of a larger memory under the SAME
    # handle, and a map of it at 0x7f98da000000; 37 maps, 36 live at the end.)
    live, n_uvm = {}, 0
    for r, _, i in ioctls:
        if i.failed:
            continue
        if i.escape == "UVM_MAP_EXTERNAL_ALLOCATION":
            n_uvm += 1
            live[(r.pid, i.args_before["base"])] = i.args_before["hMemory"]
        elif i.escape == "UVM_FREE":
            live.pop((r.pid, i.args_before["base"]), None)
    got = {(pid, m["va"]): o.handle for pid, proc in tree.processes.items()
           for o in proc.objects.values() for m in o.gpu_mappings
           if m["via"] == "UVM_MAP_EXTERNAL_ALLOCATION"}
    assert n_uvm > 0
    assert got == live
    assert not tree.notes


@pytest.mark.parametrize("name", NAMES)
def test_object_tree_follows_dup_and_import(name):
    """Objects that no RM_ALLOC made: each successful RM_DUP_OBJECT's hObject (multi-gpu: 8,
    libcuda duping pinned host memory onto the other GPU's device) is in its process's tree
    under hParent with the class of the object hObjectSrc names there (its last RM_ALLOC
    before the dup), and each object an OS_UNIX_IMPORT_OBJECTS_FROM_FD imported (ddp-2rank:
    48 per rank) is there under hParent, as memory of the imported type."""
    _, _, ioctls, tree, _ = load(name)
    alloc, n = {}, 0
    for r, _, i in ioctls:
        if i.failed:
            continue
        a = {**i.args_before, **i.args_after}
        if i.escape in ("NV_ESC_RM_ALLOC", "NV_ESC_RM_ALLOC_MEMORY"):
            alloc[(r.pid, a["hObjectNew"])] = a["hClass"]
        elif i.escape == "NV_ESC_RM_DUP_OBJECT":
            n += 1
            o = tree.view(r.pid).objects[a["hObject"]]
            assert (o.parent, o.hclass) == (a["hParent"], alloc.get((r.pid, a["hObjectSrc"])))
            alloc[(r.pid, a["hObject"])] = o.hclass
        elif i.control == 0x3D0C:
            p = i.params_after
            for h, kind in zip(p["objects"][:p["numObjects"]], p["objectTypes"][:p["numObjects"]]):
                if kind:
                    n += 1
                    o = tree.view(r.pid).objects[h]
                    assert (o.parent, o.hclass, o.role) == (p["hParent"], None, "memory")
                    assert o.class_name.endswith(("VIDMEM", "SYSMEM", "FABRIC", "FABRIC_MC"))
    if not n:
        pytest.skip(f"{name}: no RM_DUP_OBJECT or OS_UNIX_IMPORT_OBJECTS_FROM_FD")


@pytest.mark.parametrize("name", NAMES[:1])
def test_control_structs_round_trip_on_recorded_bytes(name):
    """STYLE.md 20: bytes cut from the recording -> obj -> bytes, compiled == core."""
    _, records, ioctls, _, _ = load(name)
    seen = set()
    for r, _, info in ioctls:
        row = CP.CTRL_PARAMS.get(info.control)
        if row is None or isinstance(row[1], CP.LIST) or info.control in seen:
            continue
        buf = next((b for b in r.body.buffers if b.role == I.TL_BUF_RM_CONTROL_PARAMS), None)
        if buf is None or not buf.flags & I.TL_BF_AFTER:
            continue
        seen.add(info.control)
        st, data = row[1], bytes(buf.after)[:row[1].sizeof()]
        obj = st.parse(data)
        rebuilt = st.build(obj)
        # Padding rebuilds as zeros; RM left it zero in every recorded reply.
        assert rebuilt == data, row[0]
        assert st.compile().parse(data) == obj, row[0]
    assert len(seen) >= 20
