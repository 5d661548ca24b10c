"""FSDP training at a given length, for scripts/record_longjobs.sh (job `fsdp`): torchrun,
2 ranks (NPROC), of scripts/corpus/fsdp_train.py with FSDP_STEPS=argv[1] (default 20). The
NVLink-multicast variables the 2-GPU machine needs stay set (as scripts/corpus/train_ddp.py)."""
import os
import sys

steps = sys.argv[1] if len(sys.argv) > 1 else "20"
os.environ["FSDP_STEPS"] = steps
for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    os.environ.setdefault(k, "0" if k == "NCCL_NVLS_ENABLE" else "1")
here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node",
                          os.environ.get("NPROC", "2"), "--standalone",
                          os.path.join(here, "fsdp_train.py")])
