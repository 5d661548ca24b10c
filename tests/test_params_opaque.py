"""Controls with no public params layout (issue 18): shown as opaque, with words that match
the object tree marked as guesses; and the stats that count them (docs/json.md `stats`)."""
import struct
from types import SimpleNamespace

from decoders.rm import controls as C
from decoders.rm.opaque import guesses
from decoders.session import decode_capture


def _tree():
    """A stand-in ObjectTree: one handle, one mapped GPU range [0x200000000, +0x1000)."""
    obj = SimpleNamespace(handle=0x5C00000E, class_name="NV01_MEMORY_LOCAL_USER")

    def resolve(va):
        if 0x200000000 <= va < 0x200001000:
            return SimpleNamespace(obj=obj, offset=va - 0x200000000)
        return None
    return SimpleNamespace(objects={0x5C00000E: obj}, resolve=resolve)


def test_guesses_name_handles_and_mapped_vas_only():
    data = struct.pack("<IIQQI", 7, 0x5C00000E, 0x200000010, 0x300000000, 0x5C00000F)
    got = guesses(data, _tree())
    assert [(g["offset"], g["size"]) for g in got] == [(4, 4), (8, 8)]
    assert got[0]["guess"] == "handle 0x5c00000e (NV01_MEMORY_LOCAL_USER)"
    assert got[1]["guess"].startswith("GPU VA: offset 0x10 in 0x5c00000e")
    assert guesses(b"", _tree()) == [] and guesses(data, None) == []


def test_bit15_controls_are_opaque_with_size_in_torch_small():
    m = decode_capture("captures/torch-small/capture.tlc.gz", launches=False)
    ops = [e for e in m.ioctls if "opaque" in e]
    seen = {int(e["opaque"]["control"], 16): e["opaque"]["size"] for e in ops}
    for cmd, size in {0x20809001: 8, 0x20809009: 8, 0x20809064: 520, 0x2080A026: 532,
                      0x2080A084: 4}.items():
        assert seen[cmd] == size
        assert "RM_GSS_LEGACY_MASK" in C.NON_PUBLIC[cmd]
    assert all(e["summary"].split(" [opaque ")[1].startswith(str(e["opaque"]["size"]))
               for e in ops)
    assert set(seen) <= set(C.NON_PUBLIC)
