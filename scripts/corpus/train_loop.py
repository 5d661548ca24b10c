"""A PyTorch training loop for the cost figures (issue 17): a 3-layer MLP trained with Adam
for STEPS steps (default 400) on synthetic data, about 36 kernel launches a step."""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                            torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(1024, 256, device="cuda")
y = torch.randint(0, 10, (1024,), device="cuda")
for _ in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"steps={steps} loss_decreased={loss.item() < 2.3}")
