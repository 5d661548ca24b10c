"""kernels/corpus_*.cu, built here with nvcc (no GPU): each kernel's parameter offsets and
sizes in the cubin's .nv.info equal what cuFuncGetParamInfo reported on the H100 when the
corpus capture was recorded (manifest ground_truth.kernels). The same sources compile
with NVRTC (host code is hidden from it by __CUDACC_RTC__): checked on the GPU machine."""
import os
import shutil
import subprocess

import pytest

from decoders.cubin import find_cubins
from tests.conftest import ROOT, manifest

NVCC = shutil.which("nvcc")
CORPUS = {"corpus_graph": "graph-replay", "corpus_streams": "two-streams",
          "corpus_fault": "kernel-fault", "corpus_kill": "sigkill"}


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("source,capture", sorted(CORPUS.items()))
def test_nvcc_cubin_params_match_the_driver(source, capture, tmp_path):
    out = tmp_path / f"{source}.cubin"
    subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-o", str(out), str(ROOT / f"kernels/{source}.cu")],
                   check=True, capture_output=True)
    (_, cubin), = find_cubins(out)
    want = manifest(capture)["ground_truth"]["kernels"]
    got = {k.name.split("(")[0]: [[p["offset"], p["size"]] for p in k.params] for k in cubin.kernels}
    assert got == {name: k["params"] for name, k in want.items()}


@pytest.mark.gpu
@pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="NVRTC is on the GPU machine")
@pytest.mark.parametrize("source,capture", sorted(CORPUS.items()))
def test_nvrtc_compiles_the_kernels(source, capture):
    from tracer.builtin import compile_nvrtc, kernel_source
    image = compile_nvrtc(kernel_source(f"{source}.cu"), "90", f"{source}.cu".encode())
    (_, cubin), = find_cubins(bytes(image))
    want = manifest(capture)["ground_truth"]["kernels"]
    assert {k.name.split("(")[0] for k in cubin.kernels} == set(want)
