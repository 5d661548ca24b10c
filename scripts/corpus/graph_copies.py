"""CUDA graphs of device-to-device MEMCPY nodes, through cuda-python's driver API: which of
the driver's own copy kernels a graph replay runs for a copy node of each size, and with what
parameter block (decoders/cuda/driverkernels.py). XLA's command buffers copy whole weight
matrices this way (a 2-GPU JAX job: 1 MiB nodes run as the 16-byte "no count" kernel).

Graphs (each instantiated once and replayed REPLAYS times):
  nodes     one MEMCPY node per size of SIZES, added with cuGraphAddMemcpyNode
  captured  cuMemcpyDtoDAsync of each size of CAPTURED on a capturing stream
Every copy reads its own source buffer (a byte pattern set once by cuMemcpyHtoD) and writes
its own destination, read back after the replays.

Truth (first argument, JSON): each node's parameters as built and read back through
cuGraphMemcpyNodeGetParams (node order, _truth.graph_nodes), whether every destination holds
its source's bytes, and every kernel from CUPTI (torch.profiler: the copy kernels show as
memcpy there).

usage: graph_copies.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.cudaapi import check  # noqa: E402

# 4 B and 200 KiB: the 32-bit word kernel alone; 1 MiB and 4 MiB: whole 4096-byte blocks of
# the 16-byte kernel; 1 MiB + 64 B and 16 MiB + 48 B: blocks, then the word kernel's rest
SIZES = (4, 0x32000, 0x100000, 0x100040, 0x400000, 0x1000030)
CAPTURED = (0x100000, 0x100040)
REPLAYS = 3


def main():
    d = _truth.driver()
    check(d.cuInit(0), "cuInit")
    dev = check(d.cuDeviceGet(0), "cuDeviceGet")
    ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    stream = check(d.cuStreamCreate(1), "cuStreamCreate")       # CU_STREAM_NON_BLOCKING
    pairs = []          # (src, dst, size, pattern)
    for k, size in enumerate(SIZES + CAPTURED):
        src = check(d.cuMemAlloc(size), "cuMemAlloc src")
        dst = check(d.cuMemAlloc(size), "cuMemAlloc dst")
        pattern = (bytes((i * 7 + k) & 0xFF for i in range(256)) * (size // 256 + 1))[:size]
        host = ctypes.create_string_buffer(pattern, size)
        check(d.cuMemcpyHtoD(src, ctypes.addressof(host), size), "cuMemcpyHtoD")
        check(d.cuMemsetD8(dst, 0, size), "cuMemsetD8")
        pairs.append((src, dst, size, pattern))
    check(d.cuCtxSynchronize(), "sync")

    def params(src, dst, size):
        p = d.CUDA_MEMCPY3D()
        p.srcMemoryType = d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.srcDevice = src
        p.dstMemoryType = d.CUmemorytype.CU_MEMORYTYPE_DEVICE
        p.dstDevice = dst
        p.WidthInBytes, p.Height, p.Depth = size, 1, 1
        return p

    truth = {"sizes": list(SIZES), "captured_sizes": list(CAPTURED), "replays": REPLAYS,
             "graphs": {}}
    with _truth.CuptiKernels() as k:
        g = check(d.cuGraphCreate(0), "cuGraphCreate")
        built = []
        for src, dst, size, _ in pairs[:len(SIZES)]:
            check(d.cuGraphAddMemcpyNode(g, None, 0, params(src, dst, size), ctx),
                  "cuGraphAddMemcpyNode")
            built.append({"src": int(src), "dst": int(dst), "bytes": size})
        check(d.cuStreamBeginCapture(stream, 0), "cuStreamBeginCapture")   # GLOBAL mode
        for src, dst, size, _ in pairs[len(SIZES):]:
            check(d.cuMemcpyDtoDAsync(dst, src, size, stream), "cuMemcpyDtoDAsync")
        gc = check(d.cuStreamEndCapture(stream), "cuStreamEndCapture")
        for name, graph, nodes in (("nodes", g, built), ("captured", gc, [
                {"src": int(s), "dst": int(t), "bytes": n} for s, t, n, _ in pairs[len(SIZES):]])):
            ge = check(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
            for _ in range(REPLAYS):
                check(d.cuGraphLaunch(ge, stream), "cuGraphLaunch")
            check(d.cuStreamSynchronize(stream), "sync")
            truth["graphs"][name] = {"built": nodes, "read_back": _truth.graph_nodes(graph)}
    wrong = []
    for src, dst, size, pattern in pairs:
        got = ctypes.create_string_buffer(size)
        check(d.cuMemcpyDtoH(ctypes.addressof(got), dst, size), "cuMemcpyDtoH")
        if got.raw != pattern:
            wrong.append(size)
    truth["destinations_wrong"] = wrong
    truth["cupti"] = k.to_json()
    _truth.write(truth)
    print(f"graph_copies: {len(SIZES)} MEMCPY nodes and {len(CAPTURED)} captured copies, "
          f"{REPLAYS} replays each; destinations wrong: {len(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
