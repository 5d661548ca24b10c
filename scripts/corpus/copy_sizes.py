"""The driver's own device-to-device copy kernels across sizes and alignments, through
cuda-python's driver API: which kernel each cuMemcpyDtoDAsync runs and with what parameter
block (decoders/cuda/driverkernels.py). A Hugging Face GPT-2 job's generate()
(scripts/corpus/train_hf_gpt2.py) copies 2 bytes at a time, which ran a kernel with the
word copy's parameter block but a count in bytes.

Each case copies `bytes` from its own source buffer (a byte pattern, set by cuMemcpyHtoD)
at `src_offset` into its own destination buffer (0xEE beforehand) at `dst_offset`, with
256 guard bytes after. Truth (first argument, JSON): each case's arguments and whether the
destination then holds exactly the source's bytes where copied and 0xEE everywhere else.

With `unified` first, the copies are cuMemcpyAsync (the unified-addressing copy, which
cudaMemcpyAsync with cudaMemcpyDefault reaches: a one-rank NCCL job's 8-byte copy ran the
word kernel through it) instead of cuMemcpyDtoDAsync.

usage: copy_sizes.py [unified] [TRUTH.json]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.cudaapi import check  # noqa: E402

FILL, GUARD = 0xEE, 256
# (bytes, dst offset, src offset) from 2 MiB-aligned buffers
CASES = (
    [(n, 0, 0) for n in (1, 2, 3, 5, 6, 7, 0x3ff, 0x400, 0x401, 0x1001, 0xfffd, 0x10001,
                         0x40003, 0x7ffff, 0x100001, 0x100003)] +
    [(0x1000, 1, 0), (0x1000, 2, 0), (0x1000, 4, 0), (0x1000, 8, 0), (0x1000, 0, 1),
     (0x1000, 0, 2), (0x1000, 0, 4), (0x1001, 3, 1), (0x100000, 0, 1), (0x100000, 1, 0)])


def main():
    unified = len(sys.argv) > 1 and sys.argv[1] == "unified"
    if unified:
        del sys.argv[1]     # (the truth path follows)
    call = "cuMemcpyAsync" if unified else "cuMemcpyDtoDAsync"
    d, _, stream = _truth.primary_context()
    bufs = []
    for k, (n, doff, soff) in enumerate(CASES):
        src_bytes, dst_bytes = soff + n + GUARD, doff + n + GUARD
        src = check(d.cuMemAlloc(src_bytes), "cuMemAlloc src")
        dst = check(d.cuMemAlloc(dst_bytes), "cuMemAlloc dst")
        pattern = (bytes((i * 13 + k) & 0xFF for i in range(251)) *
                   (src_bytes // 251 + 1))[:src_bytes]
        _truth.host_to_device(d, src, pattern)
        _truth.host_to_device(d, dst, bytes([FILL]) * dst_bytes)
        bufs.append((src, dst, dst_bytes, pattern))
    check(d.cuCtxSynchronize(), "sync")
    cases = []
    for (n, doff, soff), (src, dst, dst_bytes, pattern) in zip(CASES, bufs):
        copy = d.cuMemcpyAsync if unified else d.cuMemcpyDtoDAsync
        check(copy(int(dst) + doff, int(src) + soff, n, stream), call)
        cases.append({"call": call, "ByteCount": n, "dstDevice": int(dst) + doff,
                      "srcDevice": int(src) + soff, "dst_offset": doff, "src_offset": soff})
    check(d.cuCtxSynchronize(), "sync")
    for case, (src, dst, dst_bytes, pattern) in zip(cases, bufs):
        n, doff, soff = case["ByteCount"], case["dst_offset"], case["src_offset"]
        want = bytes([FILL]) * doff + pattern[soff:soff + n] + \
            bytes([FILL]) * (dst_bytes - doff - n)
        case["destination_correct"] = _truth.device_bytes(d, dst, dst_bytes) == want
    wrong = sum(not c["destination_correct"] for c in cases)
    return _truth.finish("copy_sizes", {"cases": cases, "fill": FILL, "guard_bytes": GUARD,
                                        "destinations_wrong": wrong}, "copies",
                         "destinations_wrong")

if __name__ == "__main__":
    sys.exit(main())
