"""Driver calls that fail among kernel launches, through cuda-python's driver API: LAUNCHES
launches of vadd on a stream (n differs in each), COPIES host-to-device copies (copy engine
work, no kernel), then two calls that fail (cuModuleGetFunction of a name the module lacks:
CUDA_ERROR_NOT_FOUND; cuMemAlloc of more than the GPU holds: CUDA_ERROR_OUT_OF_MEMORY), then
the same launches and copies again and the two calls again. Neither error is sticky: the
program goes on. The report names, for each failed call, the kernel launch of its process
before it; the copies put submissions between that launch and the call (a decode in blocks
may cut there: tests/test_shard.py). The truth: each failed call's result and the launch the
program made last before it (its number, grid, block, parameter bytes), every kernel from
CUPTI, the last results read back.

usage: failed_calls.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import param_info  # noqa: E402
from tracer.cudaapi import check, open_module  # noqa: E402

N = 1 << 14
LAUNCHES = 40
COPIES = 8
ROUNDS = 2


def main():
    d, module, arch = open_module("vadd.cu")
    f = check(d.cuModuleGetFunction(module, b"vadd"), "vadd")
    info = param_info(d, f)
    a, b, c = (check(d.cuMemAlloc(4 * N), "cuMemAlloc") for _ in range(3))
    stream = check(d.cuStreamCreate(1), "cuStreamCreate")       # CU_STREAM_NON_BLOCKING
    host = (ctypes.c_float * N)(*[float(i % 7) for i in range(N)])
    free, total = check(d.cuMemGetInfo(), "cuMemGetInfo")
    launches, failed = [], []

    def launch(n):
        values = [ctypes.c_uint64(int(a)), ctypes.c_uint64(int(b)), ctypes.c_uint64(int(c)),
                  ctypes.c_int(n)]
        arr = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in values])
        grid = ((n + 255) // 256, 1, 1)
        check(d.cuLaunchKernel(f, *grid, 256, 1, 1, 0, stream, ctypes.addressof(arr), 0),
              "cuLaunchKernel vadd")
        launches.append({"kernel": "vadd", "grid": list(grid), "block": [256, 1, 1],
                         "param_bytes": _truth.param_blob(values, info).hex()})

    def fails(name, res):
        err = res[0] if isinstance(res, tuple) else res
        last = launches[-1]
        failed.append({"call": name, "result": int(err), "result_name": err.name,
                       "launches_before": len(launches), "launch_before": last})

    truth = {"kernel_source": "kernels/vadd.cu", "arch": f"sm_{arch}", "param_info": info,
             "launches_per_round": LAUNCHES, "copies_per_round": COPIES, "rounds": ROUNDS,
             "gpu_memory_total": int(total)}
    for p in (a, b):
        check(d.cuMemcpyHtoD(p, ctypes.addressof(host), 4 * N), "HtoD")
    with _truth.CuptiKernels() as k:
        for r in range(ROUNDS):
            for i in range(LAUNCHES):
                launch(N - 64 * (r * LAUNCHES + i))
            for _ in range(COPIES):
                check(d.cuMemcpyHtoDAsync(a, ctypes.addressof(host), 4 * N, stream), "HtoD")
            fails("cuModuleGetFunction", d.cuModuleGetFunction(module, b"no_such_kernel"))
            fails("cuMemAlloc_v2", d.cuMemAlloc(2 * int(total)))
        check(d.cuStreamSynchronize(stream), "sync")
    out = (ctypes.c_float * N)()
    check(d.cuMemcpyDtoH(ctypes.addressof(out), c, 4 * N), "DtoH")
    n_last = N - 64 * (ROUNDS * LAUNCHES - 1)
    # a[i] = b[i] = i % 7 throughout (the copies write a again with the same bytes)
    wrong = sum(1 for i in range(n_last) if out[i] != 2.0 * (i % 7))
    truth.update(launches=launches, failed=failed, c_wrong=wrong, cupti=k.to_json())
    _truth.write(truth)
    print(f"failed_calls: {len(launches)} launches, {len(failed)} failed calls "
          f"({', '.join(sorted({x['result_name'] for x in failed}))}), c wrong {wrong}")
    return 1 if wrong or any(x["result"] == 0 for x in failed) else 0


if __name__ == "__main__":
    sys.exit(main())
