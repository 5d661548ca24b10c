"""Issue 25 on a fake libcuda (synthetic, no GPU: tests/c/fakecuda.c + tests/c/fakegraph.c,
driven by tests/c/graphprog.c): function handles no lookup handed out named by the driver
once each, graphs walked through the driver at instantiate, exec update and exec child set
(child graphs, conditional bodies, memset and event nodes), the walk limits, and replays
matched to the walked nodes by the attribution (QMD summaries made here, synthetic too).

Every expectation is what fakegraph.c is written to answer or what graphprog.c passed.
"""
import json
import os
import struct
import subprocess

import pytest

from decoders.capture.reader import read_capture
from decoders.capture.writer import append_end, create_capture
from decoders.cuda.attribute import Attribution
from decoders.cuda.calls import ApiCalls
from tests.test_shim import CC, ROOT, shim  # noqa: F401  (the session-built shim fixture)

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytest.fixture(scope="module")
def graphbin(tmp_path_factory):
    d = tmp_path_factory.mktemp("graphs")
    c = ROOT / "tests/c"
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-o", str(d / "libcuda.so.1"),
                    str(c / "fakecuda.c"), str(c / "fakegraph.c")], check=True)
    subprocess.run([CC, "-O1", "-o", str(d / "graphprog"), str(c / "graphprog.c"), "-ldl"], check=True)
    return d


def _run(shim, d, name, mode="full", args=(), env_extra=None):  # noqa: F811
    cap, out = d / f"{name}.tlc", d / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if k != "FAKE_NODE_GET_PARAMS"}
    env.update(LD_LIBRARY_PATH=str(d), **(env_extra or {}))
    if shim is not None:
        create_capture(cap, {"argv": ["graphprog"], "synthetic": True})
        env.update(LD_PRELOAD=str(shim), TRACE_LAUNCH_CAPTURE=str(cap), TRACE_LAUNCH_MODE=mode,
                   TRACE_LAUNCH_DEVDIR=str(d / "nodev"))
    proc = subprocess.run([str(d / "graphprog"), str(out), *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    truth = json.loads(out.read_text())
    if shim is None:
        return truth, None, None
    append_end(cap, proc.returncode)
    reader, recs = read_capture(cap)
    assert reader.problems == []
    api = ApiCalls()
    calls = []
    for r in recs:
        if r.type == "API_ENTER":
            calls.append(api.enter(r))
        elif r.type == "API_EXIT":
            api.exit(r)
    notes = [bytes(r.body.text).decode() for r in recs if r.type == "NOTE"]
    return truth, calls, notes


@pytest.fixture(scope="module")
def runs(shim, graphbin):  # noqa: F811
    return {"native": _run(None, graphbin, "native"),
            "full": _run(shim, graphbin, "full"),
            "ioctl": _run(shim, graphbin, "ioctl", mode="ioctl"),
            "getparams": _run(shim, graphbin, "getparams", args=("noadd",),
                              env_extra={"FAKE_NODE_GET_PARAMS": "1"}),
            "unknown": _run(shim, graphbin, "unknown", args=("noadd",))}


def _by_name(calls, name):
    return [c for c in calls if c.name == name]


def test_program_sees_the_same_results(runs):
    native = runs["native"][0]
    assert native["results"] == [0] * 9
    assert runs["full"][0] == runs["ioctl"][0] == native
    assert runs["ioctl"][1] == []


def test_each_unlooked_handle_named_once(runs):
    """0x3000 and the CUkernel 0x2000 reach cuLaunchKernel without a bracketed lookup (the
    export-table case): the first launch of each carries the driver's name and module or
    library; the second launch of 0x3000 none; 0x1000, handed out by cuModuleGetFunction,
    none."""
    _, calls, _ = runs["full"]
    launches = _by_name(calls, "cuLaunchKernel")
    names = [[(f.handle, f.parent, f.name, f.flags) for f in c.graph.names] if c.graph else []
             for c in launches]
    assert names == [[(0x3000, 0xAAA0, "_Z5emptyv", [])], [],
                     [(0x2000, 0xBBB0, "_Z4kernid", ["KERNEL"])], []]
    assert launches[2].param_bytes == struct.pack("<i4xd", 5, 0.25)   # the launch as before


def test_conditional_bodies_from_add_node(runs):
    """cuGraphAddNode_v2 of a WHILE node: at exit the driver has filled phGraph_out; the
    record holds the node and its body graph."""
    _, calls, _ = runs["full"]
    (add,) = _by_name(calls, "cuGraphAddNode_v2")
    assert add.out == runs["full"][0]["cnode"] == 0x7004
    entry, done = add.graph.nodes
    assert entry.node == 0 and "GENERIC" in entry.flags and entry.parsed["cond_type"] == "WHILE"
    assert done.node == 0x7004 and done.graph == 0x6100
    assert done.parsed == {"handle": 0x77, "cond_type": "WHILE", "size": 1, "bodies": [0x6300]}


def _walk(calls, name):
    (c,) = _by_name(calls, name)
    return c, c.graph


def test_instantiate_walks_every_level(runs):
    """The graph as fakegraph.c builds it: a kernel, a memset, a child graph (its kernel), a
    WHILE conditional (its body's kernel, a CUkernel given as `kern`) and an event record,
    in walk order (a node before what it holds), with paths to the nested ones."""
    truth, calls, _ = runs["full"]
    inst, g = _walk(calls, "cuGraphInstantiateWithFlags")
    assert inst.out == truth["exec"] == 0x8001
    assert g.walk == {"graph": 0x6100, "parent": 0, "nodes": 7, "kernels": 3, "flags": []}
    assert [(n.node, n.type_name, n.depth) for n in g.nodes] == [
        (0x7001, "KERNEL", 0), (0x7002, "MEMSET", 0), (0x7003, "GRAPH", 0), (0x7006, "KERNEL", 1),
        (0x7004, "CONDITIONAL", 0), (0x7007, "KERNEL", 1), (0x7005, "EVENT_RECORD", 0)]
    n1, memset, child, n6, cond, n7, event = g.nodes
    assert n1.launch_config["grid"] == [4, 1, 1] and n1.launch_config["block"] == [32, 1, 1]
    assert b"".join(p["bytes"] for p in n1.params) == struct.pack(
        "<QQi", 0xA1A1A1A1A1A1A1A1, 0xB1B1B1B1B1B1B1B1, 4096)
    assert memset.parsed == {"dst": 0x7f0000001000, "pitch": 0, "value": 0xABABABAB,
                             "elementSize": 4, "width": 1024, "height": 1}
    assert child.parsed == {"graph": 0x6200} and n6.graph == 0x6200 and n6.params == []
    assert n6.path == ((0x7003, "GRAPH", 0),)
    assert cond.parsed["bodies"] == [0x6300] and n7.graph == 0x6300
    assert n7.path == ((0x7004, "CONDITIONAL WHILE", 0),)
    assert n7.launch_config["function"] == 0x2000 and n7.launch_config["grid"] == [2, 3, 1]
    assert "LAYOUT_FROM_KERNEL" in n7.sections["PARAM_LAYOUT"]["flags"]
    assert n7.param_bytes == struct.pack("<i4xd", 77, -1.5)
    assert event.parsed == {"event": 0xE0E0}
    # every function of the walk was named before (lookup or launch): no name asked again
    assert g.names == []


def test_a_handle_first_seen_in_a_graph_is_named_by_the_walk(runs):
    """cuGraphExecUpdate's graph holds 0x5000 (never looked up, never launched): the walk
    names it, and keeps its `extra` argument buffer."""
    _, calls, _ = runs["full"]
    _, g = _walk(calls, "cuGraphExecUpdate_v2")
    assert [(f.handle, f.parent, f.name) for f in g.names] == [
        (0x5000, 0xAAA0, "_Z7fft_r2cPKfP6float2i")]
    (n8,) = g.nodes
    assert n8.launch_config["shared_memory_bytes"] == 256 and n8.param_bytes == bytes(range(1, 13))


def test_child_graph_set_walks_the_new_child_under_its_node(runs):
    _, calls, _ = runs["full"]
    _, g = _walk(calls, "cuGraphExecChildGraphNodeSetParams")
    assert g.walk["graph"] == 0x6500 and g.walk["parent"] == 0x7003
    (n9,) = g.nodes
    assert n9.parent == 0x7003 and n9.launch_config["grid"] == [8, 1, 1]


def test_generic_node_set_params(runs):
    """cuGraphExecNodeSetParams / cuGraphNodeSetParams with a kernel CUgraphNodeParams: read
    as a kernel node call (launch config, argument bytes) plus the node it names."""
    truth, calls, _ = runs["full"]
    for name, node_arg in (("cuGraphExecNodeSetParams", "hNode"), ("cuGraphNodeSetParams", "hNode")):
        (c,) = _by_name(calls, name)
        assert c.launch_config["grid"] == [5, 1, 1] and c.launch_config["function"] == 0x1000
        assert c.param_bytes == struct.pack("<QQi", *truth["sparams"])
        (n,) = c.graph.nodes
        assert n.node == c.args[node_arg] == 0x7001 and "GENERIC" in n.flags


def test_exec_copy_and_memset_node_sets(runs):
    """cuGraphExecMemcpyNodeSetParams / cuGraphExecMemsetNodeSetParams (slots 83, 84): the
    node's new CUDA_MEMCPY3D / CUDA_MEMSET_NODE_PARAMS as a GRAPH_NODE of its own type (not
    GENERIC), read as graphprog.c passed them (XLA moves its copies this way: docs/graphs.md)."""
    _, calls, _ = runs["full"]
    (c,) = _by_name(calls, "cuGraphExecMemcpyNodeSetParams")
    (n,) = c.graph.nodes
    assert (n.node, n.type_name, n.flags) == (0x7010, "MEMCPY", [])
    assert n.parsed["srcDevice"] == 0x7f0000001000 and n.parsed["dstDevice"] == 0x7f0000002000
    assert (n.parsed["src"], n.parsed["dst"], n.parsed["WidthInBytes"]) == ("DEVICE", "DEVICE", 4096)
    (c,) = _by_name(calls, "cuGraphExecMemsetNodeSetParams")
    (n,) = c.graph.nodes
    assert (n.node, n.type_name, n.flags) == (0x7002, "MEMSET", [])
    assert (n.parsed["dst"], n.parsed["value"], n.parsed["elementSize"], n.parsed["width"]) == \
        (0x7f0000003000, 0x5a, 1, 64)


def test_walk_limits_are_flagged_and_noted(runs):
    """A chain of child graphs 12 deep stops below TL_WALK_MAX_DEPTH (8); a graph of 5,000
    nodes at TL_WALK_MAX_NODES (4,096): each walk says so, and a NOTE names it."""
    _, calls, notes = runs["full"]
    _, deep = _walk(calls, "cuGraphInstantiateWithParams")
    assert deep.walk["flags"] == ["DEPTH_LIMIT"] and deep.walk["nodes"] == 9
    assert max(n.depth for n in deep.nodes) == 8
    _, wide = _walk(calls, "cuGraphInstantiate")
    assert wide.walk["flags"] == ["NODE_LIMIT"] and len(wide.nodes) == 4096
    assert notes == [
        "graph walk did not follow graphs nested deeper than TL_WALK_MAX_DEPTH: "
        "cuGraphInstantiateWithParams of graph 0x6600",
        "graph walk stopped at TL_WALK_MAX_NODES nodes (later nodes not recorded): "
        "cuGraphInstantiate of graph 0x6900"]


def test_conditional_bodies_from_node_get_params(runs):
    """No cuGraphAddNode seen, cuGraphNodeGetParams exported (newer drivers): the walk
    asks it for the bodies and finds the same nodes."""
    _, calls, _ = runs["getparams"]
    _, g = _walk(calls, "cuGraphInstantiateWithFlags")
    _, full = _walk(runs["full"][1], "cuGraphInstantiateWithFlags")
    assert [(n.node, n.path) for n in g.nodes] == [(n.node, n.path) for n in full.nodes]


def test_conditional_bodies_unknown_are_said(runs):
    _, calls, notes = runs["unknown"]
    _, g = _walk(calls, "cuGraphInstantiateWithFlags")
    assert g.walk["flags"] == ["BODIES_UNKNOWN"] and g.walk["kernels"] == 2
    (cond,) = [n for n in g.nodes if n.type_name == "CONDITIONAL"]
    assert cond.flags == ["PARAMS_UNREADABLE", "BODIES_UNKNOWN"]
    assert notes[0] == ("graph walk met a conditional node whose bodies it could not learn: "
                        "cuGraphInstantiateWithFlags of graph 0x6100")


# ---- the attribution on these calls, with QMD summaries made here (synthetic) -----------

class _Qmd:
    """What Attribution.for_launch reads of a decoded launch."""

    def __init__(self, grid, block, params, program=0x1000000, record_index=10_000):
        self._summary = {"kernel": True, "qmd_type": "V04_00", "grid": grid, "block": block,
                         "cluster": None, "shared_memory_bytes": 1024,
                         "shared_memory_driver_reserved_bytes": 1024,
                         "params": {"hex": params.hex()}, "program_address": program}
        self.record_index = record_index


def _attribution(calls):
    attr = Attribution(None)
    for c in calls:
        attr.observe(c)
    return attr


def test_replays_matched_to_the_walked_nodes(runs):
    """The first replay runs the exec as instantiated with its child graph replaced and its
    first kernel node set again; the WHILE body's node runs once per iteration (three here),
    each matched to the same node and named by the driver's name for its CUkernel. The
    replay after cuGraphExecUpdate runs the updated graph's node."""
    truth, calls, _ = runs["full"]
    replay, replay2 = _by_name(calls, "cuGraphLaunch")
    before = [c for c in calls if c.index < replay.index]
    attr = _attribution(before)
    got = []
    for q in [_Qmd([5, 1, 1], [32, 1, 1], struct.pack("<QQi", *truth["sparams"])),
              _Qmd([8, 1, 1], [64, 1, 1], struct.pack("<QQi", 0xA9A9A9A9A9A9A9A9,
                                                      0xB9B9B9B9B9B9B9B9, 512))] + \
            [_Qmd([2, 3, 1], [64, 1, 1], struct.pack("<i4xd", 77, -1.5))] * 3:
        got.append(attr.for_launch(q, replay))
    assert [a["verified"] for a in got] == [True] * 5
    assert [a["graph_node"]["node"] for a in got] == [0x7001, 0x7009, 0x7007, 0x7007, 0x7007]
    assert got[0]["graph_node"]["call"] == "cuGraphExecNodeSetParams"
    assert got[1]["graph_node"]["call"] == "cuGraphExecChildGraphNodeSetParams"
    assert got[1]["graph_node"]["path"] == [{"node": 0x7003, "kind": "GRAPH", "body": 0}]
    assert got[2]["graph_node"]["path"] == [{"node": 0x7004, "kind": "CONDITIONAL WHILE", "body": 0}]
    assert got[2]["graph_node"]["exec"] == truth["exec"]
    assert got[2]["kernel"]["mangled"] == "_Z4kernid" and got[2]["kernel"]["named_by"] == "cuKernelGetName"
    assert [x["type"] for x in got[2]["args"]] == ["int", "double"]     # from the demangled name
    assert got[0]["kernel"]["mangled"] == "vadd" and "named_by" not in got[0]["kernel"]
    # the instantiated kernel node 0x7001 as first set (grid 4) is no longer what runs
    old = attr.for_launch(_Qmd([4, 1, 1], [32, 1, 1], struct.pack(
        "<QQi", 0xA1A1A1A1A1A1A1A1, 0xB1B1B1B1B1B1B1B1, 4096)), replay)
    assert old["verified"] is None and old["graph_node"] is None
    assert "none of the 3 kernel nodes" in old["why"] and "1 memset/memcpy node(s)" in old["why"]
    # after cuGraphExecUpdate: the updated graph's node, named by the walk
    for c in calls:
        if replay.index <= c.index < replay2.index:
            attr.observe(c)
    a = attr.for_launch(_Qmd([16, 1, 1], [128, 1, 1], bytes(range(1, 13)) + bytes(4)), replay2)
    assert a["verified"] is True and a["graph_node"]["node"] == 0x7008
    assert a["kernel"]["name"] == "fft_r2c(float const*, float2*, int)"
    assert a["kernel"]["named_by"] == "cuFuncGetName" and a["kernel"]["module"] == 0xAAA0


def test_launch_named_by_the_driver(runs):
    """A launch of a handle no lookup handed out: its kernel is the driver's name, from the
    module the driver answered (whose image the capture holds)."""
    _, calls, _ = runs["full"]
    first = _by_name(calls, "cuLaunchKernel")[0]
    attr = _attribution([c for c in calls if c.index < first.index])
    a = attr.for_launch(_Qmd([1, 1, 1], [32, 1, 1], b""), first)
    assert a["kernel"]["name"] == "empty()" and a["kernel"]["named_by"] == "cuFuncGetName"
    assert a["kernel"]["image_call"] == _by_name(calls, "cuModuleLoadData")[0].index
    assert a["verified"] is True


def test_json_of_walk_calls(runs):
    _, calls, _ = runs["full"]
    _, g = _walk(calls, "cuGraphExecUpdate_v2")
    (c,) = _by_name(calls, "cuGraphExecUpdate_v2")
    j = c.to_json()
    assert j["function_names"] == [{"handle": 0x5000, "parent": 0xAAA0,
                                    "name": "_Z7fft_r2cPKfP6float2i", "flags": []}]
    assert j["graph"]["walk"]["kernels"] == 1
    assert j["graph"]["nodes"][0]["launch"]["grid"] == [16, 1, 1]
    json.dumps(j)
    # a call that holds neither has no such keys (captures before issue 25 render as before)
    assert "graph" not in _by_name(calls, "cuLaunchKernel")[1].to_json()
