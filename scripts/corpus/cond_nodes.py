"""CUDA graphs with CONDITIONAL nodes of every kind, built through cuda-python's driver API
(issue 25): what the driver's own conditional-node kernel is given for IF, SWITCH and
WHILE nodes, and what a replay sends when a body runs 0, 1 or many times.

Graphs (each instantiated once and replayed REPLAYS times):
  if-true     cn_count(0) -> IF (default 1) { cn_count(1) }
  if-false    cn_count(3) -> IF (default 0) { cn_count(2) }
  switch      cn_set(h, 2) -> SWITCH of 3 bodies { cn_count(4) | cn_count(5) | cn_count(6) }
  while       cn_reset(left, 4) -> WHILE (default 1) { cn_count(7) -> cn_loop(h, left) }
  while-zero  cn_count(9) -> WHILE (default 0) { cn_count(8) }
  while-captured  cn_reset(left2, 3) -> WHILE (default 1) { cn_count(10) -> cn_loop(h, left2) },
              the body filled by stream capture (cuStreamBeginCaptureToGraph, launches on a
              capturing stream), as PyTorch's and others' conditional capture does
  nested      cn_reset(left3, 2) -> WHILE (default 1) { cn_count(11) -> IF (default 1)
              { cn_count(12) } -> cn_loop(h, left3) }: a conditional node inside a body
Each body kernel counts its runs in hits[slot]; the counts read back are the truth of how
many times each body ran. A condition's default is assigned at every launch
(CU_GRAPH_COND_ASSIGN_DEFAULT).

Truth (first argument, JSON): per graph its nodes (kind, conditional type/size/handle,
each body's kernel nodes read back through the driver), the body run counts, and every
kernel the GPU ran during the replays from CUPTI (torch.profiler)."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import param_info  # noqa: E402
from tracer.cudaapi import check, open_module  # noqa: E402

REPLAYS = 3
SLOTS = 13
TRIPS = 4


def main():
    d, module, arch = open_module("cond_nodes.cu")
    ctx = check(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    fn = {n: check(d.cuModuleGetFunction(module, n.encode()), n)
          for n in ("cn_count", "cn_set", "cn_reset", "cn_loop")}
    info = {n: param_info(d, f) for n, f in fn.items()}
    hits = check(d.cuMemAlloc(4 * SLOTS), "cuMemAlloc hits")
    left = check(d.cuMemAlloc(4), "cuMemAlloc left")
    left2 = check(d.cuMemAlloc(4), "cuMemAlloc left2")
    left3 = check(d.cuMemAlloc(4), "cuMemAlloc left3")
    check(d.cuMemsetD32(hits, 0, SLOTS), "memset hits")
    keep = []
    COND = d.CUgraphConditionalNodeType

    def blob(values, name):
        return _truth.param_blob(values, info[name])

    def kernel(graph, deps, name, *values):
        p = d.CUDA_KERNEL_NODE_PARAMS()
        p.func = fn[name]
        p.gridDimX, p.gridDimY, p.gridDimZ = 1, 1, 1
        p.blockDimX, p.blockDimY, p.blockDimZ = 32, 1, 1
        p.sharedMemBytes = 0
        arr = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        keep.append((arr, values))
        p.kernelParams = ctypes.addressof(arr)
        node = check(d.cuGraphAddKernelNode(graph, deps, len(deps), p), f"add {name}")
        return node, {"kernel": name, "grid": [1, 1, 1], "block": [32, 1, 1],
                      "param_bytes": blob(values, name).hex()}

    def conditional(graph, deps, kind, size, default, handle=None):
        """(node, handle, body graphs) of a conditional node added to `graph`; its handle
        made on `graph` with `default` assigned at each launch, unless one is given."""
        if handle is None:
            flags = 1 if default is not None else 0     # CU_GRAPH_COND_ASSIGN_DEFAULT
            handle = check(d.cuGraphConditionalHandleCreate(graph, ctx, default or 0, flags),
                           "cuGraphConditionalHandleCreate")
        p = d.CUgraphNodeParams()
        p.type = d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        p.conditional.handle = handle
        p.conditional.type = kind
        p.conditional.size = size
        p.conditional.ctx = ctx
        try:        # cuda-bindings 12: (graph, deps, n, params); 13: edge data too
            node = check(d.cuGraphAddNode(graph, deps, len(deps), p), "cuGraphAddNode")
        except TypeError:
            node = check(d.cuGraphAddNode(graph, deps, None, len(deps), p), "cuGraphAddNode")
        bodies = list(p.conditional.phGraph_out)[:size]
        return node, handle, bodies

    def c_ptr(v):
        return ctypes.c_uint64(int(v))

    def build(name):
        g = check(d.cuGraphCreate(0), "cuGraphCreate")
        nodes = []
        if name in ("if-true", "if-false"):
            first, slot, default = (0, 1, 1) if name == "if-true" else (3, 2, 0)
            n0, t0 = kernel(g, [], "cn_count", c_ptr(hits), ctypes.c_int(first))
            c, h, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_IF, 1, default)
            _, tb = kernel(bodies[0], [], "cn_count", c_ptr(hits), ctypes.c_int(slot))
            nodes = [t0, {"conditional": "IF", "size": 1, "default": default, "handle": int(h),
                          "bodies": [[tb]]}]
            runs = {str(first): 1, str(slot): default}
        elif name == "switch":
            c0 = check(d.cuGraphConditionalHandleCreate(g, ctx, 0, 0), "handle")
            # the handle is made before the setter that names it
            n0, t0 = kernel(g, [], "cn_set", ctypes.c_uint64(int(c0)), ctypes.c_uint(2))
            _, _, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_SWITCH, 3, None, c0)
            tb = [kernel(b, [], "cn_count", c_ptr(hits), ctypes.c_int(4 + k))[1]
                  for k, b in enumerate(bodies)]
            nodes = [t0, {"conditional": "SWITCH", "size": 3, "set_to": 2, "handle": int(c0),
                          "bodies": [[t] for t in tb]}]
            runs = {"4": 0, "5": 0, "6": 1}
        elif name == "while":
            n0, t0 = kernel(g, [], "cn_reset", c_ptr(left), ctypes.c_int(TRIPS))
            c, h, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_WHILE, 1, 1)
            b1, tb1 = kernel(bodies[0], [], "cn_count", c_ptr(hits), ctypes.c_int(7))
            _, tb2 = kernel(bodies[0], [b1], "cn_loop", ctypes.c_uint64(int(h)), c_ptr(left))
            nodes = [t0, {"conditional": "WHILE", "size": 1, "default": 1, "trips": TRIPS,
                          "handle": int(h),
                          "bodies": [[tb1, tb2]]}]
            runs = {"7": TRIPS}
        elif name == "while-captured":
            n0, t0 = kernel(g, [], "cn_reset", c_ptr(left2), ctypes.c_int(3))
            c, h, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_WHILE, 1, 1)
            stream = check(d.cuStreamCreate(1), "cuStreamCreate")     # non-blocking
            mode = d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
            try:
                check(d.cuStreamBeginCaptureToGraph(stream, bodies[0], None, None, 0, mode),
                      "cuStreamBeginCaptureToGraph")
            except TypeError:
                check(d.cuStreamBeginCaptureToGraph(stream, bodies[0], None, 0, mode),
                      "cuStreamBeginCaptureToGraph")
            tb = []
            for name_, vals in (("cn_count", [c_ptr(hits), ctypes.c_int(10)]),
                                ("cn_loop", [ctypes.c_uint64(int(h)), c_ptr(left2)])):
                arr = (ctypes.c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
                keep.append((arr, vals))
                check(d.cuLaunchKernel(fn[name_], 1, 1, 1, 32, 1, 1, 0, stream,
                                       ctypes.addressof(arr), 0), f"captured {name_}")
                tb.append({"kernel": name_, "grid": [1, 1, 1], "block": [32, 1, 1],
                           "param_bytes": blob(vals, name_).hex()})
            check(d.cuStreamEndCapture(stream), "cuStreamEndCapture")
            nodes = [t0, {"conditional": "WHILE", "size": 1, "default": 1, "trips": 3,
                          "handle": int(h), "captured": True, "bodies": [tb]}]
            runs = {"10": 3}
        elif name == "nested":
            n0, t0 = kernel(g, [], "cn_reset", c_ptr(left3), ctypes.c_int(2))
            c, h, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_WHILE, 1, 1)
            body = bodies[0]
            b1, tb1 = kernel(body, [], "cn_count", c_ptr(hits), ctypes.c_int(11))
            try:    # the inner node's handle on the body graph it is in, else on the outer
                ci, hi, inner = conditional(body, [b1], COND.CU_GRAPH_COND_TYPE_IF, 1, 1)
                where = "body"
            except Exception:
                hi = check(d.cuGraphConditionalHandleCreate(g, ctx, 1, 1), "handle")
                ci, hi, inner = conditional(body, [b1], COND.CU_GRAPH_COND_TYPE_IF, 1, 1, hi)
                where = "outer graph"
            _, tin = kernel(inner[0], [], "cn_count", c_ptr(hits), ctypes.c_int(12))
            _, tb2 = kernel(body, [ci], "cn_loop", ctypes.c_uint64(int(h)), c_ptr(left3))
            nodes = [t0, {"conditional": "WHILE", "size": 1, "default": 1, "trips": 2,
                          "handle": int(h), "bodies": [[tb1, {
                              "conditional": "IF", "size": 1, "default": 1, "handle": int(hi),
                              "handle_made_on": where, "bodies": [[tin]]}, tb2]]}]
            runs = {"11": 2, "12": 2}
        else:   # while-zero
            n0, t0 = kernel(g, [], "cn_count", c_ptr(hits), ctypes.c_int(9))
            c, h, bodies = conditional(g, [n0], COND.CU_GRAPH_COND_TYPE_WHILE, 1, 0)
            _, tb = kernel(bodies[0], [], "cn_count", c_ptr(hits), ctypes.c_int(8))
            nodes = [t0, {"conditional": "WHILE", "size": 1, "default": 0, "handle": int(h),
                          "bodies": [[tb]]}]
            runs = {"8": 0, "9": 1}
        return g, nodes, runs

    truth = {"kernel_source": "kernels/cond_nodes.cu", "arch": f"sm_{arch}", "replays": REPLAYS,
             "graphs": {}}
    names = ("if-true", "if-false", "switch", "while", "while-zero", "while-captured", "nested")
    built = {}
    for name in names:
        try:
            built[name] = build(name)
        except Exception as exc:
            truth["graphs"][name] = {"error": f"build: {exc}"}
    with _truth.CuptiKernels() as k:
        for name, (g, nodes, runs) in built.items():
            try:
                ge = check(d.cuGraphInstantiate(g, 0), "cuGraphInstantiate")
                for _ in range(REPLAYS):
                    check(d.cuGraphLaunch(ge, 0), "cuGraphLaunch")
                check(d.cuCtxSynchronize(), "sync")
                truth["graphs"][name] = {"nodes": nodes, "runs_per_replay": runs}
            except Exception as exc:
                truth["graphs"][name] = {"nodes": nodes, "error": str(exc)}
    counts = (ctypes.c_int * SLOTS)()
    check(d.cuMemcpyDtoH(ctypes.addressof(counts), hits, 4 * SLOTS), "DtoH")
    truth["hits"] = list(counts)
    truth["cupti"] = k.to_json()
    _truth.write(truth)
    errors = [n for n, t in truth["graphs"].items() if "error" in t]
    print(f"cond_nodes: graphs {len(built)}, hits {list(counts)}, errors {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
