"""Session 44 probe (device): PyTorch library paths that may use Hopper TMA descriptors
(cuDNN convolution and fused attention, cuBLASLt bf16 and fp8 matmuls), a few steps each;
run under trace-launch, the report then says which calls made maps and which launches hold
them (bench/probes/h200-s44d.sh counts)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.bfloat16)
w = torch.randn(128, 64, 3, 3, device="cuda", dtype=torch.bfloat16)
q = torch.randn(4, 8, 512, 64, device="cuda", dtype=torch.bfloat16)
a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    y = F.conv2d(x, w, padding=1)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
        o = F.scaled_dot_product_attention(q, q, q)
    c = a @ a
torch.cuda.synchronize()
print("tma_libs", float(y.float().sum()) != 0, float(o.float().sum()) != 0, float(c.float().sum()) != 0)
