"""FSDP training at a given length, for scripts/record_longjobs.sh (job `fsdp`): torchrun,
2 ranks (NPROC), of scripts/corpus/fsdp_train.py with FSDP_STEPS=argv[1] (default 20)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _torchrun import exec_torchrun  # noqa: E402

exec_torchrun("fsdp_train.py", "FSDP_STEPS")
