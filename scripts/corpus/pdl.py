"""Programmatic dependent launch (PDL) through cuda-python's driver API: pairs of kernels
where the second is launched by cuLaunchKernelEx with
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, so it may start before the first
ends and waits inside (griddepcontrol.wait): on a stream, PAIRS times, then the same pairs
stream-captured into a graph (programmatic edges) and replayed REPLAYS times. The truth: each
launch's configuration and parameter bytes, the results read back, every kernel from CUPTI.

usage: pdl.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import param_info  # noqa: E402
from tracer.cudaapi import check, open_module  # noqa: E402

N = 1 << 16
PAIRS = 6
CAPTURED = 3
REPLAYS = 3


def main():
    d, module, arch = open_module("pdl.cu")
    fn = {n: check(d.cuModuleGetFunction(module, n.encode()), n)
          for n in ("pdl_produce", "pdl_consume")}
    info = {n: param_info(d, f) for n, f in fn.items()}
    x = check(d.cuMemAlloc(4 * N), "cuMemAlloc x")
    y = check(d.cuMemAlloc(4 * N), "cuMemAlloc y")
    stream = check(d.cuStreamCreate(1), "cuStreamCreate")       # CU_STREAM_NON_BLOCKING
    launches = []

    def launch(name, values, grid, block, pdl, record=True):
        cfg = d.CUlaunchConfig()
        cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
        cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
        cfg.sharedMemBytes = 0
        cfg.hStream = stream
        attrs = []
        if pdl:
            at = d.CUlaunchAttribute()
            at.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            at.value.programmaticStreamSerializationAllowed = 1
            attrs.append(at)
        cfg.attrs = attrs
        cfg.numAttrs = len(attrs)
        arr = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        check(d.cuLaunchKernelEx(cfg, fn[name], ctypes.addressof(arr), 0), f"launch {name}")
        if record:
            launches.append({"kernel": name, "grid": list(grid), "block": list(block),
                             "programmatic_stream_serialization": pdl,
                             "param_bytes": _truth.param_blob(values, info[name]).hex()})

    def pair(k, record=True):
        launch("pdl_produce", [ctypes.c_uint64(int(x)), ctypes.c_float(float(k)),
                               ctypes.c_int(N)], (N // 256, 1, 1), (256, 1, 1), False, record)
        launch("pdl_consume", [ctypes.c_uint64(int(x)), ctypes.c_uint64(int(y)),
                               ctypes.c_float(2.0), ctypes.c_int(N)],
               (N // 128, 1, 1), (128, 1, 1), True, record)

    truth = {"kernel_source": "kernels/pdl.cu", "arch": f"sm_{arch}", "pairs": PAIRS,
             "captured_pairs": CAPTURED, "replays": REPLAYS, "param_info": info}
    with _truth.CuptiKernels() as k:
        for i in range(PAIRS):
            pair(i)
        check(d.cuStreamSynchronize(stream), "sync")
        check(d.cuStreamBeginCapture(stream, 0), "cuStreamBeginCapture")   # GLOBAL mode
        for i in range(CAPTURED):
            pair(100 + i, record=False)
        g = check(d.cuStreamEndCapture(stream), "cuStreamEndCapture")
        ge = check(d.cuGraphInstantiate(g, 0), "cuGraphInstantiate")
        for _ in range(REPLAYS):
            check(d.cuGraphLaunch(ge, stream), "cuGraphLaunch")
        check(d.cuStreamSynchronize(stream), "sync")
    truth["stream_launches"] = launches
    truth["graph_nodes"] = _truth.graph_nodes(g)
    out = (ctypes.c_float * N)()
    check(d.cuMemcpyDtoH(ctypes.addressof(out), y, 4 * N), "DtoH")
    # the last pair run: produce(102) then consume: y = 2 * (102 + (i & 1023))
    bad = sum(1 for i in range(N) if out[i] != 2.0 * (102 + (i & 1023)))
    truth["y_wrong"] = bad
    truth["cupti"] = k.to_json()
    _truth.write(truth)
    print(f"pdl: {PAIRS} pairs on a stream, {CAPTURED} captured x {REPLAYS} replays, "
          f"y wrong {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
