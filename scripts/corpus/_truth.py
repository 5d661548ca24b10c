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


def primary_context():
    """(driver module, device 0's primary context made current, a non-blocking stream)."""
    d = driver()
    ok(d.cuInit(0), "cuInit")
    ctx = ok(d.cuDevicePrimaryCtxRetain(ok(d.cuDeviceGet(0), "cuDeviceGet")),
             "cuDevicePrimaryCtxRetain")
    ok(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return d, ctx, ok(d.cuStreamCreate(1), "cuStreamCreate")    # CU_STREAM_NON_BLOCKING


def host_to_device(d, ptr, data):
    """Copy `data` (bytes) to device address `ptr` (cuMemcpyHtoD: a copy engine transfer)."""
    import ctypes
    buf = ctypes.create_string_buffer(data, len(data))
    ok(d.cuMemcpyHtoD(ptr, ctypes.addressof(buf), len(data)), "cuMemcpyHtoD")


def device_bytes(d, ptr, n):
    """The n bytes at device address `ptr`, read back (cuMemcpyDtoH)."""
    import ctypes
    got = ctypes.create_string_buffer(n)
    ok(d.cuMemcpyDtoH(ctypes.addressof(got), ptr, n), "cuMemcpyDtoH")
    return got.raw


def finish(program, truth, what, wrong_key):
    """Write the truth, print the one line native and traced runs compare, and give the exit
    status: 1 when any of `what` came out wrong."""
    write(truth)
    print(f"{program}: {len(truth['cases'])} {what}, {wrong_key.replace('_', ' ')}: "
          f"{truth[wrong_key]}")
    return 1 if truth[wrong_key] else 0


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


def param_blob(values, info):
    """The parameter bytes a launch of ctypes `values` passes, laid out by param_info's
    offsets and sizes (cuFuncGetParamInfo)."""
    import ctypes
    blob = bytearray(max(p["offset"] + p["size"] for p in info))
    for v, p in zip(values, info):
        blob[p["offset"]:p["offset"] + p["size"]] = ctypes.string_at(ctypes.addressof(v), p["size"])
    return bytes(blob)


def graph_nodes(graph):
    """Every node of a CUgraph, in the graph's node order: a kernel node with its launch
    configuration and parameter bytes read back through cuGraphKernelNodeGetParams, a
    MEMCPY node with its src, dst and extent through cuGraphMemcpyNodeGetParams."""
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
        elif kind == d.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMCPY:
            p = ok(d.cuGraphMemcpyNodeGetParams(node), "cuGraphMemcpyNodeGetParams")
            entry.update({"src": int(p.srcDevice), "dst": int(p.dstDevice),
                          "width": int(p.WidthInBytes), "height": int(p.Height),
                          "depth": int(p.Depth)})
        out.append(entry)
    return out


class CuptiKernels:
    """Every kernel the GPU ran inside the `with` block, as CUPTI saw it (independent of the
    shim): torch.profiler with ProfilerActivity.CUDA profiles all CUDA activity of the
    process, CuPy's and JAX's included. `kernels` afterwards: [{name, grid, block,
    registers, shared_memory, stream, correlation, graph_node, ts}] in start order (from the
    profiler's Chrome trace, whose kernel events carry the CUPTI activity record's fields);
    `error` says why there are none (no torch, or CUPTI refused), and the program goes on.
    TRUTH_CUPTI=0 turns it off (CUPTI adds its own timestamp work to every launch, which a
    capture then also holds)."""

    def __init__(self):
        self.kernels, self.error, self._prof = [], None, None

    def __enter__(self):
        import os
        if os.environ.get("TRUTH_CUPTI", "1") == "0":
            self.error = "TRUTH_CUPTI=0"
            return self
        try:
            from torch.profiler import ProfilerActivity, profile
            self._prof = profile(activities=[ProfilerActivity.CUDA])
            self._prof.__enter__()
        except Exception as exc:      # no torch here, or CUPTI would not start
            self.error, self._prof = f"torch.profiler: {exc!r}", None
        return self

    def __exit__(self, *exc):
        if self._prof is None:
            return False
        import json
        import os
        import tempfile
        try:
            self._prof.__exit__(*exc)
            fd, path = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            self._prof.export_chrome_trace(path)
            with open(path) as f:
                events = json.load(f).get("traceEvents", [])
            os.unlink(path)
        except Exception as e:
            self.error = f"torch.profiler trace: {e!r}"
            return False
        for ev in events:
            if ev.get("cat") != "kernel":
                continue
            a = ev.get("args", {})
            self.kernels.append({
                "name": ev.get("name"), "grid": a.get("grid"), "block": a.get("block"),
                "registers": a.get("registers per thread"),
                "shared_memory": a.get("shared memory"), "stream": a.get("stream"),
                "correlation": a.get("correlation"),
                "graph_node": a.get("graph node id", a.get("graph_node_id")),
                "ts": ev.get("ts")})
        self.kernels.sort(key=lambda k: k["ts"] or 0)
        return False

    def to_json(self):
        from collections import Counter
        return {"source": "CUPTI via torch.profiler (ProfilerActivity.CUDA)",
                "error": self.error, "count": len(self.kernels),
                "by_name": dict(Counter(k["name"] for k in self.kernels)),
                "kernels": self.kernels}
