"""`trace-decode diff` (decoders/diff.py) on the two recordings that differ only in the grid:
captures/builtin-vadd (manifest: vadd, grid [4096,1,1], block [256,1,1], n = 1048576) and
captures/builtin-vadd-grid123 (manifest: the same launch with --grid 123; notes "for diffs
against grid 4096"). Truth comes from the manifests: grid differs, block, n, signature and
param_info are equal, the args a, b, c are allocation addresses and differ."""
import json
from functools import lru_cache

import pytest
from click.testing import CliRunner

from conftest import CAPTURES, capture_file, manifest
from decoders.diff import default_launch, diff_launches
from decoders.session import decode_capture
from tracer.cli import trace_decode

A, B = "builtin-vadd", "builtin-vadd-grid123"


@lru_cache(maxsize=None)
def model(name):
    return decode_capture(str(capture_file(name)))


def _runner():
    try:
        return CliRunner(mix_stderr=False)      # click < 8.2
    except TypeError:
        return CliRunner()


def _truth():
    ta, tb = manifest(A)["ground_truth"], manifest(B)["ground_truth"]
    assert ta["grid"] == [4096, 1, 1] and tb["grid"] == [123, 1, 1]
    for key in ("block", "n", "signature", "param_info", "shared_mem_dynamic", "kernel"):
        assert ta[key] == tb[key], key
    assert ta["args"]["n"] == tb["args"]["n"]
    assert all(ta["args"][k] != tb["args"][k] for k in ("a", "b", "c"))
    return ta, tb


def test_default_is_the_marked_launch():
    """Launches 0..3: GRID_NULL + a 512x512 driver kernel (record 788), then GRID_NULL + vadd
    (record 790, between the cuLaunchKernel marks). The default is vadd in both."""
    ta, tb = _truth()
    for name, truth in ((A, ta), (B, tb)):
        n = default_launch(model(name))
        assert n == 3
        assert model(name).launches[n].summary["grid"] == truth["grid"]


def test_grid_diff_exactly():
    ta, tb = _truth()
    diffs = diff_launches(model(A), 3, model(B), 3)
    values = {(d.group, d.name): (d.a, d.b) for d in diffs if not d.address}
    # 64 bits just below global_memory_descriptor (0x208) differ between any two runs and
    # are no address of either capture (above 2^48): a per-process value of the driver,
    # not grid-derived, reported as it is. Its values are new in every recording.
    per_run = {k: values.pop(k) for k in (("cbank0", "cbank0[0x200]"), ("cbank0", "cbank0[0x204]"))}
    assert all(a != b for a, b in per_run.values())
    assert values == {
        # the QMD's grid: manifest grid[0] 4096 -> 123 (block, registers, smem are equal)
        ("qmd", "GRID_WIDTH"): (ta["grid"][0], tb["grid"][0]),
        # the driver's copy of gridDim.x in constant bank 0 (ARCH_CBANK0 sm_90: 0xc), read
        # by the kernel's blockIdx/gridDim code
        ("cbank0", "cbank0[0xc] gridDim.x"): (ta["grid"][0], tb["grid"][0]),
        # a second, unnamed driver word holding the grid width (same values, both runs)
        ("cbank0", "cbank0[0x15c]"): (ta["grid"][0], tb["grid"][0]),
    }
    # n (param 3 at offset 24) is equal: no difference at cbank0[0x210+0x18]
    assert not any(d.name == "cbank0[0x210+0x18]" for d in diffs)
    # the pointer params a, b, c (offsets 0, 8, 16) differ, and only as addresses
    addr = {d.name: (d.a, d.b) for d in diffs if d.address}
    for k, arg in enumerate(("a", "b", "c")):
        lo = f"cbank0[0x210+{8 * k:#x}]"
        hi = f"cbank0[0x210+{8 * k + 4:#x}]"
        assert addr[lo] == (ta["args"][arg] & 0xFFFFFFFF, tb["args"][arg] & 0xFFFFFFFF)
        assert addr[hi] == (ta["args"][arg] >> 32, tb["args"][arg] >> 32)
    # every address difference is an address field, a cbank0 pointer word, or the
    # inline-upload destination (OFFSET_OUT*): nothing else changed in the method stream
    assert {d.group for d in diffs if d.address} == {"qmd", "cbank0", "method"}
    assert all("ADDR" in d.name for d in diffs if d.address and d.group == "qmd")
    assert all("OFFSET_OUT" in d.name for d in diffs if d.group == "method")


def test_same_launch_no_differences():
    assert diff_launches(model(A), 3, model(A), 3) == []


def test_two_launches_of_one_capture():
    """Launch 1 (driver kernel, grid 512 block 512) against launch 3 (vadd) of builtin-vadd."""
    diffs = {d.name: (d.a, d.b) for d in diff_launches(model(A), 1, model(A), 3)
             if d.group == "qmd"}
    assert diffs["GRID_WIDTH"] == (512, 4096)
    assert diffs["CTA_THREAD_DIMENSION0"] == (512, 256)


def test_cli_text(capture_files):
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), str(capture_files[B])])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "launch 3" in lines[0] and "grid 4096x1x1" in lines[0]
    assert "grid 123x1x1" in lines[1]
    assert lines[2] == "qmd GRID_WIDTH: 4096 -> 123"
    assert "cbank0[0xc] gridDim.x: 0x1000 -> 0x7b" in lines
    head = lines.index(next(l for l in lines if l.startswith("addresses (")))
    assert all(l.startswith("  ") for l in lines[head + 1:])
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), str(capture_files[B]),
                                          "--ignore-addresses"])
    assert not any(l.startswith("addresses") for l in res.stdout.splitlines())
    assert len(res.stdout.splitlines()) == 2 + 5


def test_cli_json_and_launch_options(capture_files):
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), "--launch", "1",
                                          "--launch", "3", "--json"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["a"]["launch"] == 1 and doc["b"]["launch"] == 3
    assert doc["a"]["capture"] == doc["b"]["capture"]
    grid = [d for d in doc["differences"] if d["name"] == "GRID_WIDTH"]
    assert grid == [{"group": "qmd", "name": "GRID_WIDTH", "a": 512, "b": 4096, "address": False}]
    same = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), str(capture_files[A])])
    assert same.exit_code == 0 and "no differences" in same.stdout


@pytest.mark.parametrize("args,message", [
    (["--launch", "7"], "no launch 7"),
])
def test_cli_errors_one_line(capture_files, args, message):
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A])] + args)
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trace-decode: ") and message in lines[0]


def test_cli_bad_second_capture_names_it(capture_files, write_synthetic):
    bad = write_synthetic("not-a-capture", b"garbage" * 10)
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), str(bad)])
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert str(bad) in line and "offset 0x0" in line and "Traceback" not in line
    res = _runner().invoke(trace_decode, ["diff", str(capture_files[A]), "--launch", "1",
                                          "--launch", "2", "--launch", "3"])
    assert res.exit_code == 2
