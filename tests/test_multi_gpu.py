"""captures/multi-gpu: one process launching vadd on each of the two H200s of an
nvidia-h200-x2 machine (scripts/corpus/multi_gpu.py). Both GPUs' doorbells are caught:
the submissions split between the usermode pages mapped from /dev/nvidia0 and
/dev/nvidia1, none is lost, and each device's launch is verified against its call."""
from collections import Counter

from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_file, manifest


def test_doorbells_of_every_gpu_are_captured():
    gt = manifest("multi-gpu")["ground_truth"]
    m = decode_capture(capture_file("multi-gpu"))
    assert gt["devices"] == 2 and gt["ok"]
    subs = list(m.submissions)
    assert sum(s["lost"] for s in subs) == 0
    assert len(subs) == m.shim_stats["doorbells"]
    pages = [mm for mm in m.mmaps if not mm.get("munmap") and not mm.get("mremap")]
    by_dev = Counter()
    for s in subs:
        dev, = [mm["path"] for mm in pages if mm["addr"] <= s["doorbell_addr"] < mm["addr"] + mm["length"]]
        by_dev[dev] += 1
    assert set(by_dev) == {"/dev/nvidia0", "/dev/nvidia1"}
    kernels = [(l, m.attribute(l)) for l in m.launches if l.kernel]
    assert len(kernels) == len(gt["launches"]) == 2
    for (launch, a), want in zip(kernels, gt["launches"]):
        assert a["verified"] is True
        assert launch.summary["grid"] == want["grid"] and launch.summary["block"] == want["block"]
        assert a["args"][3]["value"] == want["n"]
