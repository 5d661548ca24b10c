"""PyTorch FP8 and bf16 GEMMs on Hopper through cuBLASLt: torch._scaled_mm (float8_e4m3fn,
per-tensor scales) and bf16 matmuls of several shapes, 3 times each: the sm_90 kernels with
thread-block clusters and tensor-memory descriptors among their arguments that FP8 training
libraries launch. The truth: every kernel from CUPTI (torch.profiler); the results'
checksums compared between native and traced runs.

usage: torch_fp8.py [TRUTH.json]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402

SHAPES = [(256, 512, 1024), (1024, 1024, 1024), (128, 4096, 2048)]


def main():
    torch.manual_seed(0)
    sums = []
    with _truth.CuptiKernels() as k:
        for m, kk, n in SHAPES:
            a = torch.randn(m, kk, device="cuda")
            b = torch.randn(n, kk, device="cuda")
            one = torch.tensor(1.0, device="cuda")
            for _ in range(3):
                try:
                    c = torch._scaled_mm(a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn).t(),
                                         scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
                    sums.append(round(float(c.float().sum().item()), 1))
                except (RuntimeError, TypeError) as exc:   # no FP8 GEMM in this build
                    sums.append(f"fp8: {type(exc).__name__}")
                d = a.bfloat16() @ b.bfloat16().t()
                sums.append(round(float(d.float().abs().sum().item()), 0))
        torch.cuda.synchronize()
    _truth.write({"shapes": SHAPES, "sums": sums, "cupti": k.to_json()})
    print("torch_fp8:", sums)
    return 0


if __name__ == "__main__":
    sys.exit(main())
