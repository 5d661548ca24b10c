"""CUPTI (torch.profiler, recorded at capture time in the manifest) as the outside oracle:
every distinct (kernel name, grid, block, registers) configuration CUPTI saw in a program is
a kernel launch of the decode too (bench/cupti_coverage.py). The shim's own API records play
no part in the truth."""
import json
from pathlib import Path

import pytest

from tests.conftest import bench_module

ROOT = Path(__file__).resolve().parent.parent
COV = bench_module("cupti_coverage")


def _has_cupti(gt):
    return bool(COV.cupti_configs(gt) or COV.cupti_configs(gt.get(COV.NATIVE) or {}))


WITH_CUPTI = [p.parent.name for p in sorted((ROOT / "captures").glob("*/manifest.json"))
              if _has_cupti(json.loads(p.read_text()).get("ground_truth", {}))]


def test_the_corpus_has_cupti_truth():
    # cuFFT through CuPy, XLA command buffers (with WHILE nodes too), PyTorch's copies, the
    # libraries under PyTorch and CuPy, NCCL under torchrun
    assert {"cupy-fft", "jax-loops", "jax-cmdbuf", "torch-copies", "torch-libs", "cupy-linalg",
            "ddp-2rank", "jax-train", "pdl", "torch-fp8"} <= set(WITH_CUPTI)


@pytest.mark.parametrize("name", WITH_CUPTI)
def test_every_cupti_kernel_configuration_is_decoded(name):
    r = COV.coverage(ROOT / "captures" / name)
    assert r["cupti_configs"] > 0
    assert r["missing"] == [], r
