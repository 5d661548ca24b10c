"""The built-in launch: vadd through cuda-python's driver API only, compiled by NVRTC.

Run by `trace-launch` (no PROGRAM) in a child process under the shim:
cuInit, the primary context, cuModuleLoadData, cuMemAlloc, cuMemcpyHtoD, cuLaunchKernel
(grid 4096, block 256, n = 2^20, inputs 1.0 by default), cuMemcpyDtoH, then a check that
c == 2 wherever the grid reached. Marks written through the shim bracket each launch.
--truth writes the ground truth (launch configuration, pointers, cuFuncGetParamInfo).
"""
import argparse
import ctypes
import json
import sys
from importlib import resources
from pathlib import Path

from tracer.cudaapi import CudaError, _modules, check, open_module

MARK_BEGIN, MARK_END = 1, 2


def kernel_source(name="vadd.cu"):
    try:
        return resources.files("tracer.kernels").joinpath(name).read_text()
    except (ModuleNotFoundError, FileNotFoundError, TypeError):
        return (Path(__file__).resolve().parent.parent / "kernels" / name).read_text()


def marker():
    """The shim's tracelaunch_mark, when this process runs under it."""
    try:
        lib = ctypes.CDLL(None)
        fn = lib.tracelaunch_mark
    except (OSError, AttributeError):
        return lambda kind, ident, label: None
    fn.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
    return lambda kind, ident, label: fn(kind, ident, label.encode())


def compile_nvrtc(source, arch, name=b"vadd.cu"):
    _, nvrtc = _modules()
    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), name, 0, [], []), "nvrtcCreateProgram")
    opts = [f"--gpu-architecture=sm_{arch}".encode()]
    err = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if int(err[0]) != 0:
        size = check(nvrtc.nvrtcGetProgramLogSize(prog), "log size")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise CudaError(f"NVRTC failed: {log.decode(errors='replace')}")
    size = check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
    cubin = b" " * size
    check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    return cubin


def param_info(driver, func):
    """cuFuncGetParamInfo for every parameter (CUDA 12.4+ drivers)."""
    out = []
    getter = getattr(driver, "cuFuncGetParamInfo", None)
    if getter is None:
        return None
    for i in range(64):
        err, *rest = getter(func, i)
        if int(err) != 0:
            break
        offset, size = rest
        out.append({"index": i, "offset": int(offset), "size": int(size)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tracer.builtin")
    ap.add_argument("--grid", type=int, default=4096)
    ap.add_argument("--block", type=int, default=256)
    ap.add_argument("--shared-mem", type=int, default=0)
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--truth", type=Path)
    args = ap.parse_args(argv)
    mark = marker()
    driver, module, arch = open_module("vadd.cu")
    func = check(driver.cuModuleGetFunction(module, b"vadd"), "cuModuleGetFunction")
    if args.shared_mem > 48 * 1024:
        check(driver.cuFuncSetAttribute(
            func, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            args.shared_mem), "cuFuncSetAttribute")
    n = args.n
    nbytes = n * 4
    host_in = (ctypes.c_float * n)(*([1.0] * n))
    host_out = (ctypes.c_float * n)()
    a = check(driver.cuMemAlloc(nbytes), "cuMemAlloc")
    b = check(driver.cuMemAlloc(nbytes), "cuMemAlloc")
    c = check(driver.cuMemAlloc(nbytes), "cuMemAlloc")
    check(driver.cuMemcpyHtoD(a, ctypes.addressof(host_in), nbytes), "cuMemcpyHtoD")
    check(driver.cuMemcpyHtoD(b, ctypes.addressof(host_in), nbytes), "cuMemcpyHtoD")
    check(driver.cuMemsetD32(c, 0, n), "cuMemsetD32")
    check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
    values = [ctypes.c_uint64(int(a)), ctypes.c_uint64(int(b)), ctypes.c_uint64(int(c)),
              ctypes.c_int32(n)]
    params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    for i in range(args.repeat):
        mark(MARK_BEGIN, i, "cuLaunchKernel vadd")
        check(driver.cuLaunchKernel(func, args.grid, 1, 1, args.block, 1, 1, args.shared_mem, 0,
                                    ctypes.addressof(params), 0), "cuLaunchKernel")
        mark(MARK_END, i, "cuLaunchKernel vadd")
    check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
    check(driver.cuMemcpyDtoH(ctypes.addressof(host_out), c, nbytes), "cuMemcpyDtoH")
    covered = min(n, args.grid * args.block)
    bad = [i for i in range(n) if host_out[i] != (2.0 if i < covered else 0.0)]
    truth = {
        "kernel": "vadd", "signature": "vadd(const float* a, const float* b, float* c, int n)",
        "arch": f"sm_{arch}", "grid": [args.grid, 1, 1], "block": [args.block, 1, 1],
        "cluster": None, "shared_mem_dynamic": args.shared_mem, "n": n, "launches": args.repeat,
        "args": {"a": int(a), "b": int(b), "c": int(c), "n": n},
        "param_info": param_info(driver, func), "result_ok": not bad,
    }
    if args.truth:
        args.truth.write_text(json.dumps(truth, indent=1, sort_keys=True))
    if bad:
        print(f"vadd: wrong result at {len(bad)} elements, first c[{bad[0]}] = "
              f"{host_out[bad[0]]}", file=sys.stderr)
        return 1
    print(f"vadd ok: grid {args.grid} block {args.block} n {n}, c == 2.0 over {covered} elements")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CudaError as exc:
        print(f"tracer.builtin: {exc}", file=sys.stderr)
        sys.exit(1)
