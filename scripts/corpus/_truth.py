"""Ground truth helpers for the real-workload corpus programs: each program writes what it
knows at capture time (launch configurations, graph nodes read back through the driver's
graph API, argument values) to the JSON path given as its first argument."""
import json
import sys


def out_path():
    return sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None


def write(truth):
    p = out_path()
    if p:
        with open(p, "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True, default=str)


def driver():
    from cuda.bindings import driver as d
    return d


def ok(res, what):
    err, *rest = res if isinstance(res, tuple) else (res,)
    if int(err) != 0:
        raise RuntimeError(f"{what}: {err!r}")
    return rest[0] if len(rest) == 1 else tuple(rest)


def func_name(d, func):
    """A CUfunction's mangled name (cuFuncGetName)."""
    try:
        name = ok(d.cuFuncGetName(func), "cuFuncGetName")
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # older drivers: keep going without the name
        return f"<cuFuncGetName failed: {exc}>"


def param_info(d, func):
    """cuFuncGetParamInfo: (offset, size) per parameter."""
    out = []
    for i in range(4096):
        err, off, size = d.cuFuncGetParamInfo(func, i)
        if int(err) != 0:
            break
        out.append({"offset": int(off), "size": int(size)})
    return out


def graph_nodes(graph):
    """Every kernel node of a CUgraph, in the graph's node order, with its launch
    configuration and parameter bytes read back through cuGraphKernelNodeGetParams."""
    import ctypes
    d = driver()
    g = d.CUgraph(int(graph)) if not isinstance(graph, d.CUgraph) else graph
    nodes, n = ok(d.cuGraphGetNodes(g, 0), "cuGraphGetNodes count")
    nodes, n = ok(d.cuGraphGetNodes(g, n), "cuGraphGetNodes")
    out = []
    for i, node in enumerate(nodes[:n]):
        kind = ok(d.cuGraphNodeGetType(node), "cuGraphNodeGetType")
        entry = {"index": i, "type": kind.name if hasattr(kind, "name") else str(kind)}
        if kind == d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL:
            p = ok(d.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
            func = p.func
            info = param_info(d, func)
            entry.update({"kernel": func_name(d, func),
                          "grid": [p.gridDimX, p.gridDimY, p.gridDimZ],
                          "block": [p.blockDimX, p.blockDimY, p.blockDimZ],
                          "shared_mem_dynamic": p.sharedMemBytes, "param_info": info})
            try:
                ptrs = int(p.kernelParams)
                if ptrs and info:
                    arr = (ctypes.c_void_p * len(info)).from_address(ptrs)
                    blob = bytearray(max(x["offset"] + x["size"] for x in info))
                    for x, a in zip(info, arr):
                        blob[x["offset"]:x["offset"] + x["size"]] = ctypes.string_at(a, x["size"])
                    entry["param_bytes"] = bytes(blob).hex()
            except Exception as exc:
                entry["param_bytes_error"] = str(exc)
        out.append(entry)
    return out
