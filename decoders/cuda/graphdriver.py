"""The driver's own kernels in a CUDA graph replay, named by the node they ran for (issue
25, docs/graphs.md): a MEMCPY / MEMSET node's copy or memset kernel, checked as
decoders/cuda/driverkernels.py checks the calls; a copy no node of the capture's writes
(set by a call the capture lacks), named and not checked; a CONDITIONAL node's kernel,
checked for which node and body it serves. And where a node of a walk sits in the launched
exec, with the conditional body it is in.

Asked only for a QMD of a replay that matched no kernel node (decoders/cuda/attribute.py)."""
from collections import namedtuple

from decoders.cuda import driverkernels as DK
from decoders.cuda import graphs as G
from decoders.cuda.api import GRAPH_PREPARE, GRAPH_WALK_KINDS
from decoders.cuda.driverkernels import check as driver_kernel

_DRIVER_NODES = (G.MEMCPY, G.MEMSET, G.CONDITIONAL)
_NodeCall = namedtuple("_NodeCall", "base args")     # a graph node as driverkernels.check's call
# What the capture can say of a conditional body's iterations (docs/graphs.md)
ITERATIONS_WHY = ("every body's QMDs are sent once per replay, whether the body then runs or "
                  "not (an IF whose condition is false, a SWITCH's other bodies and a WHILE "
                  "of 0 trips send theirs too: captures/cond-nodes), and the GPU runs a "
                  "WHILE's further iterations itself (the driver's conditional-node kernel): "
                  "whether this launch ran, which iteration it is and how many ran is not in "
                  "the capture")


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
        out["conditional"] = {"type": cw[0], "body": cw[1], "node": cw[2], "ran": None,
                              "iteration": None, "why": ITERATIONS_WHY}
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
        attr.set_prev_node(replay.index, n)
        own["graph_node"] = _driver_node(replay, n, "destination and source in "
                                              "constant bank 0" if n.type == G.MEMCPY else
                                              "destination in constant bank 0")
        return own
    own = _moved_copy(nodes, s, dst)
    if own is not None:
        own["graph_node"] = _driver_node(replay, None, None)
        return own
    conds = [n for n in nodes if n.type == G.CONDITIONAL]
    fields = DK.conditional_fields(s, hw_bytes) if conds else None
    if fields is None:
        return None
    own, node = _conditional(attr, replay, conds, fields, hw_bytes)
    own["graph_node"] = _driver_node(replay, node, own.pop("matched_by"))
    return own


def _conditional(attr, replay, conds, fields, hw_bytes):
    """(attribution, node) of the driver's kernel for a conditional node, checked for where
    it sits (docs/graphs.md, measured on captures/cond-nodes and jax-cmdbuf). pointer0 and
    pointer1 are the exec's (one pair for all its conditional kernels in a replay). word0 0:
    the kernel sent last, for the exec's one top-level conditional node. Else it follows, in
    the replay's run order, the node before it (attr.prev_node): after the last node of a
    body it ends that body; after a node whose next sibling in its graph is a conditional
    node, it is that node's own (a node inside a body). word0 numbers the exec's
    conditional kernels: checked against DK.CONDITIONAL_BODY_END only where the exec has one
    conditional node, the case measured."""
    state = attr.cond_state(replay.index)       # the replay's first pointer pair, nodes
    key = (fields.pointer0, fields.pointer1)
    checked, unchecked, diffs = [], [], []
    top = [n for n in conds if G.conditional_where(n) is None]
    body, role = None, "a conditional kernel"
    if fields.word0 == 0:
        node = top[0] if len(top) == 1 else None
        role = "its own, sent last"
        if node is not None and state.get("pair", key) == key:
            how = ("word0 0, sent last, in an exec with one conditional node outside any body "
                   "(pointer0 and pointer1 as the replay's other conditional kernels have them)")
            checked.append("node")
        else:
            how = "the shape and parameter block of the driver's conditional-node kernel"
            unchecked.append({"field": "node", "why": (
                f"the exec has {len(top)} conditional nodes outside any body: which one a "
                "kernel sent last serves was not measured" if node is None else
                "its pointer0/pointer1 are not those of the replay's other conditional kernels")})
    else:
        node, how, body, own_of = _conditional_at(attr, replay, conds)
        if node is None:
            how = "the shape and parameter block of the driver's conditional-node kernel"
            unchecked.append({"field": "node", "why": "the node before it in the replay is "
                              "neither the last node of a conditional body nor one followed "
                              "by a conditional node in its graph"})
        else:
            checked.append("node")
            role = "its own, inside a body" if own_of else f"at the end of body {body}"
            p = node.parsed or {}
            ends = DK.CONDITIONAL_BODY_END.get((p.get("cond_type"), p.get("size")))
            if own_of or len(conds) != 1 or ends is None or body not in ends:
                unchecked.append({"field": "word0", "why": (
                    "word0 numbers the exec's conditional kernels; its values were measured "
                    "for a body's end in an exec with one conditional node of "
                    + ", ".join(f"{t} of {n}" for t, n in DK.CONDITIONAL_BODY_END) +
                    f" bodies (this exec: {len(conds)} conditional nodes)")})
            else:
                checked.append("word0")
                if fields.word0 != ends[body]:
                    other = next((b for b, w in ends.items() if w == fields.word0), None)
                    if other is not None and _alike_in_body(attr, replay, node, other):
                        # the bodies hold alike nodes, and the QMD was matched to the first
                        how += (f"; body {other}, whose nodes are alike body {body}'s (word0 "
                                f"{fields.word0})")
                        role = f"at the end of body {other}"
                    else:
                        diffs.append({"field": "word0 (which body it ends)", "api": ends[body],
                                      "qmd": fields.word0})
    if node is not None and fields.word0:
        # what follows a body's end is the conditional node's successor in its graph
        attr.set_prev_node(replay.index, None if role.startswith("its own") else node)
    state.setdefault("pair", key)   # (another pair in one replay: not measured, not judged)
    where = (_conditional_text(node) if node is not None else
             f"one of the exec's {len(conds)} conditional nodes")
    own = DK.conditional_kernel(fields, hw_bytes, where, role)
    unchecked += [{"field": "word1", "why": "its meaning is not known (1 in every launch seen)"},
                  {"field": "pointer0, pointer1, pointer2",
                   "why": "driver memory no call of the capture names (pointer0/pointer1: "
                          "the same in all of an exec's conditional kernels of a replay)"}]
    own.update(checked=checked, unchecked=unchecked, differences=diffs,
               verified=(not diffs) if checked else None, matched_by=how)
    if checked:
        own["why"] += (": checked where it sits in the graph" + (" and which body word0 names"
                                                                  if "word0" in checked else "") +
                       "; what it does runs on the GPU (docs/graphs.md)")
    else:
        own["why"] += (": nothing the capture records says which node it serves, so it is not "
                       "checked (docs/graphs.md)")
    return own, node


def _conditional_at(attr, replay, conds):
    """(conditional node, how, body, own) for a conditional kernel with word0 non-zero, from
    the node before it in the replay (attr.prev_node): the end of body `body` of the node
    when that node is the last of its body graph (own False), or the own kernel of the
    conditional node that follows it in its graph (own True); (None, None, None, None)."""
    prev = attr.prev_node(replay.index)
    if not isinstance(prev, G.GraphNode):
        return None, None, None, None
    state = attr.cond_state(replay.index)      # the exec's nodes by graph, once a replay
    graphs = state.get("graphs")
    if graphs is None:
        graphs = state["graphs"] = {}
        for n in attr.execs.nodes((replay.pid, replay.args.get("hGraphExec")),
                                  replay.index) or ():
            if isinstance(n, G.GraphNode):
                graphs.setdefault(n.graph, []).append(n)
    siblings = graphs.get(prev.graph, ())
    at = next((i for i, n in enumerate(siblings) if n.node == prev.node), None)
    if at is None:
        return None, None, None, None
    by_handle = {n.node: n for n in conds}
    if at + 1 < len(siblings):
        nxt = siblings[at + 1]
        if nxt.node in by_handle:
            return by_handle[nxt.node], (f"the node before it ({prev.node:#x}) is followed in "
                                         f"its graph by conditional node {nxt.node:#x}"), \
                None, True
        return None, None, None, None
    cw = G.conditional_where(prev)
    if cw is None or cw[2] not in by_handle:
        return None, None, None, None
    return by_handle[cw[2]], (f"the node before it ({prev.node:#x}) is the last of body "
                              f"{cw[1]} of node {cw[2]:#x}"), cw[1], False


def _alike_in_body(attr, replay, cond, body):
    """Whether body `body` of conditional node `cond` holds a kernel node with the previous
    node's kernel, grid, block and argument bytes: a QMD of either matches the first one
    (graphs.match), so its end kernel may name the other body."""
    prev = attr.prev_node(replay.index)
    if not isinstance(prev, G.GraphNode):
        return False
    key = (replay.pid, replay.args.get("hGraphExec"))
    want = _launch_key(prev)
    for n in attr.execs.nodes(key, replay.index) or ():
        cw = G.conditional_where(n) if isinstance(n, G.GraphNode) else None
        if cw and cw[2] == cond.node and cw[1] == body and n.node != prev.node and \
                _launch_key(n) == want:
            return True
    return False


def _launch_key(n):
    cfg = n.launch_config or {}
    return ((n.bound or (None,))[0], cfg.get("grid"), cfg.get("block"),
            tuple((p["offset"], p["size"], p["bytes"]) for p in n.params or ()))


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
