"""Run a corpus program under torchrun at a given length, for scripts/record_longjobs.sh: the
wrappers (train_ddp.py, train_fsdp.py) set the program's steps variable from argv[1] and
exec torch.distributed.run with NPROC ranks (default 2). The NVLink-multicast variables the
2-GPU machine needs stay set (scripts/record_ddp.sh)."""
import os
import sys


def exec_torchrun(program, steps_var, default_steps="20"):
    os.environ[steps_var] = sys.argv[1] if len(sys.argv) > 1 else default_steps
    for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        os.environ.setdefault(k, "0" if k == "NCCL_NVLS_ENABLE" else "1")
    here = os.path.dirname(os.path.abspath(__file__))
    os.execv(sys.executable, [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node",
                              os.environ.get("NPROC", "2"), "--standalone",
                              os.path.join(here, program)])
