"""Hopper TMA descriptors (decoders/cuda/tensormaps.py). captures/tma (scripts/corpus/tma.py
on the H200): maps made by cuTensorMapEncodeTiled and moved by cuTensorMapReplaceAddress,
passed by value to kernels/tma.cu, whose tile copy through the tensor memory accelerator the
program checked. The truth is the manifest's: each map's inputs and the 128 bytes the driver
made (read out of cuda-python's CUtensorMap), each launch's maps, cuFuncGetParamInfo.

The rest on synthetic calls (named so): which offsets are scanned, a map forgotten, a map
replaced that no recorded call made, another process's map."""
import io
from types import SimpleNamespace

import pytest

from decoders.cuda import tensormaps as TM
from tests.conftest import capture_path, manifest

FIELDS = ("data_type", "rank", "global_address", "global_dim", "global_strides", "box_dim",
          "element_strides", "interleave", "swizzle", "l2_promotion", "oob_fill")


@pytest.fixture(scope="module")
def truth():
    return manifest("tma")["ground_truth"]


@pytest.fixture(scope="module")
def decoded():
    from decoders.session import decode_capture
    m = decode_capture(capture_path("tma"))
    ours = [l.summary for l in m.launches if l.summary["kernel"] and
            ((l.summary["attribution"] or {}).get("kernel") or {}).get("name", "").startswith("tma_")]
    return m, ours


def test_each_map_is_named_by_the_call_that_made_its_bytes(decoded, truth):
    """Every launch of tma_tile and tma_prefetch: the maps at the offsets cuFuncGetParamInfo
    gives their parameters, each with the inputs the program passed for it, the bytes the
    driver made in the launch's constant bank, and the allocation its address is in."""
    m, ours = decoded
    assert [s["attribution"]["kernel"]["name"] for s in ours] == \
        [x["kernel"] for x in truth["launches"]] == ["tma_tile", "tma_tile", "tma_prefetch"]
    for s, want in zip(ours, truth["launches"]):
        info = truth["param_info"][want["kernel"]]
        got = s["attribution"]["tensor_maps"]
        assert [g["param_offset"] for g in got] == [info[i]["offset"] for i in range(len(want["maps"]))]
        data = bytes.fromhex(s["params"]["hex"])
        for g, w in zip(got, want["maps"]):
            assert data[g["param_offset"]:g["param_offset"] + 128].hex() == w["bytes"]
            made = truth["maps"][w["map"]]
            assert {f: g[f] for f in FIELDS} == {f: made[f] for f in FIELDS}, w["map"]
            assert g["points_to"]["base"] == made["global_address"] and g["points_to"]["offset"] == 0
        assert s["attribution"]["verified"] is True
    assert not m.problems


def test_a_replaced_address_keeps_the_encoding_and_names_both_calls(decoded):
    _, ours = decoded
    first, second, both = (s["attribution"]["tensor_maps"] for s in ours)
    assert first[0]["made_by"]["name"] == "cuTensorMapEncodeTiled"
    assert first[0]["encoded_by"] == first[0]["made_by"]["index"]
    assert second[0]["made_by"]["name"] == "cuTensorMapReplaceAddress"
    assert second[0]["encoded_by"] == first[0]["made_by"]["index"]
    assert second[0]["made_by"]["index"] > first[0]["made_by"]["index"]
    assert both[0]["made_by"] == second[0]["made_by"]
    assert both[1]["made_by"]["name"] == "cuTensorMapEncodeTiled"


def test_text_report_shows_each_map(truth):
    from tracer.report import render_text
    from decoders.session import decode_capture
    out = io.StringIO()
    render_text(decode_capture(capture_path("tma")), out)
    text = out.getvalue()
    c = truth["maps"]["C"]
    assert text.count("tensor map @c[0x0][0x240]: ") == 3
    assert (f"tensor map @c[0x0][0x2c0]: cuTensorMapEncodeTiled (call "
            in text)
    assert (f"BFLOAT16, dims {'x'.join(map(str, c['global_dim']))}, strides "
            f"[{', '.join(map(str, c['global_strides']))}] B, box "
            f"{'x'.join(map(str, c['box_dim']))}, element strides [1, 1, 1], interleave NONE, "
            f"swizzle 128B, L2 promotion L2_256B, OOB fill NAN_REQUEST_ZERO_FMA") in text
    assert f"global address {c['global_address']:#x} -> offset 0x0 in cuMemAlloc" in text


# -- synthetic calls ----------------------------------------------------------------------

def _encode(index, pid, made, address=0x7f0000000000, rank=2):
    import struct
    inputs = struct.pack(f"<{rank}Q{rank - 1}Q{rank}I{rank}I", *([64] * rank), *([256] * (rank - 1)),
                         *([16] * rank), *([1] * rank))
    return SimpleNamespace(
        base="cuTensorMapEncodeTiled", name="cuTensorMapEncodeTiled", index=index, pid=pid,
        args={"tensorMap": 1, "tensorDataType": 0xABCD00000007, "tensorRank": rank,
              "globalAddress": address, "interleave": 0, "swizzle": 3, "l2Promotion": 2,
              "oobFill": 0},
        sections={"TENSOR_MAP_INPUTS": {"data": inputs, "flags": [], "full_size": len(inputs)}},
        out_sections={"TENSOR_MAP": {"data": made, "flags": [], "full_size": 128}})


def _replace(index, pid, old, new, address):
    return SimpleNamespace(
        base="cuTensorMapReplaceAddress", name="cuTensorMapReplaceAddress", index=index, pid=pid,
        args={"tensorMap": 1, "globalAddress": address},
        sections={"TENSOR_MAP": {"data": old, "flags": [], "full_size": 128}},
        out_sections={"TENSOR_MAP": {"data": new, "flags": [], "full_size": 128}})


def _map(n):
    return bytes([n]) * 8 + bytes(range(8, 128))


def test_synthetic_offsets_scanned_are_the_banks_64_byte_ones():
    maps = TM.TensorMaps()
    maps.observe(_encode(5, 1, _map(1)))
    # the parameters start at c[0x0][0x210]: the bank's 64-byte offsets are data[48:], data[112:]
    data = bytes(48) + _map(1) + bytes(64)
    assert [(off, d["encoded_by"]) for off, d in maps.find(1, data, 0x210, 100)] == [(48, 5)]
    assert maps.find(1, bytes(16) + _map(1) + bytes(64), 0x210, 100) == []   # not aligned there
    assert maps.find(2, data, 0x210, 100) == []                              # another process
    d = maps.find(1, data, 0x210, 100)[0][1]
    assert (d["data_type"], d["swizzle"], d["l2_promotion"]) == ("FLOAT32", "128B", "L2_128B")
    assert (d["global_dim"], d["global_strides"], d["box_dim"]) == ([64, 64], [256], [16, 16])


def test_synthetic_replace_of_a_map_no_call_made_says_so():
    maps = TM.TensorMaps()
    maps.observe(_replace(9, 1, _map(3), _map(4), 0x1234000))
    (off, d), = maps.find(1, _map(4), 0, 100)
    assert (off, d["encoded_by"], d["made_by"]["index"], d["global_address"]) == (0, None, 9, 0x1234000)
    assert "rank" not in d


def test_synthetic_oldest_map_forgotten_past_the_limit(monkeypatch):
    monkeypatch.setattr(TM, "MAX_MAPS", 3)
    maps = TM.TensorMaps()
    for i in range(4):
        maps.observe(_encode(i, 1, _map(i)))
    assert maps.find(1, _map(0), 0, 100) == []
    assert [d["encoded_by"] for _, d in maps.find(1, _map(1) + _map(3), 0, 100)] == [1, 3]


def test_triton_descriptors_named_at_every_launch():
    """captures/triton-descriptors (scripts/corpus/triton_descriptors.py, Triton on the H200):
    Triton's launcher encodes each TensorDescriptor's map anew at every launch; each launch of
    double_blocks holds the input's map and the output's, each with the tensor's data
    pointer, its shape and strides innermost first, the block as the box, and the map made
    for that launch (a later call than the launch before's)."""
    from decoders.session import decode_capture
    g = manifest("triton-descriptors")["ground_truth"]
    m = decode_capture(capture_path("triton-descriptors"))
    ours = [l.summary for l in m.launches if l.summary["kernel"] and
            "double_blocks" in (((l.summary["attribution"] or {}).get("kernel") or {}).get("name") or "")]
    assert len(ours) == g["launches"] == 3
    last = -1
    for s in ours:
        assert list(s["grid"]) == g["grid"] and s["attribution"]["verified"] is True
        maps = s["attribution"]["tensor_maps"]
        assert len(maps) == 2
        for got, name in zip(maps, ("x", "y")):
            t = g["tensors"][name]
            assert (got["data_type"], got["rank"], got["global_address"]) == \
                (t["dtype"], 2, t["data_ptr"])
            assert got["global_dim"] == t["shape"][::-1]
            assert got["global_strides"] == t["strides_bytes"][:-1][::-1]
            assert got["box_dim"] == t["block_shape"][::-1]
            assert got["made_by"]["name"] == "cuTensorMapEncodeTiled"
            assert last < got["made_by"]["index"] < s["api_call"]["index"]
            assert got["points_to"] is not None
        last = s["api_call"]["index"]


def test_synthetic_same_bytes_made_again_name_the_call_before_the_launch():
    """Triton encodes the same descriptor before every launch: a launch decoded after later
    encodes were seen is named by the one before its submission; none before it, no name."""
    maps = TM.TensorMaps()
    for i in (10, 20, 30):
        maps.observe(_encode(i, 1, _map(7)))
    assert [d["encoded_by"] for _, d in maps.find(1, _map(7), 0, 25)] == [20]
    assert [d["encoded_by"] for _, d in maps.find(1, _map(7), 0, 31)] == [30]
    assert maps.find(1, _map(7), 0, 10) == []


def test_synthetic_hostile_calls_name_nothing():
    """A record of slot 115 with fewer argument words than the function has, inputs of the
    wrong size for its rank, a rank past 5, or a map that is not 128 bytes: no map, no error."""
    maps = TM.TensorMaps()
    short = _encode(1, 1, _map(1))
    del short.args["oobFill"]
    wrong_size = _encode(2, 1, _map(2), rank=3)
    wrong_size.args["tensorRank"] = 2
    too_deep = _encode(3, 1, _map(3))
    too_deep.args["tensorRank"] = 6
    cut = _encode(4, 1, _map(4)[:100])
    for c in (short, wrong_size, too_deep, cut):
        maps.observe(c)
    assert maps.find(1, _map(1) + _map(2) + _map(3) + _map(4), 0, 100) == []
