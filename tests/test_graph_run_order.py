"""A CUDA graph replay's kernels are listed in the order the GPU runs them (issue 25): a
QMD after the one whose DEPENDENT_QMDn_POINTER leads to it. The first cuGraphLaunch sends
each node with its own SEND_PCAS_A, the last node first; later replays send the first node
and follow the chain. Where the order sent differs, each launch says where it was sent
(`sent_order`)."""
from types import SimpleNamespace

import pytest

from conftest import capture_path, manifest
from decoders.launch.qmds import run_order
from decoders.session import decode_capture


def _launch(va, kernel=True, qmd_type="GRID_CTA", deps=(), parent=None):
    return SimpleNamespace(_summary={"qmd_address": va, "kernel": kernel, "qmd_type": qmd_type,
                                     "parent_qmd": parent, "dependents": list(deps)})


def _done(va):
    return {"pointer": va, "decoded": False, "why": "already decoded"}


def _replays(name):
    """[[launch summaries of one cuGraphLaunch call]] in call order."""
    model = decode_capture(capture_path(name))
    out = {}
    for launch in model.launches:
        s = launch.summary
        if (s.get("api_call") or {}).get("name") == "cuGraphLaunch":
            out.setdefault(s["api_call"]["index"], []).append(s)
    return [out[k] for k in sorted(out)]


def test_first_replay_sent_last_node_first_runs_in_chain_order():
    """multiply -> add -> sqrt sent as sqrt, add, multiply (a CuPy stream-captured graph's
    first cuGraphLaunch): listed multiply, add, sqrt, each with its place as sent."""
    sqrt = _launch(0x300)
    add = _launch(0x200, deps=[_done(0x300)])
    mul = _launch(0x100, deps=[_done(0x200)])
    got = run_order([sqrt, add, mul])
    assert got == [mul, add, sqrt]
    assert [l._summary["sent_order"] for l in got] == [2, 1, 0]


def test_orders_that_need_no_change_are_left_alone():
    # a chain followed as it runs (later replays): the child was made from its parent
    a = _launch(0x100, deps=[{"pointer": 0x200, "decoded": True}])
    b = _launch(0x200, parent=0x100)
    same = [a, b]
    assert run_order(same) is same and "sent_order" not in a._summary
    # the driver's stream ordering: a kernel's pointer to a GRID_NULL QMD sent before it,
    # and a GRID_NULL's pointer to a kernel, are not a graph's chain
    null = _launch(0x10, kernel=False, qmd_type="GRID_NULL", deps=[_done(0x20)])
    k = _launch(0x20, deps=[_done(0x10)])
    stream = [null, k]
    assert run_order(stream) is stream
    # pointers in a circle (a damaged capture): as sent
    x = _launch(0x1, deps=[{"pointer": 0x2, "decoded": True}])
    y = _launch(0x2, parent=0x1, deps=[_done(0x1)])
    assert run_order([x, y]) == [x, y]


@pytest.mark.parametrize("name", ["graph-replay", "torch-graph"])
def test_every_replay_lists_the_nodes_in_the_same_order(name):
    replays = _replays(name)
    assert len(replays) == 3
    order = [[s["qmd_address"] for s in r] for r in replays]
    assert order[0] == order[1] == order[2]
    sent = [s.get("sent_order") for s in replays[0]]
    assert sorted(sent) == list(range(len(sent))) and sent != sorted(sent)
    assert all("sent_order" not in s for r in replays[1:] for s in r)


def test_torch_graph_replays_run_the_nodes_in_capture_order():
    """Manifest truth: the graph's kernel nodes in the order they were captured (and run,
    one after the other on one stream), matched by grid and block."""
    nodes = [n for n in sorted(manifest("torch-graph")["ground_truth"]["graph_nodes"],
                               key=lambda n: n["index"]) if "kernel" in n]
    for replay in _replays("torch-graph"):
        kernels = [s for s in replay if s["kernel"]]
        assert [(s["grid"], s["block"]) for s in kernels] == \
            [(n["grid"], n["block"]) for n in nodes]
        assert [s["attribution"]["kernel"]["mangled"] for s in kernels] == \
            [n["kernel"] for n in nodes]


def test_first_replay_sent_every_node_before_its_head_runs_the_chain_from_the_head():
    """A graph whose first replay sends each node before the head, gated, each pointing at
    the next node's slot before that slot is written (decoded False: nothing there yet),
    and the head last, pointing at the first node (captures/pdl, cupy-fft): run from the
    head, then along the pointers."""
    n1 = _launch(0x200, kernel=False, deps=[{"pointer": 0x400, "decoded": False}])
    n2 = _launch(0x400, deps=[{"pointer": 0x600, "decoded": False}])
    n3 = _launch(0x600)
    head = _launch(0x000, deps=[_done(0x200)])
    got = run_order([n1, n2, n3, head])
    assert got == [head, n1, n2, n3]
    assert [l._summary["sent_order"] for l in got] == [3, 0, 1, 2]


def test_cupy_graph_replays_run_the_nodes_in_graph_order():
    """captures/cupy-fft: multiply by 2, add, square (the graph's nodes read back through
    the driver, and CUPTI's order in each replay); its first replay sends the nodes before
    the head (a no-kernel GRID_CTA QMD), and was listed add, square, multiply before."""
    graph = manifest("cupy-fft")["ground_truth"]["graph"]
    nodes = [n["kernel"] for n in graph["graph_nodes"]]
    cupti = [k["name"] for k in graph["cupti"]["kernels"]]
    replays = _replays("cupy-fft")
    assert len(replays) == graph["replays"]
    got = []
    for replay in replays:
        names = [s["attribution"]["kernel"]["name"] for s in replay if s["kernel"]]
        assert names == nodes
        got += names
    assert got == cupti
