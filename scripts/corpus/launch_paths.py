"""Every way a kernel's arguments reach the GPU (issue 16), through cuda-python's driver API:
a graph of two kernel nodes (cuGraphAddKernelNode) instantiated, uploaded and replayed,
then changed with cuGraphExecKernelNodeSetParams and replayed, then updated from a second
graph with cuGraphExecUpdate and replayed; cuLaunchKernel with `extra`
(CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE); cuLaunchCooperativeKernel; a library kernel
(cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction). The truth: per replay, each
node's kernel, grid, block and parameter bytes; per direct launch, the same."""
import ctypes
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import compile_nvrtc, kernel_source, param_info  # noqa: E402
from tracer.cudaapi import check, open_module  # noqa: E402

N = 1 << 16


class Pair(ctypes.Structure):
    _fields_ = [("k", ctypes.c_int), ("v", ctypes.c_double)]


def main():
    d, module, arch = open_module("graph_nodes.cu")
    truth = {"kernel_source": "kernels/graph_nodes.cu", "arch": f"sm_{arch}", "sections": {}}
    fn = {n: check(d.cuModuleGetFunction(module, n.encode()), n)
          for n in ("gn_scale", "gn_offset", "gn_mixed")}
    info = {n: param_info(d, f) for n, f in fn.items()}
    buf = check(d.cuMemAlloc(4 * N), "cuMemAlloc")
    check(d.cuMemsetD32(buf, 0x3F800000, N), "memset 1.0")   # x[i] = 1.0
    xp = ctypes.c_uint64(int(buf))
    keep = []

    def node_params(name, grid, block, values):
        p = d.CUDA_KERNEL_NODE_PARAMS()
        p.func = fn[name]
        p.gridDimX, p.gridDimY, p.gridDimZ = grid
        p.blockDimX, p.blockDimY, p.blockDimZ = block
        p.sharedMemBytes = 0
        arr = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        keep.append((arr, values))
        p.kernelParams = ctypes.addressof(arr)
        return p, {"kernel": name, "grid": list(grid), "block": list(block),
                   "param_bytes": _truth.param_blob(values, info[name]).hex()}

    def build(a, b):
        g = check(d.cuGraphCreate(0), "cuGraphCreate")
        p1, t1 = node_params("gn_scale", (N // 256, 1, 1), (256, 1, 1),
                             [xp, ctypes.c_float(a), ctypes.c_int(N)])
        n1 = check(d.cuGraphAddKernelNode(g, None, 0, p1), "add scale")
        p2, t2 = node_params("gn_offset", (N // 128, 1, 1), (128, 1, 1),
                             [xp, ctypes.c_float(b), ctypes.c_int(N)])
        n2 = check(d.cuGraphAddKernelNode(g, [n1], 1, p2), "add offset")
        return g, (n1, n2), [t1, t2]

    replays = []
    try:
        g, (n1, n2), nodes = build(2.0, 1.0)
        ge = check(d.cuGraphInstantiate(g, 0), "cuGraphInstantiate")
        check(d.cuGraphUpload(ge, 0), "cuGraphUpload")
        for _ in range(2):
            check(d.cuGraphLaunch(ge, 0), "cuGraphLaunch")
            replays.append({"after": "instantiate", "nodes": nodes})
        check(d.cuCtxSynchronize(), "sync")
        p1, t1 = node_params("gn_scale", (N // 512, 1, 1), (512, 1, 1),
                             [xp, ctypes.c_float(0.5), ctypes.c_int(N)])
        check(d.cuGraphExecKernelNodeSetParams(ge, n1, p1), "cuGraphExecKernelNodeSetParams")
        nodes = [t1, nodes[1]]
        for _ in range(2):
            check(d.cuGraphLaunch(ge, 0), "cuGraphLaunch")
            replays.append({"after": "cuGraphExecKernelNodeSetParams", "nodes": nodes})
        check(d.cuCtxSynchronize(), "sync")
        g2, _, nodes2 = build(3.0, -1.0)
        res = d.cuGraphExecUpdate(ge, g2)
        if int(res[0]) != 0:
            raise RuntimeError(f"cuGraphExecUpdate: {res!r}")
        check(d.cuGraphLaunch(ge, 0), "cuGraphLaunch")
        replays.append({"after": "cuGraphExecUpdate", "nodes": nodes2})
        check(d.cuCtxSynchronize(), "sync")
        truth["sections"]["graph"] = {"ok": True, "replays": replays}
    except Exception as exc:
        truth["sections"]["graph"] = {"ok": False, "error": str(exc), "replays": replays}

    direct = []
    try:   # cuLaunchKernel with `extra`: the packed parameter buffer
        vals = [xp, ctypes.c_char(b"\x05"), Pair(7, 0.25), ctypes.c_short(-3), ctypes.c_int(N)]
        blob = _truth.param_blob(vals, info["gn_mixed"])
        cblob = ctypes.create_string_buffer(blob, len(blob))
        size = ctypes.c_size_t(len(blob))
        extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(cblob), 2, ctypes.addressof(size), 0)
        check(d.cuLaunchKernel(fn["gn_mixed"], N // 256, 1, 1, 256, 1, 1, 0, 0, 0,
                               ctypes.addressof(extra)), "cuLaunchKernel extra")
        direct.append({"path": "cuLaunchKernel extra", "kernel": "gn_mixed", "grid": [N // 256, 1, 1],
                       "block": [256, 1, 1], "param_bytes": blob.hex()})
        check(d.cuCtxSynchronize(), "sync")
    except Exception as exc:
        direct.append({"path": "cuLaunchKernel extra", "error": str(exc)})
    try:   # cooperative launch
        vals = [xp, ctypes.c_float(1.0), ctypes.c_int(N)]
        arr = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in vals])
        check(d.cuLaunchCooperativeKernel(fn["gn_scale"], 64, 1, 1, 128, 1, 1, 0, 0,
                                          ctypes.addressof(arr)), "cuLaunchCooperativeKernel")
        direct.append({"path": "cuLaunchCooperativeKernel", "kernel": "gn_scale", "grid": [64, 1, 1],
                       "block": [128, 1, 1], "param_bytes": _truth.param_blob(vals, info["gn_scale"]).hex()})
        check(d.cuCtxSynchronize(), "sync")
    except Exception as exc:
        direct.append({"path": "cuLaunchCooperativeKernel", "error": str(exc)})
    try:   # library kernel
        cubin = compile_nvrtc(kernel_source("graph_nodes.cu"), arch, b"graph_nodes.cu")
        lib = check(d.cuLibraryLoadData(cubin, None, None, 0, None, None, 0), "cuLibraryLoadData")
        k = check(d.cuLibraryGetKernel(lib, b"gn_offset"), "cuLibraryGetKernel")
        f = check(d.cuKernelGetFunction(k), "cuKernelGetFunction")
        vals = [xp, ctypes.c_float(0.125), ctypes.c_int(N)]
        arr = (ctypes.c_void_p * 3)(*[ctypes.addressof(v) for v in vals])
        check(d.cuLaunchKernel(f, N // 256, 1, 1, 256, 1, 1, 0, 0, ctypes.addressof(arr), 0),
              "cuLaunchKernel library")
        direct.append({"path": "cuLibraryGetKernel/cuKernelGetFunction", "kernel": "gn_offset",
                       "grid": [N // 256, 1, 1], "block": [256, 1, 1],
                       "param_bytes": _truth.param_blob(vals, info["gn_offset"]).hex()})
        check(d.cuCtxSynchronize(), "sync")
    except Exception as exc:
        direct.append({"path": "library", "error": str(exc)})
    truth["sections"]["direct"] = direct
    host = (ctypes.c_float * 4)()
    check(d.cuMemcpyDtoH(ctypes.addressof(host), buf, 16), "DtoH")
    truth["result_x0"] = host[0]
    _truth.write(truth)
    errors = [s for s in direct if "error" in s] + ([] if truth["sections"]["graph"]["ok"] else [1])
    print(f"launch_paths: graph replays {len(replays)}, direct {len(direct)}, x0={host[0]:.4f}, "
          f"errors {len(errors)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
