"""DDP training of a small MLP on the GPUs torchrun gives it (issue 26): every rank runs the
same 20 SGD steps on its own batch, DistributedDataParallel all-reduces the gradients
through NCCL, and rank 0 prints the final loss (averaged over the ranks).

    torchrun --nproc-per-node 2 --standalone scripts/corpus/ddp_train.py [TRUTH_DIR]

Each rank writes TRUTH_DIR/rank<N>.json: its rank, local rank and world size (from the
launcher's variables), its device (index, name, PCI bus id and UUID from
torch.cuda.get_device_properties), the NCCL version torch runs, the model's gradient
elements and DDP's gradient buckets (what each step all-reduces), the final loss, and,
from CUPTI (scripts/corpus/_cupti.py, torch.profiler), every kernel the rank ran during
the 20 steps: an oracle that reads nothing the shim recorded. Deterministic (fixed seeds,
CUBLAS_WORKSPACE_CONFIG), so the traced run must print what the native one prints.
scripts/record_ddp.sh runs it natively and under trace-launch.
"""
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cupti import cupti_truth  # noqa: E402

STEPS = int(os.environ.get("DDP_STEPS", "20"))    # scripts/corpus/train_ddp.py sets it
BATCH, IN, HIDDEN, OUT = 64, 256, 512, 10


def device_truth(index):
    p = torch.cuda.get_device_properties(index)
    bus = None
    if all(hasattr(p, k) for k in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        bus = f"{p.pci_domain_id:04x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"
    uuid = getattr(p, "uuid", None)
    return {"index": index, "name": p.name, "pci_bus_id": bus,
            "uuid": f"GPU-{uuid}" if uuid is not None else None,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def buckets(ddp):
    """DDP's gradient buckets in bytes, as its logging data gives them (first and rebuilt)."""
    try:
        data = ddp._get_ddp_logging_data()
    except Exception as exc:        # private API: keep going without it
        return {"error": f"{type(exc).__name__}: {exc}"}
    out = {}
    for key in ("bucket_sizes", "rebuilt_bucket_sizes", "bucket_cap_bytes", "gradient_as_bucket_view"):
        if key in data:
            v = data[key]
            out[key] = [int(x) for x in v.split(",") if x.strip()] if isinstance(v, str) and \
                key.endswith("sizes") else v
    return out


def main():
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "-" else None
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                          nn.Linear(HIDDEN, OUT)).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    g = torch.Generator(device=dev).manual_seed(1 + rank)
    x = torch.randn(BATCH, IN, device=dev, generator=g)
    y = torch.randint(0, OUT, (BATCH,), device=dev, generator=g)
    cupti = out_dir / f"rank{rank}.cupti.json" if out_dir else None
    with cupti_truth(cupti):
        for _ in range(STEPS):
            opt.zero_grad(set_to_none=True)
            loss = nn.functional.cross_entropy(ddp(x), y)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
    total = loss.detach().clone()
    dist.all_reduce(total)                  # one more all-reduce: 1 float, after the steps
    mean = total.item() / world
    if out_dir is not None:
        truth = {"rank": rank, "local_rank": local, "world_size": world,
                 "local_world_size": int(os.environ.get("LOCAL_WORLD_SIZE", "0")) or None,
                 "device": device_truth(local), "steps": STEPS,
                 "nccl_version": ".".join(str(v) for v in torch.cuda.nccl.version()),
                 "torch_version": torch.__version__,
                 "grad_elements": sum(p.numel() for p in model.parameters()),
                 "grad_dtype": "f32", "ddp_buckets": buckets(ddp), "final_loss": mean,
                 "pid": os.getpid()}
        if cupti is not None and cupti.exists():
            truth["cupti"] = json.loads(cupti.read_text())
        (out_dir / f"rank{rank}.json").write_text(json.dumps(truth, indent=1, sort_keys=True))
    dist.destroy_process_group()
    if rank == 0:
        print(f"ddp_train: world {world}, {STEPS} steps, final loss {mean:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
