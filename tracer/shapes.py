"""The launch-shape corpus: kernels/shapes.cu launched in varied shapes through cuda-python,
each launch bracketed by marks, with the ground truth written at capture time.

    python3 -m tracer.shapes --truth truth.json      (run it under trace-launch)

The truth holds, per launch: kernel, grid, block, cluster, dynamic shared memory,
cuFuncGetParamInfo (offset, size per parameter), the argument values and the exact
parameter bytes handed to the driver, and whether the kernel's own output confirmed what
it received. Tests compare the decoded QMD and constant bank 0 with it.
"""
import argparse
import ctypes
import json
import struct
import sys
from pathlib import Path

from tracer.builtin import MARK_BEGIN, MARK_END, marker, param_info
from tracer.cudaapi import CudaError, check, launch, open_module


class TlMixed(ctypes.Structure):
    """struct tl_mixed of kernels/shapes.cu (ctypes lays it out as the C compiler does)."""
    _fields_ = [("c", ctypes.c_byte), ("s", ctypes.c_short), ("i", ctypes.c_int),
                ("ll", ctypes.c_longlong), ("f", ctypes.c_float), ("d", ctypes.c_double),
                ("tail", ctypes.c_ubyte * 3)]


def pack_params(values, info):
    """The bytes of the parameter block: each value's bytes at its cuFuncGetParamInfo offset."""
    size = max(p["offset"] + p["size"] for p in info) if info else 0
    blob = bytearray(size)
    for v, p in zip(values, info):
        raw = ctypes.string_at(ctypes.addressof(v), ctypes.sizeof(v))
        blob[p["offset"]:p["offset"] + p["size"]] = raw[:p["size"]]
    return bytes(blob)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tracer.shapes")
    ap.add_argument("--truth", type=Path)
    args = ap.parse_args(argv)
    mark = marker()
    driver, module, arch = open_module("shapes.cu")
    funcs = {}

    def fn(name):
        if name not in funcs:
            funcs[name] = check(driver.cuModuleGetFunction(module, name.encode()), name)
        return funcs[name]

    out_bytes = 64 << 20
    out = check(driver.cuMemAlloc(out_bytes), "cuMemAlloc")
    outp = ctypes.c_uint64(int(out))
    mixed = TlMixed(c=-7, s=-1234, i=0x12345678, ll=-0x123456789ABCDEF, f=2.5, d=-1.0e100,
                    tail=(ctypes.c_ubyte * 3)(1, 2, 3))
    big = 100 * 1024
    check(driver.cuFuncSetAttribute(
        fn("tl_dynsmem"), driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        big), "cuFuncSetAttribute")
    shapes = [
        ("1d", "tl_1d", (4096, 1, 1), (256, 1, 1), None, 0, [outp, ctypes.c_uint32(1 << 20)]),
        ("2d", "tl_grid3d", (16, 8, 1), (16, 16, 1), None, 0, [outp]),
        ("3d", "tl_grid3d", (4, 3, 2), (8, 4, 2), None, 0, [outp]),
        ("wide", "tl_grid3d", (65535, 1, 1), (32, 1, 1), None, 0, [outp]),
        ("dynsmem100k", "tl_dynsmem", (132, 1, 1), (256, 1, 1), None, big,
         [outp, ctypes.c_uint32(big // 4)]),
        ("dynsmem1k", "tl_dynsmem", (2, 1, 1), (128, 1, 1), None, 1024,
         [outp, ctypes.c_uint32(256)]),
        ("cluster2", "tl_cluster", (8, 1, 1), (32, 1, 1), (2, 1, 1), 0, [outp]),
        ("cluster2x2", "tl_cluster", (8, 4, 1), (64, 1, 1), (2, 2, 1), 0, [outp]),
        ("args", "tl_args", (1, 1, 1), (32, 1, 1), None, 0,
         [ctypes.c_int32(-123456), ctypes.c_double(3.141592653589793), outp, mixed]),
    ]
    truth = {"kernel_source": "kernels/shapes.cu", "arch": f"sm_{arch}", "launches": []}
    for ident, (label, name, grid, block, cluster, smem, values) in enumerate(shapes):
        f = fn(name)
        info = param_info(driver, f)
        ptrs = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        mark(MARK_BEGIN, ident, f"{label} {name}")
        launch(driver, f, grid, block, smem, ptrs, cluster, label)
        mark(MARK_END, ident, f"{label} {name}")
        check(driver.cuCtxSynchronize(), f"sync {label}")
        entry = {"id": ident, "label": label, "kernel": name, "grid": list(grid),
                 "block": list(block), "cluster": list(cluster) if cluster else None,
                 "shared_mem_dynamic": smem, "param_info": info,
                 "param_bytes": pack_params(values, info).hex() if info else None,
                 "args": _arg_values(values)}
        entry["kernel_output_ok"] = _check_output(driver, out, label, grid, block, cluster,
                                                  values, mixed)
        truth["launches"].append(entry)
    if args.truth:
        args.truth.write_text(json.dumps(truth, indent=1, sort_keys=True))
    bad = [l["label"] for l in truth["launches"] if l["kernel_output_ok"] is False]
    if bad:
        print(f"tracer.shapes: kernel output did not match for {bad}", file=sys.stderr)
        return 1
    print(f"tracer.shapes: {len(shapes)} launches ok")
    return 0


def _arg_values(values):
    out = []
    for v in values:
        if isinstance(v, TlMixed):
            out.append({"c": v.c, "s": v.s, "i": v.i, "ll": v.ll, "f": v.f, "d": v.d,
                        "tail": list(v.tail)})
        else:
            out.append(v.value)
    return out


def _read(driver, ptr, n):
    buf = (ctypes.c_ubyte * n)()
    check(driver.cuMemcpyDtoH(ctypes.addressof(buf), ptr, n), "cuMemcpyDtoH")
    return bytes(buf)


def _check_output(driver, out, label, grid, block, cluster, values, mixed):
    """What the kernel wrote confirms what it received (None where there is nothing to check)."""
    if label == "args":
        got = struct.unpack("<10Q", _read(driver, out, 80))
        want = [(-123456) & (2**64 - 1), struct.unpack("<Q", struct.pack("<d", 3.141592653589793))[0],
                int(out), mixed.c & (2**64 - 1), mixed.s & (2**64 - 1), mixed.i,
                mixed.ll & (2**64 - 1), struct.unpack("<I", struct.pack("<f", mixed.f))[0],
                struct.unpack("<Q", struct.pack("<d", mixed.d))[0], 1 | 2 << 8 | 3 << 16]
        return list(got) == want
    if label.startswith("cluster"):
        nblocks = grid[0] * grid[1] * grid[2]
        got = struct.unpack(f"<{3 * nblocks}I", _read(driver, out, 12 * nblocks))
        size = cluster[0] * cluster[1] * cluster[2]
        return all(got[3 * b + 2] == size for b in range(nblocks))
    if label == "1d":
        got = struct.unpack("<1024I", _read(driver, out, 4096))
        return list(got) == list(range(1024))
    return None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except CudaError as exc:
        print(f"tracer.shapes: {exc}", file=sys.stderr)
        sys.exit(1)
