"""Device-to-device copies and memsets as PyTorch issues them (issue 25's corpus): contiguous
`copy_` and `clone` of several sizes (cudaMemcpyAsync DtoD, which libcuda runs as a copy
kernel of its own on the H100), `zero_` and `fill_(0)` (cudaMemsetAsync), on tensors of
several sizes and alignments, then a check on the host. CUPTI (torch.profiler) is the
independent truth: every memcpy and memset activity with its kind and byte count, and every
kernel's configuration.

Usage: python3 scripts/corpus/torch_copies.py [TRUTH.json]"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cupti import cupti_truth  # noqa: E402

truth = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None
sizes = [1, 3, 64, 1000, 4096, 65536, 1 << 20, (1 << 22) + 12]     # float32 elements
torch.manual_seed(0)
srcs = [torch.randn(n, device="cuda") for n in sizes]
ok = True
with cupti_truth(truth):
    for n, src in zip(sizes, srcs):
        dst = torch.empty_like(src)
        dst.copy_(src)                       # cudaMemcpyAsync DtoD
        c = src.clone()                      # another DtoD
        off = src[1:] if n > 1 else src      # a copy from an address 4 bytes in
        d2 = torch.empty_like(off)
        d2.copy_(off)
        z = torch.empty(n, device="cuda")
        z.zero_()                            # cudaMemsetAsync
        b = torch.empty(n, dtype=torch.uint8, device="cuda")
        b.fill_(0)
        ok &= bool(torch.equal(dst, src)) and bool(torch.equal(c, src)) and \
            bool(torch.equal(d2, off)) and not bool(z.any()) and not bool(b.any())
    torch.cuda.synchronize()
print(f"copies: {'ok' if ok else 'WRONG'} sizes={sizes}")
sys.exit(0 if ok else 1)
