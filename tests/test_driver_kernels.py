"""The driver's own copy and memset kernels (issue 25, docs/driver-kernels.md), named after
their call and checked against it.

Truth is the capture's API records (the arguments the program itself passed to
cuMemsetD*/cuMemcpyDtoD*, recorded by the shim at the call) and the manifests' ground
truth, never the decoder's earlier output. The constant bank bytes are unpacked here with
plain struct, not with the decoder's tables. Mutated constant banks (synthetic-*) must
make the check fail, and calls outside what the recordings show must be left unchecked
with the reason, never reported as differing.
"""
import io
import re
import struct
from types import SimpleNamespace

import pytest

from decoders.cuda import driverkernels as D
from decoders.session import decode_capture
from tests.conftest import CAPTURES, capture_file, manifest

_MODELS = {}

# The driver kernels each capture holds: the calls that ran one (from the API records:
# cuMemset*/cuMemcpyDtoD* calls whose submission held a kernel QMD), counted by hand from
# `trace-decode --json` and docs/driver-kernels.md.
EXPECTED = {
    "memcpy-memset": {"cuMemcpyDtoD": 1, "cuMemsetD8": 1},
    "launch-paths": {"cuMemsetD32": 1},
    "graph-replay": {"cuMemsetD8": 1},
    "builtin-vadd": {"cuMemsetD32": 1},
    "builtin-vadd-grid123": {"cuMemsetD32": 1},
    "torch-eager": {"cuMemcpyDtoDAsync": 1},
    "torch-graph": {"cuMemcpyDtoDAsync": 3},
    "jax-jit": {"cuMemsetD8Async": 2, "cuMemcpyDtoDAsync": 2, "cuMemsetD32Async": 70},
    # 28 copies, four of them run as two kernels (4096-byte blocks, then the rest); its ten
    # 4-byte cuMemsetD8Async ran no kernel
    "torch-copies": {"cuMemcpyDtoDAsync": 32},
    "torch-window-launches": {"cuMemcpyDtoDAsync": 9},
    # graph_copies.py clears each destination first: 9 cuMemsetD8 calls, the two of 4 B no
    # kernel (inline-to-memory, as torch-copies' 4-byte memsets)
    "graph-copies": {"cuMemsetD8": 7},
}
ELEMENT = {"cuMemsetD8": 1, "cuMemsetD8Async": 1, "cuMemsetD32": 4, "cuMemsetD32Async": 4}


def model(name):
    """A committed capture by its name."""
    if name not in _MODELS:
        _MODELS[name] = decode_capture(capture_file(name))
    return _MODELS[name]


def driver_launches(m):
    """(launch summary, its API call's record) for each kernel QMD made inside a memset or
    copy call whose kernels are the driver's (D.CALLS)."""
    calls = {c["index"]: c for c in m.api_calls}
    out = []
    for launch in m.launches:
        s = launch.summary
        if not s["kernel"] or not s.get("api_call"):
            continue
        c = calls[s["api_call"]["index"]]
        if c["base"] in D.CALLS:
            out.append((s, c))
    return out


def params(s):
    return bytes.fromhex(s["params"]["hex"])


def fake_call(c, **args):
    """The object check() reads (base name, named argument words) from an API record."""
    return SimpleNamespace(base=c["base"], args=dict(c["args"], **args))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_driver_kernels_are_named_and_match_their_calls(name):
    m = model(name)
    got = driver_launches(m)
    counts = {}
    for s, c in got:
        counts[c["base"]] = counts.get(c["base"], 0) + 1
    assert counts == EXPECTED[name]
    for s, c in got:
        a = s["attribution"]
        op = "memset" if c["base"].startswith("cuMemset") else "copy"
        assert a["kernel"]["name"] == f"[driver {op}, {c['base']}]"
        assert a["verified"] is True and a["differences"] == [], (s["record_index"], a)
        assert s["verified"] is True
        raw, args = params(s), c["args"]
        # the same facts from the call's own arguments and plain struct
        if op == "memset":
            assert s["params"]["size"] == 32 and s["block"] == [512, 1, 1]
            dst, value, reserved0, count, reserved1 = struct.unpack("<QIIQQ", raw)
            esize = ELEMENT[c["base"]]
            assert dst == args["dstDevice"]
            lo = args["value"].to_bytes(8, "little")[:esize]    # the char/int argument
            assert value.to_bytes(4, "little") == lo * (4 // esize)
            assert count * 4 == args["N"] * esize
            assert reserved1 == 0 and reserved0 == 0     # (not in jax-loops: not compared)
            assert s["grid"] == [count // 2048, 1, 1]      # the floor: 0x18c0 words -> 3
            assert a["checked"] == ["dst", "value", "count", "grid"] and a["unchecked"] == []
        elif s["params"]["size"] == 24:
            # the whole copy, or above 1 MiB what the 4096-byte blocks leave
            n = args["ByteCount"]
            start = n // 4096 * 4096 if n >= 1 << 20 else 0
            assert s["block"] == [256, 1, 1]
            dst, src, count = struct.unpack("<QQQ", raw)
            assert (dst, src) == (args["dstDevice"] + start, args["srcDevice"] + start)
            assert count * 4 == n - start or n - start == count == 1
            assert s["grid"] == [-(-count // 256), 1, 1]
            assert a["checked"] == ["dst", "src", "count", "grid"] and a["unchecked"] == []
        else:
            dst, src = struct.unpack("<QQ", raw)
            assert (dst, src) == (args["dstDevice"], args["srcDevice"])
            assert s["grid"] == [args["ByteCount"] // 4096, 1, 1]
            assert a["checked"] == ["dst", "src", "grid"]
            assert [u["field"] for u in a["unchecked"]] == ["count"]


def test_memcpy_memset_against_the_manifest():
    """corpus_memcpy.cu: cudaMemcpy D2D of 1 MiB from d1 to d2, then cudaMemset(d1, 0x5A,
    1 MiB) (kernels/corpus_memcpy.cu; manifest ground truth)."""
    gt = manifest("memcpy-memset")["ground_truth"]
    n = gt["bytes"]
    value = int(re.search(r"memset 0x([0-9A-Fa-f]+)", " ".join(gt["operations"])).group(1), 16)
    m = model("memcpy-memset")
    d1, d2 = [c["out"] for c in m.api_calls if c["base"] == "cuMemAlloc"]
    (copy, _), (memset, _) = driver_launches(m)
    dst, src = struct.unpack("<QQ", params(copy))
    assert (dst, src) == (d2, d1)
    assert copy["grid"][0] * copy["block"][0] * 16 == n     # 4096 B a block
    dst, v, _, count, _ = struct.unpack("<QIIQQ", params(memset))
    assert dst == d1 and v == int.from_bytes(bytes([value]) * 4, "little") and count * 4 == n
    a = memset["attribution"]
    assert a["kernel"]["name"] == "[driver memset, cuMemsetD8]"
    assert a["checked"] == ["dst", "value", "count", "grid"] and a["verified"] is True
    assert a["driver_kernel"] == {"operation": "memset", "layout": "memset of 32-bit words",
                                  "bytes": n, "element_size": 1,
                                  "span": {"offset": 0, "bytes": n},
                                  "source": "docs/driver-kernels.md"}
    arg = {x["field"]: x for x in a["args"]}
    assert arg["dst"]["points_to"]["call"] == "cuMemAlloc_v2" and arg["dst"]["points_to"]["offset"] == 0
    c = copy["attribution"]
    assert c["kernel"]["name"] == "[driver copy, cuMemcpyDtoD]" and c["verified"] is True
    assert "holds none" in c["unchecked"][0]["why"]


# -- the check must be able to fail ----------------------------------------------------------

def _one(name, base):
    for s, c in driver_launches(model(name)):
        if c["base"] == base:
            return s, c
    raise AssertionError(f"{name}: no {base}")


def _with_params(s, raw):
    return dict(s, params=dict(s["params"], hex=raw.hex(), size=len(raw)))


def _changed_word_fails(s, c, fmt, index, field):
    """The launch's parameter word `index` (of layout `fmt`) moved by 4: verified False, with
    exactly `field` named as the difference."""
    words = list(struct.unpack(fmt, params(s)))
    words[index] += 4
    bad = struct.pack(fmt, *words)
    out = D.check(fake_call(c), _with_params(s, bad), bad)
    assert out["verified"] is False
    assert [d["field"].split(" ")[0] for d in out["differences"]] == [field]


@pytest.mark.parametrize("name,base,fmt,index,field", [
    ("memcpy-memset", "cuMemsetD8", "<QIIQQ", 3, "count"),
    ("memcpy-memset", "cuMemsetD8", "<QIIQQ", 1, "value"),
    ("memcpy-memset", "cuMemsetD8", "<QIIQQ", 0, "dst"),
    ("jax-jit", "cuMemsetD32Async", "<QIIQQ", 3, "count"),
    ("memset-sizes", "cuMemsetD16Async", "<QIIQQ", 3, "count"),    # the byte kernel first
    ("memset-sizes", "cuMemsetD8", "<QIIQQ", 1, "value"),
    ("memset-sizes", "cuMemsetD8", "<QIIQQ", 0, "dst"),
    ("copy-sizes", "cuMemcpyDtoDAsync", "<QQQ", 2, "count"),       # its first: 1 byte
    ("torch-eager", "cuMemcpyDtoDAsync", "<QQQ", 2, "count"),
    ("torch-graph", "cuMemcpyDtoDAsync", "<QQQ", 1, "src"),
    ("memcpy-memset", "cuMemcpyDtoD", "<QQ", 1, "src"),
])
def test_synthetic_changed_cbank_fails(name, base, fmt, index, field):
    s, c = _one(name, base)
    _changed_word_fails(s, c, fmt, index, field)
    # and the real bytes pass
    assert D.check(fake_call(c), s, params(s))["verified"] is True


def test_synthetic_changed_call_or_grid_fails():
    s, c = _one("graph-replay", "cuMemsetD8")
    raw = params(s)
    assert D.check(fake_call(c, N=c["args"]["N"] + 4), s, raw)["differences"][0]["field"] \
        .startswith("count")
    out = D.check(fake_call(c), dict(s, grid=[33, 1, 1]), raw)
    assert out["verified"] is False and out["differences"] == [
        {"field": "grid", "api": [32, 1, 1], "qmd": [33, 1, 1]}]
    # D8's value is the argument's low byte: the rest of the recorded word is not the value
    assert D.check(fake_call(c, value=0x1200), s, raw)["verified"] is True
    assert D.check(fake_call(c, value=0x12), s, raw)["verified"] is False


@pytest.mark.parametrize("change,why", [
    (dict(base="cuMemsetD16"), "no cuMemsetD16 run as this kernel"),
    (dict(base="cuMemcpyAsync"), "no copy kernel with a 32-byte parameter block"),
    # an odd count or a dst off 4 B runs the byte kernel (memset-sizes), seen from 0x1fff B
    (dict(N=0x1001), "no memset of 0x1001 B by cuMemsetD8 is in the recordings"),
    (dict(dstDevice=0x7f9adbe00002, N=0x400000), "no memset of 0x400000 B by cuMemsetD8"),
    (dict(cut=24), "no memset kernel with a 24-byte parameter block"),
    (dict(block=[128, 1, 1]), "block 128x1x1"),
    (dict(uploaded=False), "no upload of its parameter block"),
])
def test_synthetic_outside_the_recordings_is_not_checked(change, why):
    """Never a false difference: what the recordings do not show is left unchecked, and
    `why` names what is missing."""
    s, c = _one("graph-replay", "cuMemsetD8")
    raw = params(s)
    call = fake_call(c)
    if "base" in change:
        call.base = change["base"]
        if call.base == "cuMemcpyAsync":
            call.args = {"dst": 1 << 20, "src": 2 << 20, "ByteCount": 4096}
    elif "cut" in change:
        raw = raw[:change["cut"]]
        s = _with_params(s, raw)
    elif "block" in change:
        s = dict(s, block=change["block"])
    elif "uploaded" in change:
        s = dict(s, params=dict(s["params"], uploaded=False))
    else:
        call.args.update(change)
    out = D.check(call, s, raw)
    assert out["verified"] is None and out["differences"] == [] and why in out["why"], out
    assert "driver's own" in out["why"]
    assert out["kernel"]["name"].startswith("[driver ")


def test_synthetic_size_outside_the_seen_counts_is_not_checked():
    """A memset about twice the largest seen may split as the large copies do: not checked."""
    s, c = _one("jax-jit", "cuMemsetD32Async")
    words = list(struct.unpack("<QIIQQ", params(s)))
    words[3] = 0x800000
    raw = struct.pack("<QIIQQ", *words)
    out = D.check(fake_call(c, N=0x800000), _with_params(s, raw), raw)
    assert out["verified"] is None and out["differences"] == []
    assert "no memset of 0x2000000 B by cuMemsetD32Async is in the recordings" in out["why"]


def test_grid_outside_its_rule_is_listed_unchecked():
    lay = D.LAYOUTS[0]
    out = {"checked": [], "unchecked": [], "differences": []}
    D._check_grid(lay, lay.grid.hi + 1, [1, 1, 1], out)
    assert out["checked"] == [] and out["differences"] == []
    assert out["unchecked"][0]["field"] == "grid" and \
        f"{lay.grid.hi + 1:,}" in out["unchecked"][0]["why"]


# -- memset-sizes: which memset kernel each size, value and alignment runs ------------------

@pytest.mark.parametrize("name", ["memset-sizes", "memset-sizes-h200"])
def test_memset_sizes_against_the_manifest(name):
    """memset_sizes.py, recorded on the H100 and on the H200: 24 memsets, each on its own buffer, every buffer read back correct
    (manifest). 0x1000 B and less ran no kernel; above, exactly one: the word kernel (count
    in words) for a dst and byte count both multiples of 4, else the byte kernel (count in
    bytes), the value repeated to 32 bits in both, and each one verified."""
    gt = manifest(name)["ground_truth"]
    assert gt["buffers_wrong"] == 0 and len(gt["cases"]) == 24
    assert all(c["buffer_correct"] for c in gt["cases"])
    m = model(name)
    calls = [c for c in m.api_calls if c["base"].startswith("cuMemset")]
    assert [(c["base"], c["args"]["N"], c["args"]["dstDevice"]) for c in calls] == \
        [(g["call"], g["N"], g["dstDevice"]) for g in gt["cases"]]
    ran = {}
    for s, c in driver_launches(m):
        ran.setdefault(c["index"], []).append(s)
    kinds = {}
    for c, g in zip(calls, gt["cases"]):
        launches = ran.get(c["index"], [])
        if g["bytes"] <= 0x1000:
            assert launches == [], g
            continue
        (s,) = launches
        a = s["attribution"]
        words = not (g["bytes"] % 4 or g["dstDevice"] % 4)
        dst, value, _, count, _ = struct.unpack("<QIIQQ", params(s))
        elem = g["value"].to_bytes(g["element_bytes"], "little")
        assert dst == g["dstDevice"] and value == int.from_bytes(elem * (4 // len(elem)),
                                                                 "little")
        assert count == (g["bytes"] // 4 if words else g["bytes"])
        assert a["driver_kernel"]["layout"] == ("memset of 32-bit words" if words
                                                else "memset of bytes")
        assert a["verified"] is True and a["checked"] == ["dst", "value", "count", "grid"], a
        kinds[words] = kinds.get(words, 0) + 1
    assert kinds == {True: 6, False: 11}


# -- managed-copies: copies out of managed memory to the host ---------------------------------

def test_managed_copies_against_the_manifest():
    """managed_copies.py (H200): 13 copies out of managed memory to the host, every
    destination read back correct (manifest). Each ran one driver kernel, chosen as a
    device-to-device copy's is: the word kernel for aligned counts to 64 KiB, the 16-byte
    kernel over 1 MiB's whole blocks, bytes for 3 B and for src +1, words and a tail for
    0x1001 B. src is the call's; dst the call's dstHost only for a page-locked destination
    (else the driver's staging buffer, so it is not compared). Each is verified."""
    gt = manifest("managed-copies")["ground_truth"]
    assert gt["destinations_wrong"] == 0 and len(gt["cases"]) == 13
    m = model("managed-copies")
    calls = [c for c in m.api_calls if c["base"].startswith("cuMemcpyDtoH")]
    assert [(c["base"], c["args"]["ByteCount"], c["args"]["dstHost"], c["args"]["srcDevice"])
            for c in calls] == [(g["call"], g["ByteCount"], g["dstHost"], g["srcDevice"])
                                for g in gt["cases"]]
    ran = {}
    for s, c in driver_launches(m):
        ran.setdefault(c["index"], []).append(s)
    for c, g in zip(calls, gt["cases"]):
        n, src = g["ByteCount"], g["srcDevice"]
        (s,) = ran[c["index"]]
        a = s["attribution"]
        assert a["verified"] is True and a["differences"] == [], (n, a)
        assert "dst" not in a["checked"] and {"src", "grid"} <= set(a["checked"])
        assert [u["field"] for u in a["unchecked"]][:1] == ["dst"]
        raw = params(s)
        if len(raw) == 16:          # whole 4096-byte blocks, the count in the grid
            d, r = struct.unpack("<QQ", raw)
            assert n % 4096 == 0 and s["grid"] == [n // 4096, 1, 1]
        elif len(raw) == 40:
            d, r, reserved0, count, tail = struct.unpack("<QQQQQ", raw)
            assert (count, tail, reserved0) == (n // 4, n % 4, 0)
            assert s["grid"] == [-(-count // 256) + 1, 1, 1]
        else:
            d, r, count = struct.unpack("<QQQ", raw)
            assert count == (n // 4 if not (n % 4 or src % 4) else n)
            assert s["grid"] == [-(-count // 256), 1, 1]
        assert r == src
        assert (d == g["dstHost"]) == (g["destination"] == "pinned"), g


def test_copies_2d_every_kernel_named_after_its_call():
    """copies_2d.py (H200): 2D memsets, 2D copies and copies into managed memory, every
    destination read back correct (manifest). Before the shim bracketed cuMemsetD2D* and
    cuMemcpy2D*, 7 of its 11 kernels rang their doorbells outside any call: unnamed. Each
    is now named after its call and attributed to it; the 2D kernels are not checked (no
    layout established), the copies into managed memory are verified (src, the driver's
    staging buffer, not compared) and so are the managed-to-managed device copies. The 2D
    memsets and the device-to-device 2D copies are verified too
    (test_2d_memsets_against_the_manifest, test_2d_copies_against_the_manifest)."""
    gt = manifest("copies-2d")["ground_truth"]
    assert gt["destinations_wrong"] == 0 and len(gt["cases"]) == 13
    m = model("copies-2d")
    calls = {c["index"]: c for c in m.api_calls}
    kernels = [l.summary for l in m.launches if l.summary["kernel"]]
    assert len(kernels) == 11
    bases = []
    for s in kernels:
        a = s["attribution"]
        assert s.get("api_call"), s["record_index"]
        c = calls[s["api_call"]["index"]]
        bases.append(c["base"])
        op = "memset" if c["base"].startswith("cuMemset") else "copy"
        assert a["kernel"]["name"] == D.kernel_name(op, c["base"])
        if c["base"] in D.CALLS_2D:
            assert a["verified"] is True, a
        else:
            assert a["verified"] is True, a
            if c["base"].startswith("cuMemcpyHtoD"):
                d, r, count = struct.unpack("<QQQ", params(s))
                assert d == c["args"]["dstDevice"] and r != c["args"]["srcHost"]
                assert count == c["args"]["ByteCount"] // 4 and "src" not in a["checked"]
    # (the 2D copies from and to the host ran on a copy engine: no kernel)
    assert bases == ["cuMemsetD2D8Async"] * 3 + ["cuMemsetD2D32Async"] * 2 + \
        ["cuMemcpy2DAsync"] * 2 + ["cuMemcpyHtoDAsync", "cuMemcpyDtoDAsync"] * 2
    assert [g["call"] for g in gt["cases"]] == ["cuMemsetD2D8Async"] * 3 + \
        ["cuMemsetD2D32Async"] * 2 + ["cuMemcpy2DAsync"] * 4 + \
        ["cuMemcpyHtoDAsync", "cuMemcpyDtoDAsync"] * 2


def test_2d_memsets_against_the_manifest():
    """copies_2d.py's five 2D memsets (manifest: each call's arguments, and every
    destination read back as asked, rows and the bytes between them): where the rows do not
    touch, the driver's kernel takes dst, the value repeated to 32 bits, a row's 32-bit
    words and dstPitch, one block a row (grid 1 x Height); where they touch (D2D32, pitch
    4096 = 1024 words), the 1D word kernel sets all 0x20000 words at once. Each verified."""
    gt = manifest("copies-2d")["ground_truth"]
    cases = [g for g in gt["cases"] if g["call"].startswith("cuMemsetD2D")]
    assert len(cases) == 5 and all(g["destination_correct"] for g in cases)
    m = model("copies-2d")
    runs = [(s, c) for s, c in driver_launches(m) if c["base"].startswith("cuMemsetD2D")]
    assert len(runs) == len(cases)
    for (s, c), g in zip(runs, cases):
        esize = 1 if "D2D8" in g["call"] else 4
        value = int.from_bytes((g["value"] & ((1 << 8 * esize) - 1)).to_bytes(esize, "little")
                               * (4 // esize), "little")
        row = g["Width"] * esize
        d, v, reserved0, count, last = struct.unpack("<QIIQQ", params(s))
        assert (d, v, reserved0) == (g["dstDevice"], value, 0)
        if g["dstPitch"] == row:
            assert (count, last) == (row * g["Height"] // 4, 0)
            assert s["grid"] == [row * g["Height"] // 4 // 2048, 1, 1] and s["block"] == [512, 1, 1]
        else:
            assert (count, last) == (row // 4, g["dstPitch"])
            assert s["grid"] == [1, g["Height"], 1]
        a = s["attribution"]
        assert a["verified"] is True and a["differences"] == [] and "grid" in a["checked"], a
        assert a["driver_kernel"]["layout"] == ("memset of 32-bit words" if g["dstPitch"] == row
                                                else "2D memset of 32-bit words")


def test_2d_copies_against_the_manifest():
    """copies_2d.py's device-to-device cuMemcpy2DAsync (manifest: WidthInBytes, Height, the
    pitches, and every destination read back): the call's CUDA_MEMCPY2D is in the capture
    (COPY_PARAMS, session 43), and the driver's kernel takes dst, src, the row's bytes, the
    rows and both pitches, grid ceil(row / 512) x Height. Each verified; the host ones ran on
    a copy engine (no kernel)."""
    gt = manifest("copies-2d")["ground_truth"]
    cases = [g for g in gt["cases"] if g["call"] == "cuMemcpy2DAsync"]
    assert [g["kind"] for g in cases] == ["DtoD", "DtoD", "HtoD", "DtoH"]
    m = model("copies-2d")
    runs = [(s, c) for s, c in driver_launches(m) if c["base"] == "cuMemcpy2DAsync"]
    assert len(runs) == 2
    calls = [c for c in m.api_calls if c["base"] == "cuMemcpy2DAsync"]
    assert [c["copy"]["WidthInBytes"] for c in calls] == [g["WidthInBytes"] for g in cases]
    for (s, c), g in zip(runs, cases[:2]):
        d, r, width, height, dpitch, spitch, reserved = struct.unpack("<7Q", params(s))
        assert (d, r, width, height, dpitch, spitch, reserved) == (
            g["dstDevice"], g["srcDevice"], g["WidthInBytes"], g["Height"], g["dstPitch"],
            g["srcPitch"], 0)
        assert s["grid"] == [-(-g["WidthInBytes"] // 512), g["Height"], 1]
        a = s["attribution"]
        assert a["verified"] is True and a["differences"] == [] and "grid" in a["checked"], a
        assert a["driver_kernel"]["layout"] == "2D copy"
        assert a["driver_kernel"]["rows"] == g["Height"]


# -- copy-sizes: which copy kernel each size and alignment runs -------------------------------

@pytest.mark.parametrize("name", ["copy-sizes", "copy-sizes-h200", "copy-sizes-unified"])
def test_copy_sizes_against_the_manifest(name):
    """copy_sizes.py, recorded on the H100 and on the H200 (and on the H200 with its copies
    made by cuMemcpyAsync, unified addressing, where they run the same kernels and splits:
    copy-sizes-unified): 26 device-to-device copies, each between its own buffers, every
    destination read back correct (manifest). dst, src and bytes all multiples of 4: the word
    kernel; a count that is not, from aligned addresses: the byte kernel below 0x400 B, the
    kernel of words and a tail from 0x401 B, and the blocks then the byte kernel above 1 MiB;
    an unaligned address: the byte kernel (0x1000, 0x1001 B). Each is verified, counts and
    tails as the call's bytes give them, except the two unaligned 1 MiB copies, which run
    kernels no recording explains: not checked."""
    gt = manifest(name)["ground_truth"]
    assert gt["destinations_wrong"] == 0 and len(gt["cases"]) == 26
    m = model(name)
    base = gt["cases"][0]["call"]
    assert base == ("cuMemcpyAsync" if name.endswith("unified") else "cuMemcpyDtoDAsync")
    calls = [c for c in m.api_calls if c["base"] == base]
    dst_src = ("dst", "src") if base == "cuMemcpyAsync" else ("dstDevice", "srcDevice")
    assert [(c["args"]["ByteCount"], c["args"][dst_src[0]], c["args"][dst_src[1]])
            for c in calls] == [(g["ByteCount"], g["dstDevice"], g["srcDevice"])
                                for g in gt["cases"]]
    ran = {}
    for s, c in driver_launches(m):
        ran.setdefault(c["index"], []).append(s)
    layouts = {}
    for c, g in zip(calls, gt["cases"]):
        n, dst, src = g["ByteCount"], g["dstDevice"], g["srcDevice"]
        launches = ran[c["index"]]
        if (dst % 4 or src % 4) and n >= 1 << 20:
            assert all(s["attribution"]["verified"] is None for s in launches)
            continue
        *blocks, s = launches
        raw = params(s)
        a = s["attribution"]
        assert a["verified"] is True and a["differences"] == [], (n, a)
        at = len(blocks) and n // 4096 * 4096
        rest = n - at
        if len(raw) == 40:
            d, r, reserved0, count, tail = struct.unpack("<QQQQQ", raw)
            assert (count, tail, reserved0) == (rest // 4, rest % 4, 0)
            assert s["grid"] == [-(-count // 256) + 1, 1, 1]
        else:
            d, r, count = struct.unpack("<QQQ", raw)
            words = not (n % 4 or dst % 4 or src % 4)
            assert count == (rest // 4 if words else rest)
            assert s["grid"] == [-(-count // 256), 1, 1]
        assert (d, r) == (dst + at, src + at)
        layouts[a["driver_kernel"]["layout"]] = layouts.get(a["driver_kernel"]["layout"], 0) + 1
    assert layouts == {"copy of bytes": 14, "copy of 32-bit words": 4,
                       "copy of words and a tail": 6}


# -- torch-copies: copies of 8 sizes, aligned and from 4 bytes in, split above 1 MiB ----------

def _copies():
    """{call index: (call, [launch summaries in order])} for torch-copies' copies."""
    out = {}
    for s, c in driver_launches(model("torch-copies")):
        out.setdefault(c["index"], (c, []))[1].append(s)
    return out


def test_torch_copies_against_the_manifest():
    """CUPTI saw 28 device-to-device copies and 10 memsets; every copy ran one or two driver
    kernels that cover its bytes exactly, in order (plain struct on constant bank 0), and the
    4-byte memsets ran none."""
    gt = manifest("torch-copies")["ground_truth"]["copies_memsets"]
    copies = _copies()
    assert len(copies) == gt["gpu_memcpy:Memcpy DtoD (Device -> Device)"] == 28
    m = model("torch-copies")
    memsets = [c for c in m.api_calls if c["base"] == "cuMemsetD8Async"]
    assert len(memsets) == gt["gpu_memset:Memset (Device)"] == 10
    assert not any(c["base"].startswith("cuMemset") for _, c in driver_launches(m))
    split = 0
    for c, launches in copies.values():
        n, dst, src = c["args"]["ByteCount"], c["args"]["dstDevice"], c["args"]["srcDevice"]
        at = 0
        for s in launches:
            raw = params(s)
            if len(raw) == 16:                      # 4096-byte blocks, no count
                d, r = struct.unpack("<QQ", raw)
                length = s["grid"][0] * 4096
            else:
                d, r, count = struct.unpack("<QQQ", raw)
                length = n - at if n - at < 4 else count * 4
            assert (d, r) == (dst + at, src + at)
            at += length
            assert s["attribution"]["verified"] is True, s["attribution"]
        assert at == n, (c["index"], n, at)
        split += len(launches) == 2
    assert split == 4


@pytest.mark.parametrize("record,fmt,index,field", [
    (1991, "<QQQ", 0, "dst"),       # the rest after 1023 blocks: dst + 0x3ff000
    (1991, "<QQQ", 2, "count"),
    (2097, "<QQQ", 1, "src"),
    (1990, "<QQ", 1, "src"),        # the blocks of the same copy
    (1268, "<QQQ", 2, "count"),     # 1 byte: count 1
])
def test_synthetic_changed_split_copy_fails(record, fmt, index, field):
    (s, c), = [(s, c) for s, c in driver_launches(model("torch-copies"))
               if s["record_index"] == record]
    assert D.check(fake_call(c), s, params(s))["verified"] is True
    _changed_word_fails(s, c, fmt, index, field)


def test_synthetic_changed_block_grid_fails():
    (s, c), = [(s, c) for s, c in driver_launches(model("torch-copies"))
               if s["record_index"] == 1990]
    out = D.check(fake_call(c), dict(s, grid=[1024, 1, 1]), params(s))
    assert out["verified"] is False
    assert out["differences"] == [{"field": "grid", "api": [1023, 1, 1], "qmd": [1024, 1, 1]}]


@pytest.mark.parametrize("record,change,why", [
    (1268, dict(ByteCount=4097), "was seen run as copy of words and a tail, not as the copy "
                                 "of bytes layout"),
    (1268, dict(ByteCount=0x80001), "no copy of 0x80001 B by cuMemcpyDtoDAsync"),
    (1798, dict(ByteCount=0x90000), "no copy of 0x90000 B by cuMemcpyDtoDAsync is in the "
                                    "recordings"),
    (1990, dict(ByteCount=0x2000000), "no copy of 0x2000000 B"),
    # an address off 4 B runs the byte kernel, seen for 0x1000 and 0x1001 B only
    (1798, dict(dstDevice=0x7fe6e7e48202), "no copy of 0xf9c B by cuMemcpyDtoDAsync"),
    (1798, dict(srcDevice=0x7fe6e7e00602), "no copy of 0xf9c B by cuMemcpyDtoDAsync"),
    (1984, dict(ByteCount=0x40000), "was seen run as copy of 32-bit words, not as the copy "
                                    "with no count layout"),
])
def test_synthetic_copy_outside_the_recordings_is_not_checked(record, change, why):
    (s, c), = [(s, c) for s, c in driver_launches(model("torch-copies"))
               if s["record_index"] == record]
    out = D.check(fake_call(c, **change), s, params(s))
    assert out["verified"] is None and out["differences"] == [] and why in out["why"], out


def test_calls_that_are_not_copies_or_memsets_are_left_to_attribution():
    assert D.check(SimpleNamespace(base="cuCtxSynchronize", args={}), {}, b"") is None


# -- the table ---------------------------------------------------------------------------------

def test_layout_table_lint():
    for key in ("repository", "path", "commit", "prefix"):
        assert D.PROVENANCE.get(key)
    names = [lay.name for lay in D.LAYOUTS]
    assert len(set(names)) == len(names)
    for lay in D.LAYOUTS:
        fields = [f.name for f in lay.fields]
        assert len(set(fields)) == len(fields) and fields[0] == "dst"
        assert D.PARAM_BYTES[lay.name] == sum(f.construct.sizeof() for f in lay.fields)
        assert all(f.holds in (None, "dst", "src", "value", "units", "tail", "pitch",
                               "src_pitch", "rows") for f in lay.fields)
        assert all(f.holds is None for f in lay.fields if f.name.startswith("reserved"))
        assert set(lay.calls) <= set(D.CALLS) and lay.seen
        assert ("units" in [f.holds for f in lay.fields]) == (lay.no_count is None)
        assert {call for _, _, call in lay.seen} == set(lay.calls)
        assert lay.align[0] % lay.unit == 0 or lay.unit % lay.align[0] == 0
        assert lay.blocks and all(len(b) == 3 for b in lay.blocks)
        assert lay.fits is None or set(lay.fits) <= set(D.FITS)
    for x in D.SPLITS:
        assert x.lo <= x.hi and {n for n, _ in x.parts} <= set(names) and x.seen
        assert {span for _, span in x.parts} in ({"all"}, {"blocks", "rest"})
    # no two ranges that may answer the same call overlap (a graph's MEMCPY node splits
    # otherwise than a stream's copy; whole 4096-byte blocks otherwise than other counts)
    for a in D.SPLITS:
        assert a.calls is None or set(a.calls) <= set(D.CALLS)
        # (None: every call but the 2D / 3D ones, which are named where seen)
        assert not set(D.split_calls(a)) & set(D.CALLS_2D) or a.calls is not None
        assert a.whole_blocks in (None, True, False)
        assert a.fits is None or set(a.fits) <= set(D.FITS)
        for b in D.SPLITS:
            same_calls = set(D.split_calls(a)) & set(D.split_calls(b))
            same_counts = (None in (a.whole_blocks, b.whole_blocks) or
                           a.whole_blocks == b.whole_blocks) and \
                (a.fits is None or b.fits is None or set(a.fits) & set(b.fits))
            assert a is b or a.operation != b.operation or not same_calls or \
                not same_counts or a.hi < b.lo or b.hi < a.lo
    # no two layouts answer the same (operation, parameter bytes, block) for one fit
    for fit in D.FITS:
        keys = [(lay.operation, D.PARAM_BYTES[lay.name], block) for lay in D.LAYOUTS
                for block in lay.blocks if lay.fits is None or fit in lay.fits]
        assert len(set(keys)) == len(keys), fit


@pytest.mark.parametrize("lay", D.LAYOUTS, ids=lambda lay: lay.name)
def test_every_seen_launch_named_in_the_table_is_in_its_capture(lay):
    """The provenance of each layout (capture, SUBMISSION record, call) is a real launch
    of that capture that matches the layout, and is verified."""
    for name, record, base in lay.seen:
        if base in (D.GRAPH_MEMCPY, D.GRAPH_MEMSET):
            # a graph's copy node: every such kernel of that replay's submission
            hits = [s for s in (l.summary for l in model(name).launches)
                    if s["record_index"] == record and s.get("attribution") and
                    (s["attribution"]["kernel"] or {}).get("name") ==
                    D.kernel_name(lay.operation, base)]
            assert hits, (name, record)
            for s in hits:
                assert s["attribution"]["driver_kernel"]["layout"] == lay.name
                assert s["attribution"]["verified"] is True
            continue
        hits = [(s, c) for s, c in driver_launches(model(name)) if s["record_index"] == record]
        assert len(hits) == 1, (name, record)
        s, c = hits[0]
        assert c["base"] == base
        assert s["attribution"]["driver_kernel"]["layout"] == lay.name
        assert s["attribution"]["verified"] is True


def test_docs_name_every_layout():
    text = (CAPTURES.parent / "docs" / "driver-kernels.md").read_text()
    for lay in D.LAYOUTS:
        assert lay.name in text
        for name, record, _ in lay.seen:
            assert name in text and f"({record})" in text, (name, record)


# -- rendering ---------------------------------------------------------------------------------

def test_report_tallies_driver_kernels_under_their_name():
    from tracer.cli_common import print_report
    out = io.StringIO()
    print_report(str(capture_file("jax-jit")), out, launch_limit=5)
    text = out.getvalue()
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\[driver .*\])$",
                      text, re.M)
    got = {(r[6], r[4]): tuple(map(int, r[:4])) for r in rows}
    assert got == {("[driver memset, cuMemsetD32Async]", "1024x1x1"): (70, 70, 0, 0),
                   ("[driver memset, cuMemsetD8Async]", "3x1x1"): (2, 2, 0, 0),
                   ("[driver copy, cuMemcpyDtoDAsync]", "256x1x1"): (1, 1, 0, 0),
                   ("[driver copy, cuMemcpyDtoDAsync]", "1x1x1"): (1, 1, 0, 0)}
    assert "-> [driver memset, cuMemsetD8Async]: verified (dst, value, count, grid)" in text


def test_report_shows_the_part_of_a_split_copy():
    from tracer.cli_common import print_report
    out = io.StringIO()
    print_report(str(capture_file("torch-copies")), out,
                 filters={"launches": (181, 183)})
    text = out.getvalue()
    assert "-> [driver copy, cuMemcpyDtoDAsync] [bytes 0x0..0x3ff000 of 0x3ffffc]: verified " \
           "(dst, src, grid); count not checked" in text
    assert "-> [driver copy, cuMemcpyDtoDAsync] [bytes 0x3ff000..0x3ffffc of 0x3ffffc]: " \
           "verified (dst, src, count, grid)" in text


def test_json_shows_the_name_and_the_checked_fields():
    import json
    from tracer.cli_common import print_report
    out = io.StringIO()
    print_report(str(capture_file("memcpy-memset")), out, as_json=True)
    doc = json.loads(out.getvalue())
    a = doc["launches"][3]["attribution"]
    assert a["kernel"]["name"] == "[driver memset, cuMemsetD8]"
    assert a["checked"] == ["dst", "value", "count", "grid"] and a["unchecked"] == []
    assert [x["field"] for x in a["args"]] == ["dst", "value", "reserved0", "count", "reserved1"]
    assert doc["stats"]["kernel_launches"]["verified"] == 2


def test_graph_copy_nodes_against_the_drivers_read_back():
    """graph_copies.py (captures/graph-copies): 6 MEMCPY nodes of 4 B to 16 MiB + 48 B, then
    2 stream-captured copies, each graph replayed 3 times. Per replay, the driver's copy
    kernels cover each node's bytes exactly once, from the node's src to its dst, as the
    driver reads the node back (cuGraphMemcpyNodeGetParams, manifest), read here from the
    parameter blocks with plain struct: a node of whole 4096-byte blocks from 1 MiB runs
    one 16-byte kernel (grid = bytes / 4096), any other count one kernel of 32-bit words
    (not the blocks-then-rest split of a stream's copy of the same count)."""
    gt = manifest("graph-copies")["ground_truth"]
    assert gt["destinations_wrong"] == [] and gt["output_unchanged"]
    m = model("graph-copies")
    calls = {c["index"]: c for c in m.api_calls}
    by_replay = {}
    for launch in m.launches:
        s = launch.summary
        a = s.get("attribution") or {}
        if s["kernel"] and (a.get("kernel") or {}).get("name") == \
                D.kernel_name("copy", D.GRAPH_MEMCPY):
            assert a["verified"] is True and a["differences"] == [], s["record_index"]
            by_replay.setdefault(s["api_call"]["index"], []).append(s)
    launches = [c for c in calls.values() if c["base"] == "cuGraphLaunch"]
    assert len(launches) == 2 * gt["replays"] and set(by_replay) == {c["index"] for c in launches}
    wanted = {name: sorted((n["dst"], n["src"], n["width"]) for n in g["read_back"])
              for name, g in gt["graphs"].items()}
    seen = []
    for index in sorted(by_replay):
        got = []
        for s in by_replay[index]:
            raw = params(s)
            if s["params"]["size"] == 16:
                dst, src = struct.unpack("<QQ", raw)
                n = s["grid"][0] * 4096
            else:
                dst, src, count = struct.unpack("<QQQ", raw)
                n = count * 4
                assert s["grid"] == [-(-count // 256), 1, 1]
            got.append((dst, src, n))
        seen.append(next(name for name, w in wanted.items() if sorted(got) == w))
        for dst, src, n in got:
            whole = n >= 1 << 20 and not n % 4096
            kinds = [s["params"]["size"] for s in by_replay[index] if
                     struct.unpack_from("<Q", params(s))[0] == dst]
            assert kinds == [16 if whole else 24], (n, kinds)
    assert seen == ["nodes"] * gt["replays"] + ["captured"] * gt["replays"]


def test_cdp_kernel_chained_after_parent_is_not_compared_with_the_call():
    """kernels/corpus_cdp.cu (H200, nvcc -rdc=true -lcudadevrt): parent<<<4, 32>>> launches
    child<<<1, 64>>> from each block on the GPU (the manifest's truth: the launch as passed,
    the four device-side ones, the sum right). libcuda sends parent's QMD with DEPENDENT_QMD
    pointing at a second kernel QMD (grid 1x1x1, block 1x1x1, another program): before,
    that QMD was compared with cuLaunchKernel and reported as a MISMATCH of grid, block and
    shared memory. It is the driver's, named as chained after parent, not checked, and says
    that parent's module has the device runtime: the child grids never reach the host's
    pushbuffer, so no launch of the capture is a child."""
    gt = manifest("cdp")["ground_truth"]
    assert gt["ok"] and len(gt["launches"]) == 1 and len(gt["device_launches"]) == 4
    m = model("cdp")
    assert not m.mismatched and not m.problems
    kernels = [l.summary for l in m.launches if l.summary["kernel"]]
    parent = [s for s in kernels if (s["attribution"]["kernel"] or {}).get("mangled") ==
              "_Z6parentPi"]
    assert len(parent) == 1
    p, want = parent[0], gt["launches"][0]
    assert p["verified"] is True and p["grid"] == want["grid"] and p["block"] == want["block"]
    chained = [s for s in kernels if s["qmd_address"] in
               {d["pointer"] for d in p["dependents"]}]
    assert len(chained) == 1
    c = chained[0]
    a = c["attribution"]
    assert c["program_address"] != p["program_address"]
    assert c["api_call"]["index"] == p["api_call"]["index"]
    assert a["kernel"]["name"] == "[driver kernel, chained after parent]"
    assert a["verified"] is None and a["differences"] == [] and c["verified"] is None
    assert a["driver_kernel"]["operation"] == "chained" and "device runtime" in a["why"]
    # the child grids ran on the GPU's own queue: none is in the capture
    assert not any("child" in ((s["attribution"]["kernel"] or {}).get("name") or "")
                   for s in kernels)
    assert m.verified["mismatched"] == 0
    # the device runtime's set-up kernel: its doorbell rang after cuLaunchKernel began
    # (record times) but before the shim wrote its API_ENTER (record order), while the
    # shim's parameter-layout lookup made libcuda load the module. It was unnamed ("outside
    # any bracketed API call"); it is the call's, as the driver's, not checked
    setup = [s for s in kernels if s is not p and s is not c]
    assert len(setup) == 1
    e = setup[0]
    call = next(x for x in m.api_calls if x["index"] == p["api_call"]["index"])
    sub = next(x for x in m.submissions if x["index"] == e["record_index"])
    assert e["record_index"] < call["index"] and call["t_start"] <= sub["t"] <= call["t_end"]
    assert sub["tid"] == call["tid"]
    a = e["attribution"]
    assert e["api_call"]["index"] == call["index"] and a["verified"] is None
    assert a["kernel"]["name"] == "[driver kernel, loading parent]"
    assert a["driver_kernel"]["operation"] == "module load" and "device runtime" in a["why"]
    assert e["program_address"] not in (p["program_address"], c["program_address"])
