"""model.ioctls past a decode's first few (model.IoctlList): written to the decode's file
and read back as they were made, or, in a brief decode, counted and dropped. A job without
a caching allocator makes RM ioctls every step (PyTorch with
PYTORCH_NO_CUDA_MEMORY_CACHING=1: 88,902 in 200 steps, ~1 KB each in memory), so keeping
them all grew the text decode's peak RSS with the job's length and stopped the decode at
KEPT_ENTRIES (200,000)."""
import pytest

from decoders.session import decode_capture
from decoders.session.model import IoctlList, ioctl_counts
from tests.conftest import CAPTURES, capture_file

NAMES = ("torch-small", "multi-gpu", "cupy-linalg")


def _plain(e):
    return {k: v for k, v in e.items() if k != "_body"}


@pytest.mark.parametrize("name", NAMES)
def test_spilled_ioctls_read_back_as_made(name):
    """Read back without their bodies, and the same but for them: what the views read of a
    body (its facts: the naming coverage, a selection by name) was taken when it was made."""
    from decoders.ioctl import coverage
    from tracer.report_json import coverage_stats
    path = capture_file(name)
    full = decode_capture(path, keep=None)          # every entry in memory, as made
    spilled = decode_capture(path, keep=8)
    assert isinstance(spilled.ioctls, IoctlList) and len(full.ioctls) > 100
    assert len(spilled.ioctls) == len(full.ioctls)
    for k, (a, b) in enumerate(zip(full.ioctls, spilled.ioctls)):
        assert _plain(a) == _plain(b)
        assert a["_facts"] is not None
        assert (b["_body"] is None) == (k >= 8)
    assert spilled.stats() == full.stats()
    # the coverage from the facts is the coverage of the bodies themselves
    want = coverage([i["_body"] for i in full.ioctls], str(full.meta["driver"]).split(".")[0])
    assert coverage_stats(spilled) == coverage_stats(full) == want


@pytest.mark.parametrize("name", NAMES)
def test_a_brief_decode_counts_the_ioctls_it_drops(name):
    path = capture_file(name)
    full = decode_capture(path, keep=None)
    brief = decode_capture(path, brief=4)
    assert len(brief.ioctls) == len(full.ioctls)
    assert ioctl_counts(brief.ioctls) == ioctl_counts(list(full.ioctls))
    assert [_plain(e) for e in brief.ioctls[:4]] == [_plain(e) for e in full.ioctls[:4]]
    with pytest.raises(IndexError):         # (decoders/spill.py Dropped)
        brief.ioctls[len(full.ioctls) - 1]


def test_the_file_of_ioctls_is_bounded(monkeypatch):
    """Past SPILLED_IOCTLS ioctls written to the decode's file, decoding stops with one
    problem naming the record (the file stays bounded whatever a capture holds)."""
    import decoders.session.budget as B
    monkeypatch.setattr(B, "SPILLED_IOCTLS", 50)
    m = decode_capture(capture_file("torch-small"), keep=8)
    stops = [str(p) for p in m.problems if "decoding stopped" in str(p)]
    assert len(stops) == 1 and "more than 50 ioctl records" in stops[0], m.problems
    assert len(m.ioctls) == 50      # (every ioctl counts, those kept in memory too)


@pytest.mark.parametrize("name", NAMES)
def test_a_selection_by_name_reads_spilled_ioctls(name):
    """--ioctl NAME matches a control or class name, which a spilled entry (read back without
    its body) still has: the same ioctls are selected as from a decode that keeps them all."""
    from decoders.select import select
    path = capture_file(name)
    full = decode_capture(path, keep=None)
    spilled = decode_capture(path, keep=8)
    for want in ("GPU_GET_CLASSLIST", "HOPPER_CHANNEL_GPFIFO_A", "UVM_MAP_EXTERNAL"):
        a = [i["index"] for i in select(full, ioctl=want).ioctls]
        b = [i["index"] for i in select(spilled, ioctl=want).ioctls]
        assert a == b and a, (want, a, b)
        assert max(b) > spilled.ioctls[7]["index"]      # past the entries kept in memory
