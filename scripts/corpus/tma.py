"""Hopper TMA descriptors (CUtensorMap) made and passed to kernels, through cuda-python's
driver API and through PyTorch's cuBLASLt (session 44):

1. map A: cuTensorMapEncodeTiled of a 256 x 128 FLOAT32 matrix (box 64 x 32, no swizzle);
   kernels/tma.cu tma_tile copies the box at (64, 32) with the tensor memory accelerator
   and writes it out; the program checks the tile against the matrix.
2. cuTensorMapReplaceAddress points map A at a second matrix; tma_tile copies (128, 64).
3. map C: a rank-3 BFLOAT16 tensor with 128-byte swizzle, L2_256B promotion and the NaN
   out-of-bounds fill; tma_prefetch takes map A and map C (parameter offsets 0 and 128).
4. torch: a bf16 matmul of 1024 x 1024 matrices (cuBLASLt's sm_90 kernels load through TMA
   descriptors of their own).

The truth: each map's inputs and the 128 bytes the driver made (the program reads them out
of cuda-python's CUtensorMap), each launch's maps and parameter offsets, the tensors' data
pointers and sizes, the tiles checked, every kernel from CUPTI.

usage: tma.py [TRUTH.json]"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
from tracer.builtin import param_info  # noqa: E402
from tracer.cudaapi import check, open_module  # noqa: E402

W, H = 256, 128             # map A's matrix, FLOAT32
TX, TY = 64, 32             # the box (kernels/tma.cu TILE_X, TILE_Y)


def map_bytes(tmap):
    return b"".join(int(q).to_bytes(8, "little") for q in tmap.opaque)


def main():
    d, module, arch = open_module("tma.cu")
    T = d.CUtensorMapDataType
    tile = check(d.cuModuleGetFunction(module, b"tma_tile"), "tma_tile")
    prefetch = check(d.cuModuleGetFunction(module, b"tma_prefetch"), "tma_prefetch")
    A = check(d.cuMemAlloc(4 * W * H), "cuMemAlloc A")
    B = check(d.cuMemAlloc(4 * W * H), "cuMemAlloc B")
    C = check(d.cuMemAlloc(2 * 64 * 32 * 4), "cuMemAlloc C")
    out = check(d.cuMemAlloc(4 * TX * TY), "cuMemAlloc out")
    flag = check(d.cuMemAlloc(64), "cuMemAlloc flag")
    va = (ctypes.c_float * (W * H))(*[float(i) for i in range(W * H)])
    vb = (ctypes.c_float * (W * H))(*[float(100000 + i) for i in range(W * H)])
    check(d.cuMemcpyHtoD(A, ctypes.addressof(va), 4 * W * H), "HtoD A")
    check(d.cuMemcpyHtoD(B, ctypes.addressof(vb), 4 * W * H), "HtoD B")
    maps, launches, tiles = {}, [], []

    def encode(name, dtype, addr, dims, strides, box, swizzle, l2, oob):
        rank = len(dims)
        es = [1] * rank
        res = d.cuTensorMapEncodeTiled(
            dtype, rank, int(addr), [d.cuuint64_t(x) for x in dims],
            [d.cuuint64_t(x) for x in strides], [d.cuuint32_t(x) for x in box],
            [d.cuuint32_t(x) for x in es], d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle, l2, oob)
        tmap = check(res, f"cuTensorMapEncodeTiled {name}")
        maps[name] = {"data_type": dtype.name.replace("CU_TENSOR_MAP_DATA_TYPE_", ""),
                      "data_type_value": int(dtype), "rank": rank, "global_address": int(addr),
                      "global_dim": dims, "global_strides": strides, "box_dim": box,
                      "element_strides": es, "interleave": "NONE",
                      "swizzle": swizzle.name.replace("CU_TENSOR_MAP_SWIZZLE_", ""),
                      "l2_promotion": l2.name.replace("CU_TENSOR_MAP_L2_PROMOTION_", ""),
                      "oob_fill": oob.name.replace("CU_TENSOR_MAP_FLOAT_OOB_FILL_", ""),
                      "bytes": map_bytes(tmap).hex()}
        return tmap

    def run_tile(tmap, name, x0, y0, src):
        o, xs, ys = ctypes.c_uint64(int(out)), ctypes.c_int(x0), ctypes.c_int(y0)
        arr = (ctypes.c_void_p * 4)(tmap.getPtr(), ctypes.addressof(o), ctypes.addressof(xs),
                                    ctypes.addressof(ys))
        check(d.cuLaunchKernel(tile, 1, 1, 1, 128, 1, 1, 0, 0, ctypes.addressof(arr), 0),
              "cuLaunchKernel tma_tile")
        launches.append({"kernel": "tma_tile", "grid": [1, 1, 1], "block": [128, 1, 1],
                         "maps": [{"param_offset": 0, "map": name,
                                   "bytes": map_bytes(tmap).hex()}]})
        check(d.cuCtxSynchronize(), "sync")
        got = (ctypes.c_float * (TX * TY))()
        check(d.cuMemcpyDtoH(ctypes.addressof(got), out, 4 * TX * TY), "DtoH out")
        wrong = sum(1 for r in range(TY) for c in range(TX)
                    if got[r * TX + c] != src[(y0 + r) * W + x0 + c])
        tiles.append({"map": name, "x0": x0, "y0": y0, "wrong": wrong})

    S, L2, OOB = d.CUtensorMapSwizzle, d.CUtensorMapL2promotion, d.CUtensorMapFloatOOBfill
    with _truth.CuptiKernels() as k:
        map_a = encode("A", T.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, A, [W, H], [4 * W], [TX, TY],
                       S.CU_TENSOR_MAP_SWIZZLE_NONE, L2.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                       OOB.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        run_tile(map_a, "A", 64, 32, va)
        check(d.cuTensorMapReplaceAddress(map_a, int(B)), "cuTensorMapReplaceAddress")
        maps["A on B"] = dict(maps["A"], global_address=int(B), bytes=map_bytes(map_a).hex())
        run_tile(map_a, "A on B", 128, 64, vb)
        map_c = encode("C", T.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, C, [64, 32, 4], [128, 4096],
                       [64, 8, 1], S.CU_TENSOR_MAP_SWIZZLE_128B,
                       L2.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                       OOB.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        f = ctypes.c_uint64(int(flag))
        arr = (ctypes.c_void_p * 3)(map_a.getPtr(), map_c.getPtr(), ctypes.addressof(f))
        check(d.cuLaunchKernel(prefetch, 2, 1, 1, 32, 1, 1, 0, 0, ctypes.addressof(arr), 0),
              "cuLaunchKernel tma_prefetch")
        launches.append({"kernel": "tma_prefetch", "grid": [2, 1, 1], "block": [32, 1, 1],
                         "maps": [{"param_offset": 0, "map": "A on B",
                                   "bytes": map_bytes(map_a).hex()},
                                  {"param_offset": 128, "map": "C",
                                   "bytes": map_bytes(map_c).hex()}]})
        check(d.cuCtxSynchronize(), "sync")
        torch_part = {}
        try:
            import torch
            a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
            c = a @ b
            torch.cuda.synchronize()
            torch_part = {"tensors": {n: {"data_ptr": t.data_ptr(), "nbytes": t.numel() * 2,
                                          "shape": list(t.shape)}
                                      for n, t in (("a", a), ("b", b), ("c", c))},
                          "c_finite": bool(torch.isfinite(c).all())}
        except Exception as exc:        # no torch here: the cuda-python part stands alone
            torch_part = {"error": repr(exc)}
    flags = _truth.device_bytes(d, flag, 8)
    truth = {"kernel_source": "kernels/tma.cu", "arch": f"sm_{arch}",
             "param_info": {"tma_tile": param_info(d, tile), "tma_prefetch": param_info(d, prefetch)},
             "maps": maps, "launches": launches, "tiles": tiles,
             "prefetch_flags": list(flags[:8]), "torch": torch_part, "cupti": k.to_json()}
    _truth.write(truth)
    wrong = sum(t["wrong"] for t in tiles)
    print(f"tma: {len(maps)} maps, {len(launches)} launches, tiles wrong {wrong}, "
          f"torch {'ok' if torch_part.get('c_finite') else torch_part.get('error', 'not finite')}")
    return 1 if wrong or flags[0] != 1 or flags[4] != 1 else 0


if __name__ == "__main__":
    sys.exit(main())
