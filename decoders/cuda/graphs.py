"""CUDA graphs however they were built, and names for function handles no lookup handed
out (issue 25): what the shim's FUNCTION_NAME, GRAPH_WALK and GRAPH_NODE sections say
(decoders/cuda/api.py SECTIONS, decoders/cuda/types.py TL_*), and which kernel nodes each
graph exec holds when a replay runs.

A call's sections that may repeat come in order (ApiCall.ordered): FUNCTION_NAME anywhere;
a GRAPH_WALK, then one GRAPH_NODE per node, each kernel node's followed by the argument
sections a launch of it would have (PARAM_LAYOUT, PARAM_DATA, PARAM_POINTERS,
PARAM_WINDOWS, EXTRA_BUFFER), which belong to it.

GraphExecs keeps, per graph exec, its nodes as the capture last set them: the walk at
cuGraphInstantiate*, replaced by cuGraphExecUpdate's, a child's nodes replaced by
cuGraphExecChildGraphNodeSetParams', a kernel node's parameters by cuGraphExec(Kernel)Node-
SetParams. A replay's QMD is matched to a kernel node of its exec by grid, block and
argument bytes (indexed by grid and block).
"""
import copy
from bisect import bisect_right
from collections import Counter, namedtuple

from construct import ConstructError

from decoders.capture.reader import cstr
from decoders.cuda import api as A
from decoders.cuda import params as P
from decoders.cuda import types as T
from decoders.fields import flag_names

_NAME = T.TL_FUNCTION_NAME
_WALK = T.TL_GRAPH_WALK
_NODE = T.TL_GRAPH_NODE
_KERNEL = T.CUDA_KERNEL_NODE_PARAMS
_KERNEL_SIZE = T.CUDA_KERNEL_NODE_PARAMS.sizeof()
_KERNEL_V2_SIZE = T.CUDA_KERNEL_NODE_PARAMS_v2.sizeof()
_MEMSET = T.CUDA_MEMSET_NODE_PARAMS
_MEMCPY = T.CUDA_MEMCPY3D
_COND = T.CUDA_CONDITIONAL_NODE_PARAMS
_COND_SIZE = T.CUDA_CONDITIONAL_NODE_PARAMS.sizeof()
_ARG_SECTIONS = ("PARAM_LAYOUT", "PARAM_DATA", "PARAM_POINTERS", "PARAM_WINDOWS", "EXTRA_BUFFER")
_BAD = (ConstructError, ValueError, IndexError, KeyError)

FunctionName = namedtuple("FunctionName", "handle parent flags name")


def _flag_list(value, table):
    """[names] of the flags set in value (leftover bits in hex); [] for none."""
    return flag_names(value, table).split("|") if value else []


_NO_NAME = {v: k for k, v in A.FUNCTION_NAME_FLAGS.items()}["NO_NAME"]


def _type_name(t):
    return T.CU_GRAPH_NODE_TYPE.get(t, f"{t:#x} CU_GRAPH_NODE_TYPE_???")


class GraphNode:
    """One graph node the capture describes. A kernel node answers what Attribution reads
    of a launch call (name and index of the call that recorded it, launch_config, params,
    sections, param_windows, param_bytes, bound)."""
    __slots__ = ("graph", "node", "parent", "type", "depth", "body", "flags", "raw", "sections",
                 "name", "index", "path", "launch_config", "params", "bound", "parsed")

    def __init__(self, call, head, sections=None):
        self.graph, self.node, self.parent = head.graph, head.node, head.parent
        self.type, self.depth, self.body = head.type, head.depth, head.body
        self.flags = _flag_list(head.flags, A.GRAPH_NODE_FLAGS)
        self.raw = bytes(head.params)
        self.sections = sections if sections is not None else {}
        self.name, self.index = call.name, call.index     # the call that recorded it
        self.path = ()          # ((ancestor node, its type name, body index), ...) outermost first
        self.launch_config = self.params = self.bound = None
        self.parsed = None      # the type's parameters as a dict (describe())

    @property
    def type_name(self):
        return _type_name(self.type)

    @property
    def is_kernel(self):
        return self.type == 0 and self.launch_config is not None

    # what Attribution reads of a launch call, from this node's own argument sections
    param_windows = property(lambda self: P.param_windows(self.sections))
    param_bytes = property(lambda self: P.param_bytes(self.sections))

    def finish(self):
        """Parse the type's parameters (and a kernel's arguments); bad bytes leave them None."""
        raw, generic = self.raw, "GENERIC" in self.flags
        try:
            if self.type == 0 and len(raw) >= _KERNEL_SIZE:
                k = _KERNEL.parse(raw[:_KERNEL_SIZE])
                kern = int.from_bytes(raw[56:64], "little") if len(raw) >= _KERNEL_V2_SIZE else 0
                self.launch_config = {
                    "function": k.func or kern, "grid": [k.gridDimX, k.gridDimY, k.gridDimZ],
                    "block": [k.blockDimX, k.blockDimY, k.blockDimZ],
                    "shared_memory_bytes": k.sharedMemBytes, "stream": None, "cluster": None,
                    "cooperative": False, "attributes": []}
                self.parsed = {"function": k.func, "kern": kern}
                self.params = P.kernel_params(self.sections) if self.sections else None
            elif self.type == 2 and len(raw) >= _MEMSET.sizeof():
                self.parsed = _plain(_MEMSET.parse(raw))
            elif self.type == 1:
                at = T.CUDA_MEMCPY_NODE_PARAMS_PREFIX if generic else 0
                if len(raw) >= at + _MEMCPY.sizeof():
                    m = _MEMCPY.parse(raw[at:at + _MEMCPY.sizeof()])
                    self.parsed = {
                        "src": T.CU_MEMORYTYPE.get(m.srcMemoryType, m.srcMemoryType),
                        "srcDevice": m.srcDevice, "srcHost": m.srcHost,
                        "dst": T.CU_MEMORYTYPE.get(m.dstMemoryType, m.dstMemoryType),
                        "dstDevice": m.dstDevice, "dstHost": m.dstHost,
                        "WidthInBytes": m.WidthInBytes, "Height": m.Height, "Depth": m.Depth}
            elif self.type in (4, 6, 7) and len(raw) >= 8:
                key = {4: "graph", 6: "event", 7: "event"}[self.type]
                self.parsed = {key: int.from_bytes(raw[:8], "little")}
            elif self.type == 13 and len(raw) >= _COND_SIZE:
                c = _COND.parse(raw[:_COND_SIZE])
                bodies = [] if generic else [int.from_bytes(raw[i:i + 8], "little")
                                             for i in range(_COND_SIZE, len(raw) - 7, 8)]
                self.parsed = {"handle": c.handle, "cond_type": T.CU_GRAPH_COND_TYPE.get(
                    c.type, f"{c.type:#x} CU_GRAPH_COND_TYPE_???"), "size": c.size,
                    "bodies": bodies}
        except _BAD:
            self.launch_config = self.params = self.parsed = None

    def from_setter(self, call):
        """This node with the kernel parameters an exec-level set call gave it."""
        n = GraphNode.__new__(GraphNode)
        for k in GraphNode.__slots__:
            setattr(n, k, getattr(self, k))
        n.name, n.index = call.name, call.index
        n.sections = call.sections
        n.launch_config, n.params, n.bound = call.launch_config, call.params, call.bound
        return n

    def to_json(self):
        out = {"graph": self.graph, "node": self.node, "parent": self.parent,
               "type": self.type_name, "depth": self.depth, "body": self.body,
               "flags": list(self.flags), "params": self.parsed}
        if self.launch_config is not None:
            out["launch"] = {k: self.launch_config[k] for k in
                             ("function", "grid", "block", "shared_memory_bytes")}
            out["args"] = [{"index": p["index"], "offset": p["offset"], "size": p["size"],
                            "hex": p["bytes"].hex() if p["bytes"] is not None else None}
                           for p in self.params or []]
        return out


def _plain(container):
    return {k: v for k, v in container.items() if not k.startswith("_")}


class CallGraph:
    """What one call's sections say: `names` (FunctionName), `walk` (the GRAPH_WALK as a
    dict, or None), `nodes` (GraphNode, walk order: a node before what it holds), and
    `problems` (sections that did not parse, skipped)."""

    def __init__(self, call):
        self.names, self.walk, self.nodes, self.problems = [], None, [], []
        for ordered in (call.ordered, call.out_ordered):
            self._parse(call, ordered or ())
        by_node = {}
        for n in self.nodes:
            if "GENERIC" in n.flags and not n.sections:
                n.sections = call.sections      # a *NodeSetParams' arguments are the call's
            n.finish()
            up = by_node.get(n.parent)
            if up is not None:
                n.path = up.path + ((up.node, _kind_of(up), n.body),)
            elif n.parent:
                n.path = ((n.parent, None, n.body),)
            if n.node:
                by_node[n.node] = n

    def _parse(self, call, ordered):
        node = None
        for name, section in ordered:
            data = section["data"]
            try:
                if name == "FUNCTION_NAME":
                    f = _NAME.parse(data)
                    self.names.append(FunctionName(
                        f.handle, f.parent, _flag_list(f.flags, A.FUNCTION_NAME_FLAGS),
                        cstr(f.name) if f.name and not f.flags & _NO_NAME else None))
                elif name == "GRAPH_WALK":
                    w = _WALK.parse(data)
                    self.walk = {"graph": w.graph, "parent": w.parent, "nodes": w.nodes,
                                 "kernels": w.kernels,
                                 "flags": _flag_list(w.flags, A.GRAPH_WALK_FLAGS)}
                    node = None
                elif name == "GRAPH_NODE":
                    node = GraphNode(call, _NODE.parse(data))
                    self.nodes.append(node)
                elif node is not None and name in _ARG_SECTIONS:
                    node.sections[name] = section
                else:
                    self.problems.append(f"{name} section out of place")
            except _BAD as e:
                self.problems.append(f"{name} section does not parse: {e}")
                if name == "GRAPH_NODE":
                    node = None

    def to_json(self):
        out = {}
        if self.names:
            out["function_names"] = [{"handle": f.handle, "parent": f.parent, "name": f.name,
                                      "flags": list(f.flags)}
                                     for f in self.names]
        if self.walk is not None or self.nodes:
            out["graph"] = {"walk": self.walk, "nodes": [n.to_json() for n in self.nodes]}
        return out


def _kind_of(node):
    """A parent node's kind for a path: 'GRAPH' or 'CONDITIONAL WHILE'."""
    if node.type == 13 and node.parsed:
        return f"CONDITIONAL {node.parsed['cond_type']}"
    return node.type_name


class GraphExecs:
    """Graph exec (pid, handle) -> its nodes as the capture set them, call by call (only execs
    whose instantiate or update walked the graph: an exec the capture never saw walked is
    unknown, and replays of it are matched as before issue 25).

    A replay's QMDs are attributed later than the calls that follow it are fed (the
    attribution window), so each node keeps every setting with the index of the call that
    made it, and a replay sees the setting current at its own call: XLA sets a scan body's
    kernel nodes to alternating argument sets between replays (captures/jax-loops
    records 10670 and 10730), and the latest set read for an earlier replay matched none."""

    GENERATIONS = 16    # instantiations of one exec handle kept (a freed handle is reused)
    # Settings kept per node past those no replay can read any more: a job that sets its
    # nodes before every replay (XLA's command buffers: captures/jax-train, 26 a step) must
    # not keep them all. Replays are attributed in the order their QMDs arrived (up to
    # SubmissionDecoder.HOLD launches after their call), so once one at call index `low` was
    # looked up, a setting followed by another at or before `low` is never read again by
    # a later one; one looked up out of order that finds no setting is left not checked.
    SPARE = 4

    def __init__(self):
        # exec -> [generation, ...], one per walk that made it (an instantiate, an exec
        # update), oldest first: {"since": call index, "source": call, "nodes": {node
        # handle: GraphNode} (latest), "history": {node handle: ([call index, ...],
        # [GraphNode, ...])}, "index": {(grid, block): [node handles]} or None (made when
        # asked for, then kept up to date by _set), "order": {node handle: rank of its first
        # setting} (the index's keys in that order), "low": the latest call index a replay
        # was looked up at (SPARE)}. A handle XLA destroys and gets again from the next
        # instantiate (captures/jax-cmdbuf records 1068 and 1104) names two graphs: a replay's
        # QMDs, attributed after later calls are fed, read the generation current at the replay.
        self._execs = {}

    def __contains__(self, exec_):
        return exec_ in self._execs

    def _gen(self, exec_, at=None):
        """The generation of `exec_` current at call index `at` (None: the latest)."""
        gens = self._execs.get(exec_)
        if not gens:
            return None
        if at is None:
            return gens[-1]
        for e in reversed(gens):
            if e["since"] <= at:
                return e
        return None

    def _set(self, e, key, node, index):
        e["nodes"][key] = node
        got = e["history"].get(key)
        if got is None:
            got = e["history"][key] = ([], [])
            e["order"][key] = len(e["order"])
        at, versions = got
        if at and at[-1] == index:
            versions[-1] = node
        else:
            at.append(index)
            versions.append(node)
            low = e["low"]
            while len(at) > self.SPARE and at[1] <= low:
                del at[0], versions[0]
        shapes = e["index"]
        if shapes is not None and node.is_kernel:
            cfg = node.launch_config
            shapes.setdefault((_t(cfg["grid"]), _t(cfg["block"])), {})[key] = None

    def set_walk(self, exec_, call, graph):
        e = {"since": call.index, "source": call, "nodes": {}, "history": {}, "index": None,
             "order": {}, "low": -1}
        gens = self._execs.setdefault(exec_, [])
        gens.append(e)
        del gens[:-self.GENERATIONS]
        for key, n in _keyed(graph.nodes).items():
            self._set(e, key, n, call.index)

    def set_child(self, exec_, parent, call, graph):
        e = self._gen(exec_)
        if e is None:
            return
        nodes = e["nodes"]
        up = nodes.get(parent)
        prefix = up.path + ((parent, _kind_of(up), 0),) if up is not None else ()
        for k in [k for k, n in nodes.items() if any(p[0] == parent for p in n.path)]:
            del nodes[k]
        for n in graph.nodes:
            n.path = prefix + n.path[1:] if n.path and n.path[0][0] == parent else prefix + n.path
            self._set(e, n.node or id(n), n, call.index)

    def set_node(self, exec_, node, call):
        """An exec-level set call gave kernel node `node` new parameters."""
        e = self._gen(exec_)
        if e is None or call.launch_config is None:
            return
        old = e["nodes"].get(node)
        if old is None:         # a node the walk did not record (past a limit): keep it too
            self._set(e, node, _from_call(call, node), call.index)
        else:
            self._set(e, node, old.from_setter(call), call.index)

    def set_params(self, exec_, node, call):
        """An exec-level set of a MEMCPY or MEMSET node (cuGraphExecMemcpyNodeSetParams,
        cuGraphExecMemsetNodeSetParams): its GRAPH_NODE section is the node from now on,
        where the walk put it."""
        e = self._gen(exec_)
        g = call.graph
        if e is None or g is None or not g.nodes:
            return
        new = copy.copy(g.nodes[0])     # (the call's own node stays as its record says)
        old = e["nodes"].get(node)
        if old is not None:
            new.graph, new.parent, new.depth, new.body, new.path = \
                old.graph, old.parent, old.depth, old.body, old.path
        new.node = node
        self._set(e, node, new, call.index)

    def source(self, exec_, at=None):
        e = self._gen(exec_, at)
        return e["source"] if e else None

    def nodes(self, exec_, at=None):
        e = self._gen(exec_, at)
        return list(e["nodes"].values()) if e else None

    def typed(self, exec_, types, at=None):
        """The exec's nodes of these CU_GRAPH_NODE_TYPE numbers, each as set by the last call
        at or before call index `at` (None: the latest); None when the exec is not known.
        (Only asked for a QMD that matched no kernel node: the driver's own kernels.)"""
        e = self._gen(exec_, at)
        if e is None:
            return None
        if at is not None and at > e["low"]:
            e["low"] = at
        out = []
        for key, (calls, versions) in e["history"].items():
            i = len(calls) if at is None else bisect_right(calls, at)
            if i and key in e["nodes"] and versions[i - 1].type in types:
                out.append(versions[i - 1])
        return out

    def candidates(self, exec_, grid, block, at=None):
        """The exec's kernel nodes with this grid and block, each as set by the last call
        at or before call index `at` (None: the latest); None: exec not known."""
        e = self._gen(exec_, at)
        if e is None:
            return None
        if at is not None and at > e["low"]:
            e["low"] = at
        index = e["index"]
        if index is None:
            index = e["index"] = _shapes_of(e["history"])
        keys = index.get((_t(grid), _t(block)), ())
        if len(keys) > 1:
            keys = sorted(keys, key=e["order"].__getitem__)
        out = []
        for key in keys:
            calls, versions = e["history"][key]
            i = len(calls) if at is None else bisect_right(calls, at)
            if i and key in e["nodes"]:
                n = versions[i - 1]
                cfg = n.launch_config
                if n.is_kernel and (_t(cfg["grid"]), _t(cfg["block"])) == (_t(grid), _t(block)):
                    out.append(n)
        return out


def _shapes_of(history):
    """{(grid, block): {node handle: None}}: every shape a kept setting of a kernel node
    had (GraphExecs._set adds each new one)."""
    index = {}
    for key, (_, versions) in history.items():
        for n in versions:
            if n.is_kernel:
                cfg = n.launch_config
                index.setdefault((_t(cfg["grid"]), _t(cfg["block"])), {})[key] = None
    return index


def _t(v):
    return tuple(v) if v is not None else None


def by_shape(nodes):
    """{(grid, block): [kernel nodes]} in order."""
    index = {}
    for n in nodes:
        if n.is_kernel:
            cfg = n.launch_config
            index.setdefault((_t(cfg["grid"]), _t(cfg["block"])), []).append(n)
    return index


def _keyed(nodes):
    return {n.node or id(n): n for n in nodes}


def _from_call(call, node):
    """A kernel node known only from an exec-level set call."""
    head = _NODE.parse(_NODE.build(dict(graph=0, node=node, parent=0, type=0, depth=0, body=0,
                                        flags=0, params_size=0, params=b"")))
    n = GraphNode(call, head)
    n.launch_config, n.params, n.bound = call.launch_config, call.params, call.bound
    n.sections = call.sections
    return n


def match(candidates, hw_bytes, prefer=None, used=()):
    """(node, how) of the candidate kernel nodes (same grid and block) whose argument bytes
    are the QMD's; among several, the one whose kernel is `prefer` (a mangled name) when
    given, and first those not in `used` (node handles that already ran in this replay: a
    conditional body may hold the same kernel with the same arguments as the top level,
    XLA's loop_compare_fusion and set_while_condition in out/run7). (None, None) when none."""
    hw_bytes = hw_bytes or b""
    exact, loose = [], []
    for n in candidates:
        params = n.params
        if params and all(p["bytes"] is not None for p in params):
            if all(hw_bytes[p["offset"]:p["offset"] + p["size"]] == p["bytes"] for p in params):
                exact.append(n)
            continue
        extra = n.param_bytes if not params else None
        if extra:
            if hw_bytes[:len(extra)] == extra:
                exact.append(n)
            continue
        loose.append(n)     # no parameters, or their bytes not in the capture
    for group, how in ((exact, "grid, block and argument bytes"), (loose, "grid and block")):
        if group and used:
            group = [n for n in group if n.node not in used] + \
                    [n for n in group if n.node in used]
        if group:
            if prefer is not None:
                for n in group:
                    if n.bound and n.bound[0] and n.bound[0][0] == prefer:
                        return n, how
            return group[0], how
    return None, None


MEMCPY, MEMSET, CONDITIONAL = 1, 2, 13      # CU_GRAPH_NODE_TYPE


def copy_node_args(node):
    """A MEMCPY or MEMSET node's parameters as the arguments of the call the driver's kernel
    would run for (decoders/cuda/driverkernels.py API_ARGS), or (None, why not)."""
    p = node.parsed
    if p is None:
        return None, "the capture's record of the node's parameters does not parse"
    if node.type == MEMCPY:
        if (p["src"], p["dst"]) != ("DEVICE", "DEVICE"):
            return None, f"a {p['src']} to {p['dst']} copy (only device to device is measured)"
        if (p["Height"], p["Depth"]) != (1, 1):
            return None, (f"a {p['WidthInBytes']}x{p['Height']}x{p['Depth']} copy (only "
                          "one row is measured)")
        return {"dstDevice": p["dstDevice"], "srcDevice": p["srcDevice"],
                "ByteCount": p["WidthInBytes"]}, None
    if p["height"] != 1:
        return None, f"a {p['width']}x{p['height']} memset (only one row is measured)"
    return {"dstDevice": p["dst"], "N": p["width"], "value": p["value"]}, None


def copy_node_span(node):
    """(dst, bytes, src or None) a MEMCPY or MEMSET node writes, or None."""
    p = node.parsed
    if p is None or node.type not in (MEMCPY, MEMSET):
        return None
    if node.type == MEMCPY:
        return p["dstDevice"], p["WidthInBytes"] * p["Height"] * p["Depth"], p["srcDevice"]
    return p["dst"], p["width"] * p["height"] * p["elementSize"], None


def conditional_where(node):
    """'WHILE body 0 of conditional node 0x..' for a node inside conditional bodies (the
    innermost), or None."""
    for h, kind, body in reversed(node.path):
        if kind and kind.startswith("CONDITIONAL"):
            return kind[len("CONDITIONAL "):], body, h
    return None


def unmatched_why(base, exec_, source, nodes):
    """Why a QMD of a replay of a known exec matched none of its nodes."""
    kinds = Counter(n.type_name for n in nodes)
    kernels = sum(1 for n in nodes if n.is_kernel)
    why = (f"{base} runs graph exec {exec_:#x}, and none of the {kernels} kernel nodes the "
           f"capture holds for it ({source.name}, record {source.index}, and the exec-level "
           "sets since) has this grid, block and argument bytes")
    driver = kinds.get("MEMSET", 0) + kinds.get("MEMCPY", 0)
    if driver:
        why += (f"; its {driver} memset/memcpy node(s) run kernels of the driver's own, which "
                "name no kernel or argument layout")
    return why
