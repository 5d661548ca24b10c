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
    """(attribution, node) of the driver's kernel for a conditional node, checked for which
    node and body it serves (docs/graphs.md). A body's end kernel follows the body's last
    node in the replay's run order (attr.prev_node), and its word0 names the body
    (DK.CONDITIONAL_BODY_END); the node's own kernel, sent last, shares its pointer0 and
    pointer1 with its bodies' end kernels of the same replay (attr.cond_state)."""
    by_handle = {n.node: n for n in conds}
    state = attr.cond_state(replay.index)
    key = (fields.pointer0, fields.pointer1)
    checked, unchecked, diffs = [], [], []
    if fields.word0:
        prev = attr.prev_node(replay.index)
        cw = G.conditional_where(prev) if isinstance(prev, G.GraphNode) else None
        node = by_handle.get(cw[2]) if cw else None
        if node is None:
            node, body = (conds[0] if len(conds) == 1 else None), None
            how = "the shape and parameter block of the driver's conditional-node kernel"
            unchecked.append({"field": "node", "why": "the launch before it in the replay is "
                              "no body node of the exec's conditional nodes"})
        else:
            body = cw[1]
            how = (f"the launch before it, the last of body {body} of node {node.node:#x}, and "
                   "the kernel's shape and parameter block")
            checked.append("node")
        role = "at the end of a body" if body is None else f"at the end of body {body}"
        if checked:
            state[key] = node
            p = node.parsed or {}
            ends = DK.CONDITIONAL_BODY_END.get((p.get("cond_type"), p.get("size")))
            if G.conditional_where(node) is not None:
                unchecked.append({"field": "word0", "why": "word0 of a conditional node inside "
                                  "another's body was never measured"})
            elif body is None or ends is None or body not in ends:
                unchecked.append({"field": "word0", "why": (
                    f"word0 of a {p.get('cond_type')} node of {p.get('size')} bodies was never "
                    "measured" if body is not None else "which body it ends is not known")})
            else:
                checked.append("word0")
                if fields.word0 != ends[body]:
                    other = next((b for b, w in ends.items() if w == fields.word0), None)
                    if other is not None and _alike_in_body(attr, replay, node, other, prev):
                        # the bodies hold alike nodes, and the QMD was matched to the first
                        how += (f"; body {other}, whose nodes are alike body {body}'s (word0 "
                                f"{fields.word0})")
                        role = f"at the end of body {other}"
                    else:
                        diffs.append({"field": "word0 (which body it ends)", "api": ends[body],
                                      "qmd": fields.word0})
    else:
        node = state.get(key)
        role = "its own, sent last"
        if node is not None:
            how = ("pointer0 and pointer1, as its bodies' end kernels in this replay have them, "
                   "and the kernel's shape and parameter block")
            checked.append("node")
        else:
            node = conds[0] if len(conds) == 1 else None
            how = "the shape and parameter block of the driver's conditional-node kernel"
            unchecked.append({"field": "node", "why": "no end kernel of a body with its pointer0 "
                              "and pointer1 came before it in this replay"})
    where = (_conditional_text(node) if node is not None else
             f"one of the exec's {len(conds)} conditional nodes")
    own = DK.conditional_kernel(fields, hw_bytes, where, role)
    unchecked += [{"field": "word1", "why": "its meaning is not known (1 in every launch seen)"},
                  {"field": "pointer0, pointer1, pointer2",
                   "why": "driver memory no call of the capture names"}]
    own.update(checked=checked, unchecked=unchecked, differences=diffs,
               verified=(not diffs) if checked else None, matched_by=how)
    if checked:
        own["why"] += (": checked which node" + (" and body" if "word0" in checked and
                                                  fields.word0 else "") +
                       " it serves; what it does runs on the GPU (docs/graphs.md)")
    else:
        own["why"] += (": nothing the capture records says which node it serves, so nothing "
                       "is checked (docs/graphs.md)")
    return own, node


def _alike_in_body(attr, replay, cond, body, prev):
    """Whether body `body` of conditional node `cond` holds a kernel node with prev's kernel,
    grid, block and argument bytes: a QMD of either matches the first one (graphs.match),
    so its end kernel may name the other body."""
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
