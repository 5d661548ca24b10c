"""Copies and memsets the corpus has not recorded, through cuda-python's driver API: 2D
memsets (cuMemsetD2D8Async, cuMemsetD2D32Async), 2D copies (cuMemcpy2DAsync device to
device, host to device and device to host) and copies into managed memory
(cuMemcpyHtoDAsync to a cuMemAllocManaged buffer, cuMemcpyDtoDAsync between two): which of
them the driver runs as kernels, and whether each such kernel is named and attributed.

Each case works on its own buffers; every destination is read back and compared with what
the call should have written (0xEE elsewhere). Truth (first argument, JSON): each case's
arguments and whether its destination came out right.

usage: copies_2d.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.cudaapi import check  # noqa: E402

FILL = 0xEE
CU_MEM_ATTACH_GLOBAL = 1
MT_HOST, MT_DEVICE = 1, 2       # CUmemorytype


def pattern(n, k):
    return (bytes((i * 11 + k) & 0xFF for i in range(251)) * (n // 251 + 1))[:n]


def copy2d(d, stream, src, src_kind, spitch, dst, dst_kind, dpitch, width, height):
    p = d.CUDA_MEMCPY2D()
    p.srcMemoryType = d.CUmemorytype(src_kind)
    p.dstMemoryType = d.CUmemorytype(dst_kind)
    if src_kind == MT_HOST:
        p.srcHost = src
    else:
        p.srcDevice = src
    if dst_kind == MT_HOST:
        p.dstHost = dst
    else:
        p.dstDevice = dst
    p.srcPitch, p.dstPitch, p.WidthInBytes, p.Height = spitch, dpitch, width, height
    check(d.cuMemcpy2DAsync(p, stream), "cuMemcpy2DAsync")


def main():
    d, _, stream = _truth.primary_context()
    cases = []

    def alloc(n):
        ptr = int(check(d.cuMemAlloc(n), "cuMemAlloc"))
        _truth.host_to_device(d, ptr, bytes([FILL]) * n)
        return ptr

    def result(case, ptr, want, host=False):
        got = ctypes.string_at(ptr, len(want)) if host else _truth.device_bytes(d, ptr, len(want))
        case["destination_correct"] = got == want
        cases.append(case)

    # 2D memsets: width x height elements at a pitch, of 1 byte (D8) and 4 bytes (D32)
    for call, size, value, shapes in (
            ("cuMemsetD2D8Async", 1, 0x5A, ((256, 64, 512), (1000, 300, 1024), (4096, 256, 8192))),
            ("cuMemsetD2D32Async", 4, 0x3F800000, ((64, 64, 512), (1024, 128, 4096)))):
        for w, h, pitch in shapes:
            n = pitch * h
            dst = alloc(n)
            check(getattr(d, call)(dst, pitch, value, w, h, stream), call)
            check(d.cuStreamSynchronize(stream), "sync")
            want = bytearray([FILL]) * n
            for r in range(h):
                want[r * pitch:r * pitch + size * w] = value.to_bytes(size, "little") * w
            result({"call": call, "dstDevice": dst, "dstPitch": pitch, "value": value,
                    "Width": w, "Height": h}, dst, bytes(want))
    # 2D copies: device to device, host to device, device to host
    for k, (w, h, sp, dp) in enumerate(((256, 64, 512, 1024), (1000, 100, 1024, 2048))):
        src, dst = alloc(sp * h), alloc(dp * h)
        data = pattern(sp * h, k)
        _truth.host_to_device(d, src, data)
        copy2d(d, stream, src, MT_DEVICE, sp, dst, MT_DEVICE, dp, w, h)
        check(d.cuStreamSynchronize(stream), "sync")
        want = bytearray([FILL]) * (dp * h)
        for r in range(h):
            want[r * dp:r * dp + w] = data[r * sp:r * sp + w]
        result({"call": "cuMemcpy2DAsync", "kind": "DtoD", "srcDevice": src, "dstDevice": dst,
                "srcPitch": sp, "dstPitch": dp, "WidthInBytes": w, "Height": h}, dst, bytes(want))
    w, h, sp, dp = 512, 32, 512, 1024
    hsrc = ctypes.create_string_buffer(pattern(sp * h, 7), sp * h)
    dst = alloc(dp * h)
    copy2d(d, stream, ctypes.addressof(hsrc), MT_HOST, sp, dst, MT_DEVICE, dp, w, h)
    check(d.cuStreamSynchronize(stream), "sync")
    want = bytearray([FILL]) * (dp * h)
    for r in range(h):
        want[r * dp:r * dp + w] = hsrc.raw[r * sp:r * sp + w]
    result({"call": "cuMemcpy2DAsync", "kind": "HtoD", "dstDevice": dst, "srcPitch": sp,
            "dstPitch": dp, "WidthInBytes": w, "Height": h}, dst, bytes(want))
    src = alloc(sp * h)
    data = pattern(sp * h, 9)
    _truth.host_to_device(d, src, data)
    hdst = ctypes.create_string_buffer(bytes([FILL]) * (dp * h), dp * h)
    copy2d(d, stream, src, MT_DEVICE, sp, ctypes.addressof(hdst), MT_HOST, dp, w, h)
    check(d.cuStreamSynchronize(stream), "sync")
    want = bytearray([FILL]) * (dp * h)
    for r in range(h):
        want[r * dp:r * dp + w] = data[r * sp:r * sp + w]
    result({"call": "cuMemcpy2DAsync", "kind": "DtoH", "srcDevice": src, "srcPitch": sp,
            "dstPitch": dp, "WidthInBytes": w, "Height": h}, ctypes.addressof(hdst),
           bytes(want), host=True)
    # into managed memory: from the host, and from another managed buffer
    for n in (256, 0x10000):
        dst = int(check(d.cuMemAllocManaged(n + 256, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged"))
        ctypes.memset(dst, FILL, n + 256)
        hsrc = ctypes.create_string_buffer(pattern(n, n & 0xFF), n)
        check(d.cuMemcpyHtoDAsync(dst, ctypes.addressof(hsrc), n, stream), "cuMemcpyHtoDAsync")
        check(d.cuStreamSynchronize(stream), "sync")
        result({"call": "cuMemcpyHtoDAsync", "kind": "to managed", "dstDevice": dst,
                "ByteCount": n}, dst, hsrc.raw + bytes([FILL]) * 256, host=True)
        src = dst
        dst = int(check(d.cuMemAllocManaged(n + 256, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged"))
        ctypes.memset(dst, FILL, n + 256)
        check(d.cuMemcpyDtoDAsync(dst, src, n, stream), "cuMemcpyDtoDAsync")
        check(d.cuStreamSynchronize(stream), "sync")
        result({"call": "cuMemcpyDtoDAsync", "kind": "managed to managed", "dstDevice": dst,
                "srcDevice": src, "ByteCount": n}, dst, hsrc.raw + bytes([FILL]) * 256, host=True)
    wrong = sum(not c["destination_correct"] for c in cases)
    return _truth.finish("copies_2d", {"cases": cases, "fill": FILL,
                                       "destinations_wrong": wrong}, "cases", "destinations_wrong")


if __name__ == "__main__":
    sys.exit(main())
