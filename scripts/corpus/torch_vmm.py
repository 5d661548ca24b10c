"""PyTorch's caching allocator on expandable segments (PYTORCH_CUDA_ALLOC_CONF=
expandable_segments:True, set here before torch loads): its memory is physical memory mapped
into reserved VA ranges (cuMemCreate, cuMemAddressReserve, cuMemMap), not cuMemAlloc. An MLP
trained STEPS steps with AdamW, then a 64 MiB tensor that grows a segment, freed, the cache
emptied (cuMemUnmap), and a tensor made again (mapped anew). The truth: the data pointer and
size of each tensor the kernels took, the allocator's segments (torch.cuda.memory_snapshot():
address, size) at three points, every kernel from CUPTI.

usage: torch_vmm.py [TRUTH.json]"""
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
sys.path.insert(0, os.path.dirname(__file__))
import _truth  # noqa: E402
import torch  # noqa: E402

STEPS = 5


def segments():
    return [{k: v for k, v in seg.items() if k in ("address", "total_size", "stream",
                                                   "segment_type", "is_expandable")}
            for seg in torch.cuda.memory_snapshot()]


def main():
    torch.manual_seed(0)
    tensors, snaps, losses = {}, {}, []

    def keep(name, t):
        tensors[name] = {"ptr": t.data_ptr(), "bytes": t.numel() * t.element_size()}

    with _truth.CuptiKernels() as k:
        model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                    torch.nn.Linear(1024, 256)).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(512, 256, device="cuda")
        y = torch.randn(512, 256, device="cuda")
        for step in range(STEPS):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        keep("x", x)
        keep("y", y)
        for name, p in model.named_parameters():
            keep(name, p)
            keep(name + ".grad", p.grad)
        snaps["after_training"] = segments()
        big = torch.empty(64 << 20, dtype=torch.uint8, device="cuda").fill_(7)
        big_sum = int(big.sum(dtype=torch.int64).item())
        keep("big", big)
        snaps["with_big"] = segments()
        del big
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        again = torch.full((1 << 20,), 3.0, device="cuda")
        again_sum = float(again.sum().item())
        keep("again", again)
        snaps["after_empty_cache"] = segments()
        torch.cuda.synchronize()
    truth = {"alloc_conf": os.environ["PYTORCH_CUDA_ALLOC_CONF"], "steps": STEPS,
             "tensors": tensors, "segments": snaps, "losses": losses, "cupti": k.to_json()}
    _truth.write(truth)
    print(f"torch_vmm: {STEPS} steps, loss decreased {losses[-1] < losses[0]}, "
          f"big sum {big_sum}, again sum {again_sum:.0f}")
    return 0 if losses[-1] < losses[0] and big_sum == 7 * (64 << 20) else 1


if __name__ == "__main__":
    sys.exit(main())
