"""`trace-decode pushbuffer DUMP --json` gives `launches` (issue 16, unfinished from the
launch-decoding issue): each with grid, block, cluster and params hex, as
`trace-decode CAPTURE --json` does. Dumps are the pushbuffer segments of the recordings'
SUBMISSION records (bytes cut from captures/launch-shapes and builtin-vadd); the truth is
the manifest's ground truth, taken at capture time."""
import io
import json
import subprocess
import sys

import pytest

from conftest import ROOT, capture_bytes, manifest
from decoders.capture import format as F
from decoders.capture.reader import CaptureReader
from decoders.pushbuf import decode_dump


def _segments(name):
    """[(va, bytes)] of every copied pushbuffer segment, in capture order."""
    out = []
    for rec in CaptureReader(io.BytesIO(capture_bytes(name))).records():
        if rec.type == "SUBMISSION":
            for s in rec.body.segments:
                if s.flags & F.TL_SF_COPIED and s.size:
                    out.append((s.va, bytes(s.data)[:s.size]))
    return out


def _kernel_launches(name):
    found = []
    for va, seg in _segments(name):
        doc = json.loads(decode_dump(seg, "hopper", va=va).to_json())
        found += [l for l in doc["launches"] if l["kernel"]]
    return found


def _truth(name):
    """[{grid, block, cluster, param_bytes or None}] from the manifest (its layouts differ:
    launch-shapes lists launches with their bytes, builtin-vadd is one launch with its
    argument values, two-streams lists grid and block)."""
    import struct
    g = manifest(name)["ground_truth"]
    if isinstance(g["launches"], list):
        return [dict(grid=l["grid"], block=l["block"], cluster=l.get("cluster"),
                     param_bytes=l.get("param_bytes")) for l in g["launches"]]
    a = g["args"]
    return [dict(grid=g["grid"], block=g["block"], cluster=g["cluster"],
                 param_bytes=struct.pack("<QQQi", a["a"], a["b"], a["c"], a["n"]).hex())]


@pytest.mark.parametrize("name", ["launch-shapes", "builtin-vadd", "two-streams"])
def test_dump_launches_match_ground_truth(name):
    truth = _truth(name)
    found = _kernel_launches(name)
    if name == "builtin-vadd":
        # the manifest's truth is the marked vadd launch, the capture's last; the launch
        # before it (grid 512) is the driver's kernel for cuMemsetD32 (record 804)
        found = found[-1:]
    assert len(found) == len(truth), (len(found), len(truth))
    for got, want in zip(found, truth):
        assert got["grid"] == want["grid"], (got["grid"], want)
        assert got["block"] == want["block"], (got["block"], want)
        assert (got["cluster"] or None) == (want["cluster"] or None), (got["cluster"], want)
        if want["param_bytes"]:
            assert got["params"]["hex"].startswith(want["param_bytes"]), (got["params"], want)


def test_dump_launches_equal_capture_launches():
    """The same summaries as the capture decode: grid, block, cluster, params, QMD fields."""
    from decoders.session import decode_capture
    from tracer.report import to_json
    cap = [l for l in to_json(decode_capture(ROOT / "captures" / "launch-shapes" /
                                             "capture.tlc.gz"))["launches"] if l["kernel"]]
    dump = _kernel_launches("launch-shapes")
    assert len(cap) == len(dump)
    for a, b in zip(cap, dump):
        for key in ("grid", "block", "cluster", "params", "qmd_address", "qmd_version",
                    "shared_memory_bytes", "registers", "program_address", "qmd_fields"):
            assert a[key] == b[key], key


def test_cli_pushbuffer_json_has_launches(tmp_path):
    va, seg = next((va, s) for va, s in _segments("builtin-vadd")
                   if any(l["kernel"] and l["grid"] == [4096, 1, 1] for l in
                          json.loads(decode_dump(s, va=va).to_json())["launches"]))
    dump = tmp_path / "segment.bin"           # bytes cut from builtin-vadd's SUBMISSION
    dump.write_bytes(seg)
    r = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", "pushbuffer",
                        str(dump), "--gpu", "hopper", "--va", hex(va), "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (k,) = [l for l in doc["launches"] if l["kernel"]]
    want = _truth("builtin-vadd")[0]
    assert k["grid"] == want["grid"] and k["block"] == want["block"]
    assert k["params"]["hex"].startswith(want["param_bytes"])
    assert doc["packets"] and doc["problems"] == []
    r = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", "pushbuffer",
                        str(dump), "--gpu", "hopper", "--va", hex(va)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "launches (2)" in r.stdout and "grid 4096x1x1, block 256x1x1" in r.stdout, r.stdout[-2000:]
