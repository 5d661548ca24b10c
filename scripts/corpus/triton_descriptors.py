"""A Triton kernel that loads and stores through host-made TMA descriptors (session 44):
triton.tools.tensor_descriptor.TensorDescriptor of a 512 x 256 fp16 tensor and of its
output, blocks of 64 x 64; the kernel doubles each block (desc.load / desc.store, which
Triton compiles to the tensor memory accelerator on sm_90). Triton's launcher makes each
descriptor's CUtensorMap with cuTensorMapEncodeTiled at every launch. Launched 3 times.

The truth: each tensor's data pointer, shape, strides and block shape, the output checked,
the Triton version, every kernel from CUPTI.

usage: triton_descriptors.py [TRUTH.json]"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402

M, N, BM, BN = 512, 256, 64, 64
LAUNCHES = 3


def main():
    import torch
    import triton
    import triton.language as tl
    from triton.tools.tensor_descriptor import TensorDescriptor

    @triton.jit
    def double_blocks(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
        m = tl.program_id(0) * BM
        n = tl.program_id(1) * BN
        out_desc.store([m, n], in_desc.load([m, n]) * 2)

    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    y = torch.zeros_like(x)
    ind = TensorDescriptor.from_tensor(x, [BM, BN])
    outd = TensorDescriptor.from_tensor(y, [BM, BN])
    with _truth.CuptiKernels() as k:
        for _ in range(LAUNCHES):
            double_blocks[(M // BM, N // BN)](ind, outd, BM, BN)
        torch.cuda.synchronize()
    wrong = int((y != x * 2).sum())
    tensors = {n: {"data_ptr": t.data_ptr(), "shape": list(t.shape), "dtype": "FLOAT16",
                   "strides_bytes": [s * t.element_size() for s in t.stride()],
                   "block_shape": [BM, BN]} for n, t in (("x", x), ("y", y))}
    _truth.write({"triton": triton.__version__, "grid": [M // BM, N // BN, 1],
                  "launches": LAUNCHES, "tensors": tensors, "wrong": wrong,
                  "cupti": k.to_json()})
    print(f"triton_descriptors: {LAUNCHES} launches of double_blocks, wrong {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
