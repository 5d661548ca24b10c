"""Ranks and GPUs per process (issue 26, decoders/ranks.py): on captures/multi-gpu (one
process, vadd on each of two H200s) each launch's channel leads to the GPU the ground truth
says it ran on, and the GPU identities agree with a second source in the same capture."""
import io

from decoders.ranks import parse_env, processes_meta, rank_fields, rank_label
from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_file, manifest
from tracer.report import render_text


def _model():
    return decode_capture(capture_file("multi-gpu"))


def test_each_launch_runs_on_the_gpu_the_truth_names():
    m = _model()
    gm = m.objects.gpus
    truth = manifest("multi-gpu")["ground_truth"]["launches"]
    kernels = [l for l in m.launches if l.kernel]
    assert len(kernels) == len(truth) == 2
    for launch, want in zip(kernels, truth):
        assert launch.summary["pid"] == launch.pid == 591
        g = gm.channel_gpu(launch.pid, launch.hChannel)
        assert g["index"] == want["device"], (g, want)


def test_gpu_identity_agrees_with_uvm_and_card_info():
    """index and PCI bus id come from NV_ESC_CARD_INFO, the UUID from GET_GID_INFO on the
    subdevice: the UUIDs are the ones the process registered with UVM, and the device RM
    numbers 1 is /dev/nvidia0 (RM's deviceInstance is not the minor)."""
    m = _model()
    (p,) = processes_meta(m)
    assert p["rank"] is None and p["world_size"] is None and "env" not in p
    gpus = sorted(p["gpus"], key=lambda g: g["index"])
    assert [(g["index"], g["pci_bus_id"], g["gpu_id"], g["device_instance"]) for g in gpus] == \
        [(0, "0000:00:06.0", 6, 1), (1, "0000:00:07.0", 7, 0)]
    assert {g["uuid"] for g in gpus} == set(m.objects.gpus.uvm_uuids[591]) == {
        "GPU-d0e052fd-41c1-c064-555f-6bdabfc7319e", "GPU-ebd58ac3-a4cf-424c-838e-0fd718c475d1"}
    assert all(g["channels"] == 20 for g in gpus)
    assert rank_label(p) == "pid 591 (GPUs 0, 1)"


def test_text_report_has_a_block_for_the_gpus():
    out = io.StringIO()
    render_text(_model(), out)
    text = out.getvalue()
    block = text.split("GPUs by process (1 process(es) on a GPU)\n", 1)[1].split("\n\n", 1)[0]
    assert block.splitlines() == [
        "  pid 591 (GPUs 0, 1)",
        "    GPU 0  0000:00:06.0  GPU-d0e052fd-41c1-c064-555f-6bdabfc7319e  20 channel(s)",
        "    GPU 1  0000:00:07.0  GPU-ebd58ac3-a4cf-424c-838e-0fd718c475d1  20 channel(s)",
        "    2 kernel launch(es):",
        "           2  vadd"]


def test_single_gpu_capture_has_no_rank_block():
    out = io.StringIO()
    render_text(decode_capture(capture_file("builtin-vadd")), out)
    assert "GPUs by process" not in out.getvalue() and "\nranks (" not in out.getvalue()


def test_rank_fields_from_each_launcher():
    assert rank_fields(parse_env(b"RANK=1\0LOCAL_RANK=1\0WORLD_SIZE=2\0LOCAL_WORLD_SIZE=2\0")) == \
        dict(rank=1, local_rank=1, world_size=2, local_world_size=2, node_rank=None)
    assert rank_fields(parse_env(b"OMPI_COMM_WORLD_RANK=5\0OMPI_COMM_WORLD_SIZE=8\0"))["rank"] == 5
    assert rank_fields(parse_env(b"SLURM_PROCID=7\0SLURM_LOCALID=3\0"))["local_rank"] == 3
    assert rank_fields(parse_env(b"RANK=x\0"))["rank"] is None      # not a number: not a rank
    assert rank_label({"pid": 1775, "rank": 1, "gpus": [
        {"index": 1, "pci_bus_id": "0000:00:07.0", "channels": 20}]}) == \
        "rank 1 (GPU 1, 0000:00:07.0) pid 1775"
