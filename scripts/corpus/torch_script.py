"""The PyTorch script of issue 17's size target: eager matmul (cuBLAS), softmax and relu,
then the same steps captured into a CUDA graph and replayed. Deterministic output."""
import torch

torch.manual_seed(0)
x = torch.randn(512, 512, device="cuda")
w = torch.randn(512, 256, device="cuda")
y = torch.relu(torch.softmax(x @ w, dim=1))
eager = y.sum().item()
static_x = x.clone()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):           # warm-up outside the capture, as torch requires
    out = torch.relu(torch.softmax(static_x @ w, dim=1)).sum()
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    out = torch.relu(torch.softmax(static_x @ w, dim=1)).sum()
replays = []
for k in range(3):
    static_x.copy_(x * (k + 1))
    g.replay()
    torch.cuda.synchronize()
    replays.append(round(out.item(), 3))
print(f"eager={eager:.3f} replays={replays}")
