"""PyTorch eager on the GPU: matmul (cuBLAS), softmax, a reduction, a backward pass and an
Adam step (foreach kernels). Deterministic output, compared between native and traced runs."""
import torch

torch.manual_seed(0)
x = torch.randn(256, 512, device="cuda")
w = torch.randn(512, 128, device="cuda", requires_grad=True)
y = x @ w
p = torch.softmax(y, dim=1)
s = p.sum(dim=0)
loss = ((s - 2.0) ** 2).mean()
loss.backward()
opt = torch.optim.Adam([w], lr=1e-3)
opt.step()
r = torch.relu(y).amax()
torch.cuda.synchronize()
print(f"loss={loss.item():.3f} p_rows={p.sum().item():.2f} w_mean={w.mean().item():.4f} "
      f"relu_max_pos={bool(r.item() > 0)}")
