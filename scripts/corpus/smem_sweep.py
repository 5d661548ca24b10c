"""Shared-memory allocation sweep on the GPU (issue 16): dynamic shared memory from 0 to the
opt-in maximum, with fine steps around 128 B, 1 KiB, 8 KiB and 48 KiB edges, static
__shared__ sizes with and without dynamic memory, and cluster launches. One launch each;
the truth holds what was asked (static size from CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
dynamic size, cluster) and the device's limits, so the decoded QMD fields can be tabulated
against them (docs/shared-memory.md)."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import MARK_BEGIN, MARK_END, marker, param_info  # noqa: E402
from tracer.cudaapi import check, launch, open_module  # noqa: E402


def main():
    mark = marker()
    d, module, arch = open_module("smem_sweep.cu")
    A = d.CUfunction_attribute
    dev = check(d.cuCtxGetDevice(), "cuCtxGetDevice")
    DA = d.CUdevice_attribute
    limits = {k: check(d.cuDeviceGetAttribute(getattr(DA, k), dev), k) for k in (
        "CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK",
        "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
        "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
        "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK")}
    optin = limits["CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"]
    out = check(d.cuMemAlloc(1 << 20), "cuMemAlloc")
    outp = ctypes.c_uint64(int(out))
    funcs = {}

    def fn(name):
        if name not in funcs:
            f = check(d.cuModuleGetFunction(module, name.encode()), name)
            static = check(d.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "static")
            check(d.cuFuncSetAttribute(f, A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       optin - static), "max dynamic")
            funcs[name] = (f, static)
        return funcs[name]

    dyn_sizes = sorted({0, 1, 4, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 1068,
                        2047, 2048, 2049, 2056, 3088, 4096, 8191, 8192, 8193, 8720, 16384, 32768,
                        33800, 49151, 49152, 49153, 65536, 100000, 131072, 163840, 196608,
                        204800, optin - 129, optin - 128, optin - 1, optin})
    plan = [("sm_dyn", n, None) for n in dyn_sizes]
    for s in (4, 1000, 1024, 1068, 4096, 8720, 33800, 49152):
        plan.append((f"sm_static_{s}", 0, None))
        plan.append((f"sm_static_{s}", 1000, None))
    for n in (0, 1000, 8192, 100000):
        plan.append(("sm_cluster", n, (2, 1, 1)))
    plan.append(("sm_cluster", 4096, (4, 1, 1)))
    launches = []
    for ident, (name, dyn, cluster) in enumerate(plan):
        f, static = fn(name)
        if static + dyn > optin:
            continue
        nwords = ctypes.c_uint32(min(dyn // 4, 128))
        vals = [outp, nwords]
        ptrs = (ctypes.c_void_p * 2)(*[ctypes.addressof(v) for v in vals])
        grid, block = (2 if cluster is None else cluster[0] * 2, 1, 1), (128, 1, 1)
        entry = {"id": ident, "kernel": name, "grid": list(grid), "block": list(block),
                 "cluster": list(cluster) if cluster else None, "shared_mem_dynamic": dyn,
                 "shared_mem_static": static, "param_info": param_info(d, f),
                 "args": {"out": outp.value, "nwords": nwords.value}}
        mark(MARK_BEGIN, ident, f"smem {name} {dyn}")
        try:
            launch(d, f, grid, block, dyn, ptrs, cluster, name)
            check(d.cuCtxSynchronize(), "sync")
            entry["ok"] = True
        except Exception as exc:
            entry["ok"] = False
            entry["error"] = str(exc)
        mark(MARK_END, ident, f"smem {name} {dyn}")
        launches.append(entry)
    _truth.write({"kernel_source": "kernels/smem_sweep.cu", "arch": f"sm_{arch}",
                  "device_limits": limits, "launches": launches})
    bad = [l["id"] for l in launches if not l["ok"]]
    print(f"smem_sweep: {len(launches)} launches, failed: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
