"""The driver's own kernels in a CUDA graph replay, named by the node they ran for (issue
25, docs/graphs.md): a MEMCPY / MEMSET node's copy or memset kernel, checked as
decoders/cuda/driverkernels.py checks the calls; a copy no node of the capture's writes
(set by a call the capture lacks), named and not checked; a CONDITIONAL node's kernel,
named, not checked. And where a node of a walk sits in the launched exec, with the
conditional body it is in.

Asked only for a QMD of a replay that matched no kernel node (decoders/cuda/attribute.py)."""
from collections import namedtuple

from decoders.cuda import driverkernels as DK
from decoders.cuda import graphs as G
from decoders.cuda.api import GRAPH_PREPARE, GRAPH_WALK_KINDS
from decoders.cuda.driverkernels import check as driver_kernel

_DRIVER_NODES = (G.MEMCPY, G.MEMSET, G.CONDITIONAL)
_NodeCall = namedtuple("_NodeCall", "base args")     # a graph node as driverkernels.check's call
# What the capture can say of a conditional body's iterations (docs/graphs.md)
ITERATIONS_WHY = ("the body's QMDs are in the pushbuffer once per replay; the GPU runs its "
                  "further iterations itself (the driver's conditional-node kernel), which "
                  "the capture does not see, so which iteration this is and how many ran is "
                  "not known")


def _conditional_text(node):
    p = node.parsed or {}
    return (f"conditional node {node.node:#x} ({p.get('cond_type', '?')}, "
            f"{len(p.get('bodies') or ())} body graph(s))")


def where(call, node):
    """Where a node of a graph walk sits in the launched exec: exec, graph, node, path, and
    for a node inside a conditional body, which body of which conditional node."""
    out = {"exec": call.args.get("hGraphExec", call.out if call.kind in GRAPH_WALK_KINDS
                                  else None),
           "graph": node.graph, "node": node.node,
           "path": [{"node": h, "kind": k, "body": b} for h, k, b in node.path]}
    cw = G.conditional_where(node)
    if cw is not None:
        out["conditional"] = {"type": cw[0], "body": cw[1], "node": cw[2], "iteration": None,
                              "why": ITERATIONS_WHY}
    return out


def driver_kernel_of_replay(attr, replay, s, hw_bytes, at_index):
    """A QMD of a replay that matched no kernel node: the driver's copy or memset kernel
    for one of the exec's MEMCPY / MEMSET nodes (its constant bank 0 starts with the
    node's destination, and a copy's source follows at the same offset into the node's
    source), checked as decoders/cuda/driverkernels.py checks the calls; or the driver's
    kernel for a CONDITIONAL node. None when neither."""
    if replay.kind in GRAPH_WALK_KINDS:
        g = replay.graph
        nodes = [n for n in g.nodes if n.type in _DRIVER_NODES] \
            if g is not None and g.walk is not None else None
    else:
        nodes = attr.execs.typed((replay.pid, replay.args.get("hGraphExec")), _DRIVER_NODES,
                                replay.index)
    if not nodes or hw_bytes is None or len(hw_bytes) < 8:
        return None
    dst = int.from_bytes(hw_bytes[:8], "little")
    src = int.from_bytes(hw_bytes[8:16], "little") if len(hw_bytes) >= 16 else None
    for n in nodes:
        span = G.copy_node_span(n)
        if span is None or not span[0] <= dst < span[0] + span[1] or \
                (span[2] is not None and src != span[2] + dst - span[0]):
            continue
        base = DK.GRAPH_MEMCPY if n.type == G.MEMCPY else DK.GRAPH_MEMSET
        args, why = G.copy_node_args(n)
        if args is None:
            op = "copy" if n.type == G.MEMCPY else "memset"
            own = {"kernel": {"name": DK.kernel_name(op, base), "mangled": None,
                              "module": None, "image_call": None, "cubin_arch": None},
                   "driver_kernel": None, "args": None, "verified": None, "checked": [],
                   "unchecked": [], "differences": [],
                   "why": f"the driver's own {op} kernel for a {base}: {why}, not checked"}
        else:
            own = driver_kernel(_NodeCall(base, args), s, hw_bytes, attr.resolve, at_index,
                                esize=(n.parsed or {}).get("elementSize"))
        own["graph_node"] = _driver_node(replay, n, "destination and source in "
                                              "constant bank 0" if n.type == G.MEMCPY else
                                              "destination in constant bank 0")
        return own
    own = _moved_copy(nodes, s, dst)
    if own is not None:
        own["graph_node"] = _driver_node(replay, None, None)
        return own
    conds = [n for n in nodes if n.type == G.CONDITIONAL]
    if not conds:
        return None
    where = (_conditional_text(conds[0]) if len(conds) == 1 else
             f"one of the exec's {len(conds)} conditional nodes")
    own = DK.conditional_kernel(s, hw_bytes, where)
    if own is not None:
        own["graph_node"] = _driver_node(
            replay, conds[0] if len(conds) == 1 else None,
            "grid, block and parameter block of the driver's conditional-node kernel")
    return own

def _moved_copy(nodes, s, dst):
    """A QMD with the parameter block and block shape of the driver's copy or memset
    kernel, in a replay of an exec with such nodes, none of which (as the capture holds
    them) writes its destination: named, not checked. XLA moves its copies between
    replays with cuGraphExecMemcpyNodeSetParams, which the shim did not bracket before
    slot 83 (out/run7: 42 launches; captures/jax-cmdbuf, recorded with it, has none left)."""
    params = s.get("params")
    if not params or not params.get("uploaded"):
        return None
    for op, t in (("copy", G.MEMCPY), ("memset", G.MEMSET)):
        have = [n for n in nodes if n.type == t]
        if have and DK._layout(op, params["size"], s.get("block")) is not None:
            base = DK.GRAPH_MEMCPY if t == G.MEMCPY else DK.GRAPH_MEMSET
            return {"kernel": {"name": DK.kernel_name(op, base), "mangled": None,
                               "module": None, "image_call": None, "cubin_arch": None},
                    "driver_kernel": None, "args": None, "verified": None, "checked": [],
                    "unchecked": [], "differences": [],
                    "why": (f"the driver's own {op} kernel for a {base} (its parameter block "
                            f"and block shape), writing {dst:#x}, which none of the exec's "
                            f"{len(have)} {base}s as the capture holds them writes: the node "
                            f"was set since by a call the capture lacks "
                            f"(cuGraphExec{'Memcpy' if t == G.MEMCPY else 'Memset'}"
                            "NodeSetParams, bracketed by the shim from slot 83 on), "
                            "not checked")}
    return None

def _driver_node(replay, node, how):
    gn = {"call": node.name if node else None, "index": node.index if node else None,
          "matched_by": how}
    if node is not None:
        gn.update(where(replay, node))
    if replay.base in GRAPH_PREPARE:
        gn["sent_by"] = (f"{replay.base}: the node's QMD is written and scheduled ahead "
                         "of the replays that run it")
    return gn
