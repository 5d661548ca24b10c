"""CUDA graphs with conditional nodes (issue 25, docs/graphs.md): the driver's kernels of a
replay named by their node (MEMCPY / MEMSET nodes as the driver's copy and memset kernels,
the conditional-node kernel), and body launches placed in their conditional body.

The synthetic tests (synthetic-* graphs: handles, addresses and bytes made up here) drive
decoders/cuda/attribute.py with graph nodes made the way the walk's are; the jax-cmdbuf
tests read captures/jax-cmdbuf (scripts/corpus/jax_cmdbuf.py on the H100), whose counts
docs/graphs.md gives."""
import struct
from collections import Counter
from types import SimpleNamespace

import pytest

from decoders.cuda import driverkernels as DK
from decoders.cuda import graphs as G
from decoders.cuda import types as T
from decoders.cuda.attribute import Attribution
from tests.conftest import CAPTURES, capture_file

EXEC, GRAPH, BODY = 0x8801, 0x6601, 0x6602


def _node(graph, node, ntype, params, parent=0, body=0, path=(),
          by=("cuGraphInstantiateWithFlags", 100)):
    head = G._NODE.parse(G._NODE.build(dict(graph=graph, node=node, parent=parent, type=ntype,
                                            depth=1 if parent else 0, body=body, flags=0,
                                            params_size=len(params), params=params)))
    n = G.GraphNode(SimpleNamespace(name=by[0], index=by[1]), head)   # the call that recorded it
    n.finish()
    n.path = path
    return n


def _memcpy(dst, src, width):
    return T.CUDA_MEMCPY3D.build(dict(
        srcXInBytes=0, srcY=0, srcZ=0, srcLOD=0, srcMemoryType=2, srcHost=0, srcDevice=src,
        srcArray=0, reserved0=0, srcPitch=0, srcHeight=0, dstXInBytes=0, dstY=0, dstZ=0,
        dstLOD=0, dstMemoryType=2, dstHost=0, dstDevice=dst, dstArray=0, reserved1=0,
        dstPitch=0, dstHeight=0, WidthInBytes=width, Height=1, Depth=1))


class _Replay:
    """What Attribution reads of a cuGraphLaunch call (synthetic)."""
    kind, base, name, pid, ordered, graph, names_seen = "PLAIN", "cuGraphLaunch", \
        "cuGraphLaunch", 1, None, None, None

    def __init__(self, index=200):
        self.index = index
        self.args = {"hGraphExec": EXEC, "hStream": 0}
        self.out = None

    def api_call_json(self):
        return {"name": self.name, "index": self.index, "launch": None, "t_start": 0}


class _Qmd:
    def __init__(self, grid, block, params):
        self._summary = {"kernel": True, "qmd_type": "GRID_CTA", "grid": grid, "block": block,
                         "cluster": None, "shared_memory_bytes": 1024, "pid": 1,
                         "shared_memory_driver_reserved_bytes": 1024, "program_address": 0x1000,
                         "params": {"hex": params.hex(), "size": len(params), "offset": 0x210,
                                    "uploaded": True}}
        self.record_index = 300


def _attribution():
    """A synthetic-WHILE exec: a MEMCPY node (0x100 bytes), a WHILE node (handle 1, one body)
    and, in the body, one kernel node."""
    attr = Attribution(None)
    cond = T.CUDA_CONDITIONAL_NODE_PARAMS.build(dict(
        handle=1, type=1, size=1, phGraph_out=0, ctx=0)) + struct.pack("<Q", BODY)
    nodes = [_node(GRAPH, 0x7001, 1, _memcpy(0x7f0000002000, 0x7f0000001000, 0x100)),
             _node(GRAPH, 0x7002, 13, cond)]
    kern = _node(BODY, 0x7003, 0, b"", parent=0x7002,
                 path=((0x7002, "CONDITIONAL WHILE", 0),))
    kern.launch_config = {"function": 0x1000, "grid": [4, 1, 1], "block": [64, 1, 1],
                          "shared_memory_bytes": 0, "stream": None, "cluster": None,
                          "cooperative": False, "attributes": []}
    kern.params = [{"index": 0, "offset": 0, "size": 8, "bytes": struct.pack("<Q", 0xABCD)}]
    kern.bound = (None, None)
    nodes.append(kern)
    attr.execs.set_walk((1, EXEC), SimpleNamespace(name="cuGraphInstantiateWithFlags", index=100),
                        SimpleNamespace(nodes=nodes))
    return attr, cond


def test_synthetic_memcpy_node_runs_as_the_driver_copy_and_is_checked():
    attr, _ = _attribution()
    a = attr.for_launch(_Qmd([1, 1, 1], [256, 1, 1],
                             struct.pack("<QQQ", 0x7f0000002000, 0x7f0000001000, 0x40)), _Replay())
    assert a["kernel"]["name"] == "[driver copy, graph MEMCPY node]"
    assert a["verified"] is True and {"dst", "src", "count", "grid"} <= set(a["checked"])
    assert a["graph_node"]["node"] == 0x7001 and a["graph_node"]["exec"] == EXEC
    # the copy's count is not the node's: a mismatch, field by field
    a = attr.for_launch(_Qmd([1, 1, 1], [256, 1, 1],
                             struct.pack("<QQQ", 0x7f0000002000, 0x7f0000001000, 0x41)), _Replay())
    assert a["verified"] is False and [d["field"].split()[0] for d in a["differences"]] == ["count"]


def test_synthetic_copy_the_capture_holds_no_node_for_is_named_not_checked():
    attr, _ = _attribution()
    a = attr.for_launch(_Qmd([1, 1, 1], [256, 1, 1],
                             struct.pack("<QQQ", 0x7f0000009000, 0x7f0000008000, 0x40)), _Replay())
    assert a["kernel"]["name"] == "[driver copy, graph MEMCPY node]" and a["verified"] is None
    assert "cuGraphExecMemcpyNodeSetParams" in a["why"] and "0x7f0000009000" in a["why"]


def test_synthetic_conditional_kernel_is_checked_for_its_node_and_body():
    """The end kernel of body 0 follows the body's last kernel node: node and word0 checked
    (2 for a WHILE of one body, measured); the node's own kernel (word0 0) has the end
    kernel's pointer0/pointer1: node checked. Without the body node before it, or with
    another word0, it is not verified."""
    attr, _ = _attribution()
    body = _Qmd([4, 1, 1], [64, 1, 1], struct.pack("<Q", 0xABCD))
    assert attr.for_launch(body, _Replay())["graph_node"]["node"] == 0x7003
    for word0, role, checked in ((2, "at the end of body 0", ["node", "word0"]),
                                 (0, "its own, sent last", ["node"])):
        a = attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1],
                                 struct.pack("<IIQQQ", word0, 1, 0x10, 0x20, 0x30)), _Replay())
        assert a["kernel"]["name"] == "[driver kernel, conditional node]"
        assert a["verified"] is True and a["checked"] == checked, a
        assert role in a["why"] and "0x7002 (WHILE" in a["why"]
        assert a["graph_node"]["node"] == 0x7002
        assert [x["value"] for x in a["args"]] == [word0, 1, 0x10, 0x20, 0x30]
        assert {u["field"] for u in a["unchecked"]} == {"word1", "pointer0, pointer1, pointer2"}
    # a body end whose word0 is not the one measured for body 0 of a one-body WHILE
    attr.for_launch(body, _Replay(201))
    a = attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1], struct.pack("<IIQQQ", 5, 1, 0x10, 0x20, 0x30)),
                        _Replay(201))
    assert a["verified"] is False and a["differences"][0]["qmd"] == 5
    # no body node before it in this replay: named, which node not checked; and the node's
    # own kernel of another pointer pair is then not checked either
    a = attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1], struct.pack("<IIQQQ", 2, 1, 0x10, 0x20, 0x30)),
                        _Replay(202))
    assert a["kernel"]["name"] == "[driver kernel, conditional node]" and a["verified"] is None
    a = attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1], struct.pack("<IIQQQ", 0, 1, 0x50, 0x60, 0x30)),
                        _Replay(202))
    assert a["verified"] is None and "node" in {u["field"] for u in a["unchecked"]}
    # another shape: not taken for it
    a = attr.for_launch(_Qmd([1, 1, 1], [64, 1, 1], struct.pack("<IIQQQ", 0, 1, 1, 2, 3)),
                        _Replay(203))
    assert a["kernel"] is None or a["kernel"]["name"] != "[driver kernel, conditional node]"


def test_synthetic_body_launch_says_its_conditional_body():
    attr, _ = _attribution()
    a = attr.for_launch(_Qmd([4, 1, 1], [64, 1, 1], struct.pack("<Q", 0xABCD)), _Replay())
    assert a["verified"] is True and a["graph_node"]["node"] == 0x7003
    c = a["graph_node"]["conditional"]
    assert (c["type"], c["body"], c["node"], c["ran"], c["iteration"]) == \
        ("WHILE", 0, 0x7002, None, None)
    assert "not in the capture" in c["why"]


def test_synthetic_exec_memcpy_set_moves_the_node():
    """An exec-level cuGraphExecMemcpyNodeSetParams (GRAPH_COPY_NODE) replaces the node for
    the replays after it, keeping where the walk put it."""
    attr, _ = _attribution()
    moved = _node(0, 0x7001, 1, _memcpy(0x7f0000009000, 0x7f0000008000, 0x100),
                  by=("cuGraphExecMemcpyNodeSetParams", 150))
    call = SimpleNamespace(kind="GRAPH_COPY_NODE", result=0, ordered=None, names_seen=None, pid=1,
                           args={"hGraphExec": EXEC, "hNode": 0x7001}, index=150,
                           name="cuGraphExecMemcpyNodeSetParams", graph=SimpleNamespace(
                               nodes=[moved], names=[]))
    attr.observe(call)
    a = attr.for_launch(_Qmd([1, 1, 1], [256, 1, 1],
                             struct.pack("<QQQ", 0x7f0000009000, 0x7f0000008000, 0x40)), _Replay())
    assert a["verified"] is True and a["graph_node"]["call"] == "cuGraphExecMemcpyNodeSetParams"
    assert a["graph_node"]["graph"] == GRAPH
    # a replay before the set still ran the node as instantiated
    a = attr.for_launch(_Qmd([1, 1, 1], [256, 1, 1],
                             struct.pack("<QQQ", 0x7f0000002000, 0x7f0000001000, 0x40)), _Replay(120))
    assert a["verified"] is True and a["graph_node"]["index"] == 100


# -- captures/jax-cmdbuf (XLA's WHILE command buffers, recorded on the H100) -----------------

@pytest.fixture(scope="module")
def cmdbuf():
    from decoders.session import decode_capture
    return decode_capture(str(capture_file("jax-cmdbuf")))


def test_cmdbuf_every_kernel_named_and_checked(cmdbuf):
    kernels = [l.summary for l in cmdbuf.launches if l.summary["kernel"]]
    att = [s["attribution"] for s in kernels]
    assert all((a["kernel"] or {}).get("name") for a in att)
    assert all(a["verified"] is True for a in att)
    # the driver's kernel for a conditional node, 2 per replay of an exec that has one
    # (docs/graphs.md): 22 replays of the 3 WHILE execs (1 + 11 + 10); the body's end
    # kernel checked for its node and body, the node's own for its node
    cond = Counter((a["args"][0]["value"], tuple(a["checked"])) for a in att
                   if a["kernel"]["name"] == "[driver kernel, conditional node]")
    whiles = {g for g, n in _body_launches(cmdbuf)}
    replays = sum(1 for c in cmdbuf.api_calls if c["name"] == "cuGraphLaunch"
                  and c["args"]["hGraphExec"] in whiles)
    assert replays == 22 and cond == {(2, ("node", "word0")): replays, (0, ("node",)): replays}
    assert cmdbuf.verified == {"verified": len(kernels)}


def _body_launches(model):
    """(exec, body node) of every launch the decode placed in a conditional body."""
    out = []
    for l in model.launches:
        gn = (l.summary.get("attribution") or {}).get("graph_node") or {}
        if gn.get("conditional"):
            assert gn["conditional"]["type"] == "WHILE" and gn["conditional"]["iteration"] is None
            out.append((gn["exec"], gn["node"]))
    return out


def test_cmdbuf_bodies_once_per_replay(cmdbuf):
    """Each body kernel node runs once per replay of its exec in the capture (the GPU's
    further iterations are not in it: docs/graphs.md), each launch saying its WHILE body."""
    body = Counter(_body_launches(cmdbuf))
    replays = Counter(c["args"]["hGraphExec"] for c in cmdbuf.api_calls
                      if c["name"] == "cuGraphLaunch")
    assert body and len({e for e, _ in body}) == 3
    for (exec_, _), n in body.items():
        assert n == replays[exec_]
    # the scan body (13 kernel nodes: jax_loops.py's value_and_grad step) and the while
    # body (5), per exec
    per_exec = Counter(e for e, _ in body)
    assert sorted(per_exec.values()) == [5, 13, 13]


def test_synthetic_switch_bodies_alike_are_not_a_mismatch():
    """A SWITCH of 3 whose bodies 0 and 2 hold alike kernel nodes (same kernel, grid, block,
    argument bytes): the QMD sent first (body 2's: the driver sends bodies 2, 1, 0) matches
    body 0's node, so its end kernel's word0 (4: body 2, measured) is not body 0's (6). The
    decode takes it for body 2 and reports no difference; a word0 of no alike body still
    differs."""
    attr = Attribution(None)
    sw = 0x7102
    cond = T.CUDA_CONDITIONAL_NODE_PARAMS.build(dict(
        handle=1, type=2, size=3, phGraph_out=0, ctx=0)) + struct.pack("<QQQ", 0x6701, 0x6702, 0x6703)
    nodes = [_node(GRAPH, sw, 13, cond)]
    for b, arg in ((0, 0xAAAA), (1, 0xBBBB), (2, 0xAAAA)):
        k = _node(0x6701 + b, 0x7200 + b, 0, b"", parent=sw,
                  path=((sw, "CONDITIONAL SWITCH", b),))
        k.launch_config = {"function": 0x1000, "grid": [4, 1, 1], "block": [64, 1, 1],
                           "shared_memory_bytes": 0, "stream": None, "cluster": None,
                           "cooperative": False, "attributes": []}
        k.params = [{"index": 0, "offset": 0, "size": 8, "bytes": struct.pack("<Q", arg)}]
        k.bound = (None, None)
        nodes.append(k)
    attr.execs.set_walk((1, EXEC), SimpleNamespace(name="cuGraphInstantiateWithFlags", index=100),
                        SimpleNamespace(nodes=nodes))

    def end(word0, replay):
        return attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1],
                                    struct.pack("<IIQQQ", word0, 1, 0x10, 0x30, 0x40)), replay)
    r = _Replay(300)
    a = attr.for_launch(_Qmd([4, 1, 1], [64, 1, 1], struct.pack("<Q", 0xAAAA)), r)
    assert a["graph_node"]["conditional"]["body"] == 0       # the first alike node
    a = end(4, r)
    assert a["verified"] is True and "at the end of body 2" in a["why"], a
    a = attr.for_launch(_Qmd([4, 1, 1], [64, 1, 1], struct.pack("<Q", 0xBBBB)), r)
    assert a["graph_node"]["conditional"]["body"] == 1
    assert end(5, r)["verified"] is True
    r = _Replay(301)
    attr.for_launch(_Qmd([4, 1, 1], [64, 1, 1], struct.pack("<Q", 0xBBBB)), r)
    a = end(4, r)       # body 1's last node, then body 2's word0: body 2 holds no node alike
    assert a["verified"] is False and a["differences"][0]["api"] == 5
