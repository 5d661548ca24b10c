"""The capture docs/graphs.md measures: out/run7 (scripts/corpus/jax_loops.py with
XLA_FLAGS="--xla_gpu_enable_command_buffer=+WHILE,+CONDITIONAL
--xla_gpu_graph_min_graph_size=1", recorded on an H100). out/ is not committed: tests that
read it skip where it is absent. TRACE_LAUNCH_RUN7 names another place for it (a worktree
has no out/)."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN7 = Path(os.environ.get("TRACE_LAUNCH_RUN7") or ROOT / "out" / "run7" / "capture.tlc.gz")


def need_run7():
    """Skip the test when out/run7 is not here (it is not committed: docs/graphs.md)."""
    if not RUN7.exists():
        pytest.skip(f"{RUN7} not present (out/ is not committed; docs/graphs.md)")
    return RUN7
