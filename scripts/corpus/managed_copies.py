"""Copies out of managed memory (cuMemAllocManaged), through cuda-python's driver API: a
held-out job (scripts/corpus/heldout_mix.py, session 35) read managed memory back with
cuMemcpyDtoHAsync, and the driver ran its own copy kernel for it, into a buffer of its own
rather than the pageable destination (decoders/cuda/driverkernels.py).

Each case copies `bytes` from its own managed source (a byte pattern the host wrote
through the managed pointer) at `src_offset` to a host destination at `dst_offset`:
pageable (a ctypes buffer) or page-locked (cuMemAllocHost), by cuMemcpyDtoHAsync on a
stream or cuMemcpyDtoH. Truth (first argument, JSON): each case's arguments and whether
the destination then holds exactly the source's bytes where copied and 0xEE elsewhere.

usage: managed_copies.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.cudaapi import check  # noqa: E402

FILL, GUARD = 0xEE, 256
CU_MEM_ATTACH_GLOBAL = 1
# (call, destination kind, bytes, dst offset, src offset)
CASES = (
    [("cuMemcpyDtoHAsync", "pageable", n, 0, 0)
     for n in (4, 256, 0x1000, 0x10000, 0x100000, 3, 0x1001)] +
    [("cuMemcpyDtoHAsync", "pageable", 0x1000, 0, 4), ("cuMemcpyDtoHAsync", "pageable", 0x1000, 0, 1),
     ("cuMemcpyDtoHAsync", "pinned", 256, 0, 0), ("cuMemcpyDtoHAsync", "pinned", 0x10000, 0, 0),
     ("cuMemcpyDtoH", "pageable", 256, 0, 0), ("cuMemcpyDtoH", "pageable", 0x10000, 0, 0)])


def main():
    d, _, stream = _truth.primary_context()
    cases, keep = [], []
    for k, (call, kind, n, doff, soff) in enumerate(CASES):
        src_bytes, dst_bytes = soff + n + GUARD, doff + n + GUARD
        src = int(check(d.cuMemAllocManaged(src_bytes, CU_MEM_ATTACH_GLOBAL),
                        "cuMemAllocManaged"))
        pattern = (bytes((i * 7 + k) & 0xFF for i in range(251)) *
                   (src_bytes // 251 + 1))[:src_bytes]
        ctypes.memmove(src, pattern, src_bytes)        # (the host writes managed memory)
        if kind == "pinned":
            dst = int(check(d.cuMemAllocHost(dst_bytes), "cuMemAllocHost"))
            ctypes.memset(dst, FILL, dst_bytes)
            buf = None
        else:
            buf = ctypes.create_string_buffer(bytes([FILL]) * dst_bytes, dst_bytes)
            dst = ctypes.addressof(buf)
        keep.append((buf, dst, dst_bytes, pattern, kind))
        cases.append({"call": call, "destination": kind, "ByteCount": n,
                      "dstHost": dst + doff, "srcDevice": src + soff, "dst_offset": doff,
                      "src_offset": soff})
    check(d.cuCtxSynchronize(), "sync")
    for case in cases:
        args = (case["dstHost"], case["srcDevice"], case["ByteCount"])
        if case["call"] == "cuMemcpyDtoHAsync":
            check(d.cuMemcpyDtoHAsync(*args, stream), "cuMemcpyDtoHAsync")
            check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
        else:
            check(d.cuMemcpyDtoH(*args), "cuMemcpyDtoH")
    for case, (buf, dst, dst_bytes, pattern, kind) in zip(cases, keep):
        n, doff, soff = case["ByteCount"], case["dst_offset"], case["src_offset"]
        want = bytes([FILL]) * doff + pattern[soff:soff + n] + \
            bytes([FILL]) * (dst_bytes - doff - n)
        case["destination_correct"] = ctypes.string_at(dst, dst_bytes) == want
    wrong = sum(not c["destination_correct"] for c in cases)
    return _truth.finish("managed_copies", {"cases": cases, "fill": FILL, "guard_bytes": GUARD,
                                            "destinations_wrong": wrong}, "copies",
                         "destinations_wrong")


if __name__ == "__main__":
    sys.exit(main())
