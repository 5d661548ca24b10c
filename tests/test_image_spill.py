"""Module images kept in a file, not in memory (decoders/session/budget.py IMAGE_IN_MEMORY,
decoders/spill.py BytesSpill): a cuDNN training job's fatbins held 54 MiB of a 200 MiB
decode (scripts/corpus/train_loader.py). The decode must name and check every kernel as it
did with the images in memory."""
import hashlib

from decoders.session import budget as B
from decoders.session import decode_capture
from decoders.spill import BytesSpill, SpilledBytes
from tests.conftest import CAPTURES, capture_file


def test_spilled_bytes_read_back_and_compare_by_content():
    spill = BytesSpill()
    data = bytes(range(256)) * 1000
    key = (len(data), hashlib.sha256(data).digest())
    a, b = spill.put(data, key), spill.put(data, key)
    other = spill.put(data[:-1], (len(data) - 1, hashlib.sha256(data[:-1]).digest()))
    assert bytes(a) == data and len(a) == len(data) and bytes(other) == data[:-1]
    assert a == b and hash(a) == hash(b) and a != other and a != data
    assert {a: 1}[b] == 1


def _names(m):
    return [((s.get("attribution") or {}).get("kernel") or {}).get("name")
            for s in (launch.summary for launch in m.launches)]


def test_kernels_named_the_same_with_images_in_a_file(monkeypatch):
    path = capture_file("torch-eager")
    spilled = decode_capture(path)
    images = [c for c in spilled.attribution.images.values()]
    kinds = {type(c.image) for c in images}
    assert SpilledBytes in kinds, kinds      # its library images (cut at 256 KiB) are big
    monkeypatch.setattr(B, "IMAGE_IN_MEMORY", 1 << 62)
    held = decode_capture(path)
    assert {type(c.image) for c in held.attribution.images.values()} == {bytes}
    names = _names(spilled)
    assert names == _names(held) and sum(n is not None for n in names) > 10
    assert [s.summary.get("verified") for s in spilled.launches] == \
        [s.summary.get("verified") for s in held.launches]
    assert spilled.verified == held.verified
