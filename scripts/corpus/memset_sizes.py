"""The driver's own memset kernels across sizes, values and alignments, through cuda-python's
driver API: which kernel (if any) each cuMemsetD8/D16/D32 runs and with what parameter block
(decoders/cuda/driverkernels.py). A real training job (scripts/corpus/train_loader.py: cuDNN
with cudnn.benchmark) clears workspaces with cuMemsetD8Async of odd byte counts (0xf01a7)
and of 0x1200 B, which ran kernels no earlier recording held.

Each case sets its own buffer, filled beforehand with 0xEE by cuMemcpyHtoD (a copy engine
transfer, not a memset): `count` elements of `value` from `offset` bytes into it, with 256
guard bytes after. Truth (first argument, JSON): each case's call, arguments and whether the
buffer then holds exactly the value over the bytes set and 0xEE everywhere else.

usage: memset_sizes.py [TRUTH.json]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.cudaapi import check  # noqa: E402

FILL, GUARD = 0xEE, 256
# (call, element bytes, count of elements, value, dst offset from a 2 MiB-aligned buffer)
CASES = (
    [("cuMemsetD8Async", 1, n, 0x5A, 0) for n in
     (4, 64, 940, 0x400, 0x800, 0x1000, 0x1200, 0x1204, 0x1ffc, 0x1fff, 0x2001, 0x180eb,
      0xf01a7, 0x39845b)] +
    [("cuMemsetD8Async", 1, 0xf01a7, 0, 0),         # as cuDNN's workspace clear
     ("cuMemsetD8", 1, 0x180eb, 0xA5, 0),           # the synchronous call, an odd count
     ("cuMemsetD8Async", 1, 0x2000, 0x5A, 1),       # dst not a multiple of 4
     ("cuMemsetD8Async", 1, 0x2000, 0x5A, 2),
     ("cuMemsetD8Async", 1, 0x180eb, 0x5A, 3),
     ("cuMemsetD8Async", 1, 0x200000, 0x5A, 0x200),
     ("cuMemsetD32Async", 4, 0x480, 0x3F800000, 0),
     ("cuMemsetD32Async", 4, 100, 0x12345678, 0),
     ("cuMemsetD16Async", 2, 0x1001, 0xBEEF, 0),
     ("cuMemsetD16Async", 2, 0x10000, 0xBEEF, 0)])


def main():
    d, _, stream = _truth.primary_context()
    bufs = []
    for call, esize, count, value, offset in CASES:
        total = offset + count * esize + GUARD
        buf = check(d.cuMemAlloc(total), "cuMemAlloc")
        _truth.host_to_device(d, buf, bytes([FILL]) * total)
        bufs.append((buf, total))
    check(d.cuCtxSynchronize(), "sync")
    cases = []
    for (call, esize, count, value, offset), (buf, total) in zip(CASES, bufs):
        dst = int(buf) + offset
        args = (dst, value, count) + ((stream,) if call.endswith("Async") else ())
        check(getattr(d, call)(*args), call)
        cases.append({"call": call, "element_bytes": esize, "N": count, "value": value,
                      "dstDevice": dst, "offset": offset, "bytes": count * esize})
    check(d.cuCtxSynchronize(), "sync")
    for case, (buf, total) in zip(cases, bufs):
        elem = case["value"].to_bytes(case["element_bytes"], "little")
        want = bytes([FILL]) * case["offset"] + elem * case["N"] + \
            bytes([FILL]) * (total - case["offset"] - case["bytes"])
        case["buffer_correct"] = _truth.device_bytes(d, buf, total) == want
    wrong = sum(not c["buffer_correct"] for c in cases)
    return _truth.finish("memset_sizes", {"cases": cases, "fill": FILL, "guard_bytes": GUARD,
                                          "buffers_wrong": wrong}, "memsets", "buffers_wrong")

if __name__ == "__main__":
    sys.exit(main())
