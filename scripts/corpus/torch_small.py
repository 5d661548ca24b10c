"""A small PyTorch program for the corpus: elementwise kernels, a reduction, a matmul
(cuBLAS) and host<->device copies. Its stdout is deterministic, so a traced run can be
compared with a native one."""
import torch

x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
s = (x * 2 + 1).sum()
a = torch.ones(256, 256, device="cuda")
m = a @ a
host = m.cpu()
torch.cuda.synchronize()
print(f"sum={s.item():.1f} mm[0,0]={host[0, 0].item():.1f} shape={tuple(host.shape)}")
