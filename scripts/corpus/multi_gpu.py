"""Every GPU of the machine, one launch each: vadd (kernels/vadd.cu, NVRTC) on device 0,
1, ... N-1 from one process, each in its own primary context, checked on the host.

Usage: python3 scripts/corpus/multi_gpu.py [TRUTH.json]. Exit 0 when every device's
result is right. Run under trace-launch, the capture must hold submissions on channels
of every /dev/nvidiaN the process opened, and lose none.
"""
import ctypes
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tracer.cudaapi import check, open_module  # noqa: E402


def run(ordinal, n=1 << 16):
    driver, module, arch = open_module("vadd.cu", ordinal)
    fn = check(driver.cuModuleGetFunction(module, b"vadd"), "cuModuleGetFunction")
    size = n * 4
    host_a = (ctypes.c_float * n)(*([1.0 + ordinal] * n))
    host_c = (ctypes.c_float * n)()
    a, b, c = (check(driver.cuMemAlloc(size), "cuMemAlloc") for _ in range(3))
    check(driver.cuMemcpyHtoD(a, host_a, size), "HtoD")
    check(driver.cuMemcpyHtoD(b, host_a, size), "HtoD")
    args = [ctypes.c_uint64(int(a)), ctypes.c_uint64(int(b)), ctypes.c_uint64(int(c)),
            ctypes.c_int(n)]
    ptrs = (ctypes.c_void_p * 4)(*[ctypes.addressof(x) for x in args])
    grid = (n + 255) // 256
    check(driver.cuLaunchKernel(fn, grid, 1, 1, 256, 1, 1, 0, 0, ptrs, 0), "cuLaunchKernel")
    check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
    check(driver.cuMemcpyDtoH(host_c, c, size), "DtoH")
    ok = all(x == 2.0 * (1.0 + ordinal) for x in host_c)
    return {"device": ordinal, "arch": arch, "grid": [grid, 1, 1], "block": [256, 1, 1],
            "n": n, "ok": ok}


def main():
    driver, _ = __import__("tracer.cudaapi", fromlist=["_modules"])._modules()
    check(driver.cuInit(0), "cuInit")
    count = check(driver.cuDeviceGetCount(), "cuDeviceGetCount")
    results = [run(i) for i in range(count)]
    truth = {"devices": count, "launches": results, "ok": all(r["ok"] for r in results)}
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(truth))
    print(f"multi_gpu: {count} device(s), " + ", ".join(
        f"{r['device']}:{'ok' if r['ok'] else 'WRONG'}" for r in results))
    return 0 if truth["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
