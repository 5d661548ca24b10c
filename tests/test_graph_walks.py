"""Graph replays matched to walked nodes and launches named by the driver (issue 25), on
captures/graph-replay (H100) rewritten into synthetic-* copies: the walk the shim would
have recorded at cuGraphInstantiateWithFlags is made here from the program's own
stream-captured launches, and the calls the decoder matched replays with before are
marked failed, so the walk is the only truth left. The unchanged capture decodes as
before (tests/test_real_workloads.py, the goldens).
"""
import struct

import pytest

from decoders.capture import format as F
from decoders.capture.writer import _record_walk
from decoders.cuda import api as A
from decoders.cuda import types as T
from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_bytes, capture_file

_API = F.TL_API
_API_TYPES = (F.TL_REC_BY_NAME["API_ENTER"], F.TL_REC_BY_NAME["API_EXIT"])
SEC = A.SECTION_BY_NAME


def _records(name):
    data = capture_bytes(name)
    head = data[:F.TL_HEADER_SIZE]
    out = []
    for off, length, rtype, flags in _record_walk(data, F.TL_HEADER_SIZE, len(data)):
        h = F.TL_RECORD_HEADER.parse(data[off:off + F.TL_RECORD_HEADER_SIZE])
        body = data[off + F.TL_RECORD_HEADER_SIZE:off + length]
        out.append([h, _API.parse(body) if rtype in _API_TYPES else body])
    return head, out


def _write(path, head, records):
    """The records again (API bodies rebuilt), the header's and END's cursors fixed."""
    blobs, off = [], F.TL_HEADER_SIZE
    end_type = F.TL_REC_BY_NAME["END"]
    for h, body in records:
        if not isinstance(body, bytes):
            body = _API.build(dict(body, nsections=len(body["sections"])))
        if h.type == end_type:
            body = F.TL_END.build(dict(exit_status=0, reserved0=0, cursor=off))
        header = F.TL_RECORD_HEADER.build(dict(h, length=F.TL_RECORD_HEADER_SIZE + len(body)))
        blobs.append(header + body)
        off += len(header) + len(body)
    head = bytearray(head)
    head[F.TL_CURSOR_OFFSET:F.TL_CURSOR_OFFSET + 8] = struct.pack("<Q", off)
    path.write_bytes(bytes(head) + b"".join(blobs))
    return path


def _section(tag, data, flags=0):
    return dict(tag=SEC[tag], size=len(data), flags=flags, full_size=len(data), data=data)


def _node(graph, node, launch, sections):
    """GRAPH_NODE of a kernel node made from a launch call's record, then its arguments."""
    a = {s.tag: s for s in launch.sections}
    words = launch.args
    kp = T.CUDA_KERNEL_NODE_PARAMS_v2.build(dict(
        func=words[0], gridDimX=words[1], gridDimY=words[2], gridDimZ=words[3],
        blockDimX=words[4], blockDimY=words[5], blockDimZ=words[6], sharedMemBytes=words[7],
        kernelParams=0, extra=0, kern=0, ctx=0))
    head = T.TL_GRAPH_NODE.build(dict(graph=graph, node=node, parent=0, type=0, depth=0, body=0,
                                      flags=0, params_size=len(kp), params=kp))
    sections.append(_section("GRAPH_NODE", head))
    for tag in ("PARAM_LAYOUT", "PARAM_DATA"):
        s = a[SEC[tag]]
        sections.append(dict(tag=s.tag, size=s.size, flags=s.flags, full_size=s.full_size,
                             data=s.data))


def _synthetic(tmp_path, name, change_bytes=False, names=False):
    """captures/graph-replay with a walk on cuGraphInstantiateWithFlags made of its two
    stream-captured launches (node handles 0x7001, 0x7002 of graph 0x6100), those
    launches marked failed; `change_bytes`: the second node's first argument byte differs
    from what the replays ran; `names`: the kernel lookups marked failed too and the walk
    names the function (FUNCTION_NAME, parent the library load's handle)."""
    head, recs = _records("graph-replay")
    by_slot = {f.name: f.slot for f in A.FUNCTIONS}
    enters = [(h, b) for h, b in recs if h.type == _API_TYPES[0]]
    exits = {(h.pid, b.call): b for h, b in recs if h.type == _API_TYPES[1]}
    launches = [b for h, b in enters if b.slot == by_slot["cuLaunchKernel"]]
    assert len(launches) == 2
    (inst,) = [b for h, b in enters if b.slot == by_slot["cuGraphInstantiateWithFlags"]]
    (lib,) = [b for h, b in enters if b.slot == by_slot["cuLibraryLoadData"]]
    pid = recs[[b is inst for _, b in recs].index(True)][0].pid
    walk = T.TL_GRAPH_WALK.build(dict(graph=0x6100, parent=0, nodes=2, kernels=2, flags=0,
                                      reserved0=0))
    sections = [_section("GRAPH_WALK", walk)]
    for i, launch in enumerate(launches):
        _node(0x6100, 0x7001 + i, launch, sections)
        exits[(pid, launch.call)]["result"] = 1       # not a node the decoder can use
    if change_bytes:
        data = bytearray(sections[-1]["data"])
        data[0] ^= 0xFF
        sections[-1]["data"] = bytes(data)
    if names:
        library = exits[(pid, lib.call)]["sections"][0]["data"]
        for slot in ("cuLibraryGetKernel", "cuKernelGetFunction"):
            for h, b in enters:
                if b.slot == by_slot[slot]:
                    exits[(h.pid, b.call)]["result"] = 500
        mangled = b"_Z9scale_addPfiff"
        fn = T.TL_FUNCTION_NAME.build(dict(handle=launches[0].args[0],
                                           parent=struct.unpack("<Q", library)[0], flags=0,
                                           name_len=len(mangled), name=mangled))
        sections.insert(1, _section("FUNCTION_NAME", fn))
    inst["sections"] = sections
    return _write(tmp_path / "synthetic-graph-walk.tlc", head, recs)


def _replays(model):
    return [s for s in (launch.summary for launch in model.launches)
            if s["kernel"] and s["api_call"] and s["api_call"]["name"] == "cuGraphLaunch"]


def test_replays_verified_against_the_walk_alone(tmp_path):
    """Every QMD of the 3 replays matches a walked node (the stream-captured launches no
    longer count), named and verified as before."""
    model = decode_capture(_synthetic(tmp_path, "walk"))
    before = _replays(decode_capture(capture_file("graph-replay")))
    got = _replays(model)
    (inst,) = [c for c in model.api_calls if c["name"] == "cuGraphInstantiateWithFlags"]
    assert inst["graph"]["walk"]["kernels"] == 2
    assert len(got) == len(before) == 6
    for s, old in zip(got, before):
        gn = s["attribution"]["graph_node"]
        assert s["verified"] is True, s["attribution"]["differences"]
        assert gn["call"] == "cuGraphInstantiateWithFlags" and gn["index"] == inst["index"]
        assert gn["exec"] == inst["out"] and gn["graph"] == 0x6100 and gn["path"] == []
        assert s["attribution"]["kernel"] == old["attribution"]["kernel"]
        assert s["attribution"]["checked"] == old["attribution"]["checked"]
    nodes = [s["attribution"]["graph_node"]["node"] for s in got]
    assert [sorted(nodes[i:i + 2]) for i in (0, 2, 4)] == [[0x7001, 0x7002]] * 3


def test_a_node_the_replay_did_not_run_is_not_checked_and_says_why(tmp_path):
    """The walk is the truth: with the second node's bytes changed, its QMDs match nothing
    (no fallback to other calls) and say what the capture holds for the exec."""
    got = _replays(decode_capture(_synthetic(tmp_path, "bytes", change_bytes=True)))
    assert sorted(map(str, (s["verified"] for s in got))) == ["None"] * 3 + ["True"] * 3
    assert {s["attribution"]["graph_node"]["node"] for s in got if s["verified"]} == {0x7001}
    (why,) = {s["attribution"]["why"] for s in got if s["verified"] is None}
    assert why.startswith("cuGraphLaunch runs graph exec 0x") and \
        "none of the 2 kernel nodes the capture holds for it (cuGraphInstantiateWithFlags" in why


def test_a_function_named_by_the_driver_gets_its_cubin(tmp_path):
    """No lookup names the function (cuLibraryGetKernel and cuKernelGetFunction failed):
    the walk's FUNCTION_NAME does, and its parent is the library load, whose cubin gives
    the kernel's parameters and static shared memory as a lookup would have."""
    model = decode_capture(_synthetic(tmp_path, "names", names=True))
    before = _replays(decode_capture(capture_file("graph-replay")))
    got = _replays(model)
    for s, old in zip(got, before):
        k, was = s["attribution"]["kernel"], old["attribution"]["kernel"]
        assert s["verified"] is True
        assert (k["name"], k["mangled"], k["image_call"]) == (was["name"], was["mangled"],
                                                              was["image_call"])
        assert k["named_by"] == "cuFuncGetName"
        assert s["attribution"]["shared_memory"] == old["attribution"]["shared_memory"]
        assert [a["type"] for a in s["attribution"]["args"]] == \
            [a["type"] for a in old["attribution"]["args"]]


class _Call:
    """What GraphExecs reads of a call: its name and index, and a set call's launch."""
    def __init__(self, index, grid=None, args=None):
        self.name, self.index, self.sections, self.bound = "cuGraphExecKernelNodeSetParams_v2", \
            index, {}, None
        self.launch_config = None if grid is None else {
            "function": 1, "grid": grid, "block": [128, 1, 1], "shared_memory_bytes": 0,
            "stream": None, "cluster": None, "cooperative": False, "attributes": []}
        self.params = None if args is None else [
            {"index": 0, "offset": 0, "size": 8, "bytes": args}]


def test_a_replay_sees_the_node_setting_of_its_own_time():
    """XLA sets a scan body's nodes to alternating argument sets between replays
    (captures/jax-loops records 10670, 10730): a replay attributed after later sets were
    fed is matched with the setting current at its own call."""
    from decoders.cuda import graphs as G

    class _Graph:
        nodes = []
    execs = G.GraphExecs()
    walk = _Call(10)
    n = G._from_call(_Call(10, [16, 1, 1], b"A" * 8), 0x77)
    _Graph.nodes = [n]
    execs.set_walk(0xE, walk, _Graph)
    execs.set_node(0xE, 0x77, _Call(20, [16, 1, 1], b"B" * 8))
    execs.set_node(0xE, 0x77, _Call(30, [16, 1, 1], b"A" * 8))
    execs.set_node(0xE, 0x77, _Call(40, [4, 1, 1], b"C" * 8))
    at = {i: execs.candidates(0xE, [16, 1, 1], [128, 1, 1], i) for i in (15, 25, 35, 45)}
    assert [c[0].params[0]["bytes"] for c in (at[15], at[25], at[35])] == [b"A" * 8, b"B" * 8,
                                                                              b"A" * 8]
    assert at[45] == [] == execs.candidates(0xE, [16, 1, 1], [128, 1, 1])
    assert execs.candidates(0xE, [4, 1, 1], [128, 1, 1], 45)[0].params[0]["bytes"] == b"C" * 8
    assert execs.candidates(0xE, [4, 1, 1], [128, 1, 1], 35) == []
    assert execs.candidates(0xF, [4, 1, 1], [128, 1, 1], 35) is None


def test_jax_loops_scan_replays_match_cuptis_kernels():
    """captures/jax-loops: every distinct (name, grid, block, registers) CUPTI lists for the
    scan's graph replays is among the graph-node-matched, verified QMDs of cuGraphLaunch."""
    from tests.conftest import manifest
    truth = manifest("jax-loops")["ground_truth"]["scan"]["cupti"]["kernels"]
    model = decode_capture(capture_file("jax-loops"))
    got = {(s["attribution"]["kernel"]["name"], tuple(s["grid"]), tuple(s["block"]),
            s["registers"]) for s in _replays(model)
           if s["verified"] and s["attribution"]["graph_node"]}
    want = {(k["name"], tuple(k["grid"]), tuple(k["block"]), k["registers"]) for k in truth
            if k["name"] != "loop_broadcast_fusion"}     # launched on the stream, not a node
    assert len(want) == 11 and want <= got
    # 11 calls (a first one before the profiler's 10) of 6 replays of 11 kernel nodes
    verified = [s for s in _replays(model) if s["verified"] and s["attribution"]["graph_node"]]
    assert len(verified) >= 66 * 11


def test_jax_loops_each_scan_replay_runs_cuptis_kernels_once():
    """captures/jax-loops: CUPTI lists 11 kernels per cuGraphLaunch of the scan (one
    correlation id each). Each of the 66 replays, the later ones whose nodes the driver
    rewrites and sends again after the head's chain reached them included, gives that
    many kernel QMDs, every one verified against its graph node."""
    from collections import Counter

    from tests.conftest import manifest
    truth = manifest("jax-loops")["ground_truth"]["scan"]["cupti"]["kernels"]
    per_call = Counter(k["correlation"] for k in truth
                       if k["name"] != "loop_broadcast_fusion")    # on the stream, not a node
    (want,) = set(per_call.values())
    model = decode_capture(capture_file("jax-loops"))
    replays = Counter(s["api_call"]["index"] for s in _replays(model))
    assert want == 11 and len(replays) == 66 and set(replays.values()) == {want}
    assert all(s["verified"] and s["attribution"]["graph_node"] for s in _replays(model))


def test_exec_handle_instantiated_again_keeps_each_generation():
    """A graph exec handle the driver hands out again after the first exec is destroyed
    (captures/jax-cmdbuf: cuGraphInstantiateWithFlags records 1068 and 1104 both returned
    0x391e1860) names two graphs: a replay, attributed after later calls were fed, is
    matched against the walk current at its own call, and the latest only after that."""
    from decoders.cuda import graphs as G

    class _First:
        nodes = [G._from_call(_Call(10, [16, 1, 1], b"A" * 8), 0x77)]

    class _Second:
        nodes = [G._from_call(_Call(30, [8, 1, 1], b"B" * 8), 0x77)]
    execs = G.GraphExecs()
    execs.set_walk((1, 0xE), _Call(10), _First)
    execs.set_walk((1, 0xE), _Call(30), _Second)
    assert execs.candidates((1, 0xE), [16, 1, 1], [128, 1, 1], 20)[0].params[0]["bytes"] == b"A" * 8
    assert execs.candidates((1, 0xE), [8, 1, 1], [128, 1, 1], 20) == []
    assert execs.candidates((1, 0xE), [8, 1, 1], [128, 1, 1], 35)[0].params[0]["bytes"] == b"B" * 8
    assert execs.source((1, 0xE), 20).index == 10 and execs.source((1, 0xE)).index == 30
    assert execs.candidates((1, 0xE), [16, 1, 1], [128, 1, 1], 5) is None   # before both
    assert execs.candidates((2, 0xE), [16, 1, 1], [128, 1, 1], 20) is None  # another process
    for k in range(G.GraphExecs.GENERATIONS + 5):          # bounded, whatever the run's length
        execs.set_walk((1, 0xE), _Call(40 + k), _Second)
    assert len(execs._execs[(1, 0xE)]) == G.GraphExecs.GENERATIONS


def test_jax_cmdbuf_replays_are_matched_to_the_generation_they_ran(tmp_path):
    """captures/jax-cmdbuf: no cuGraphLaunch QMD is reported against an instantiate that
    came after it."""
    if not (capture_file("jax-cmdbuf")).exists():
        pytest.skip("captures/jax-cmdbuf not in this tree")
    model = decode_capture(capture_file("jax-cmdbuf"))
    import re
    for s in _replays(model):
        why = (s.get("attribution") or {}).get("why") or ""
        m = re.search(r"record (\d+), and the exec-level sets", why)
        assert m is None or int(m.group(1)) < s["api_call"]["index"], why
