"""FSDP training on the GPUs torchrun gives it: a small transformer (4 encoder layers, d=256)
sharded with FSDP2's fully_shard per layer (FSDP1's FullyShardedDataParallel where torch
lacks it), bf16 parameters and fp32 gradient reduction, AdamW, FSDP_STEPS steps: each step
all-gathers every layer's parameters forward and backward and reduce-scatters its
gradients through NCCL, on FSDP's own streams. Rank 0 prints the final loss averaged over
the ranks (deterministic: the traced run must print what the native one prints).

    torchrun --nproc-per-node 2 --standalone scripts/corpus/fsdp_train.py
"""
import os

import torch
import torch.distributed as dist
from torch import nn

STEPS = int(os.environ.get("FSDP_STEPS", "20"))     # scripts/corpus/train_fsdp.py sets it


def main():
    dist.init_process_group("nccl")
    rank, local = dist.get_rank(), int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    torch.manual_seed(0)
    d = 256
    model = nn.Sequential(
        nn.Embedding(1000, d),
        *[nn.TransformerEncoderLayer(d, 4, 4 * d, batch_first=True, dropout=0.0)
          for _ in range(4)],
        nn.Linear(d, 1000)).cuda()
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in model:
            if isinstance(layer, nn.TransformerEncoderLayer):
                fully_shard(layer, mp_policy=mp)
        fully_shard(model, mp_policy=mp)
        how = "fully_shard"
    except ImportError:
        from torch.distributed.fsdp import FullyShardedDataParallel, MixedPrecision
        model = FullyShardedDataParallel(model, mixed_precision=MixedPrecision(
            param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
        how = "FullyShardedDataParallel"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator(device="cuda").manual_seed(1 + rank)
    x = torch.randint(0, 1000, (8, 64), device="cuda", generator=gen)
    y = torch.roll(x, 1, dims=1)
    loss = None
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = nn.functional.cross_entropy(out.float().view(-1, 1000), y.view(-1))
        loss.backward()
        opt.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    if rank == 0:
        print(f"{how} steps={STEPS} world={dist.get_world_size()} "
              f"loss={float(total) / dist.get_world_size():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
