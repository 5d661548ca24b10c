"""The tracer's exit step (issue 17, decoders/capture/writer.py compact_capture): each
distinct module image stored once (format version 2: IMAGE_REF sections), then zstd. The
rewritten capture decodes to the same report as the shim's file; version 1 files still
decode (every committed capture is one: tests/test_golden_json.py)."""
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, capture_bytes
from decoders.capture import format as F
from decoders.capture.reader import ZSTD_MAGIC, CaptureReader, open_capture
from decoders.capture.writer import compact_capture
from decoders.session import decode_capture
from tracer.report import render_json


def _json(path, keep=256):
    out = io.StringIO()
    model = decode_capture(str(path), keep=keep)
    render_json(model, out)
    doc = json.loads(out.getvalue())
    doc["meta"]["header"].pop("version")
    doc["meta"]["header"].pop("cursor")
    doc["meta"].pop("capture")
    return doc, model


def _copy(tmp_path, name):
    p = tmp_path / f"{name}.tlc"
    p.write_bytes(capture_bytes(name))
    return p


@pytest.mark.parametrize("keep", [256, 0])      # 0: every API call spilled and restored
def test_repeated_image_stored_once_same_report(tmp_path, keep):
    """multi-gpu loads one 3,848-byte image on each of two GPUs: the second becomes a
    16-byte IMAGE_REF, and the report is the same (both launches verified from it)."""
    p = _copy(tmp_path, "multi-gpu")
    before, _ = _json(p, keep)
    st = compact_capture(p, compress=False)
    assert st["images"] == 2 and st["images_repeated"] == 1
    assert st["raw_bytes"] - st["bytes"] == 3848 - 16 and st["bytes"] == os.path.getsize(p)
    with open(p, "rb") as f:
        reader = CaptureReader(f)
        assert reader.header.version == F.TL_VERSION_IMAGE_REFS
        assert reader.header.cursor == os.path.getsize(p)
        assert sum(1 for _ in reader.records()) and not reader.problems
    after, model = _json(p, keep)
    assert after == before
    loads = [c for c in model.api_calls if c["name"] == "cuModuleLoadData"]
    assert [c["image_bytes"] for c in loads] == [3848, 3848]
    assert model.verified["verified"] == 2 and not model.problems


@pytest.mark.parametrize("name", ["runtime-vadd", "torch-small", "sigkill"])
def test_compressed_capture_decodes_the_same(tmp_path, name):
    p = _copy(tmp_path, name)
    before, _ = _json(p)
    st = compact_capture(p)
    assert p.read_bytes()[:4] == ZSTD_MAGIC and st["bytes"] == os.path.getsize(p)
    assert st["bytes"] * 4 < st["raw_bytes"]
    assert oct(os.stat(p).st_mode & 0o777) == "0o600"
    after, _ = _json(p)
    assert after == before


def test_a_reference_to_no_image_is_one_problem(tmp_path):
    p = _copy(tmp_path, "multi-gpu")
    compact_capture(p, compress=False)
    data = bytearray(p.read_bytes())
    with open(p, "rb") as f:        # the record holding the reference
        [at] = [r.offset for r in CaptureReader(f).records() if r.type == "API_ENTER" and
                any(s["tag"] == 256 for s in r.body["sections"])]
    ref = data.find(b"\x00\x01\x00\x00\x10\x00\x00\x00", at)      # tag 256, size 16
    assert at < ref < at + 256
    data[ref + 16:ref + 24] = (12345678).to_bytes(8, "little")   # names no record
    p.write_bytes(bytes(data))
    model = decode_capture(str(p))
    msgs = [str(x) for x in model.problems]
    assert len(msgs) == 1 and "IMAGE_REF names no earlier record" in msgs[0], msgs
    # both launches still verified against their calls; only the first has its cubin's
    # shared memory size (the second module's image is the unresolved reference)
    checked = [l.summary["attribution"]["checked"] for l in model.launches
               if l.summary.get("attribution") and l.summary["attribution"]["kernel"]]
    assert ["shared_memory_bytes" in c for c in checked] == [True, False]


def test_version_3_is_refused_with_one_line(tmp_path):
    p = _copy(tmp_path, "runtime-vadd")
    data = bytearray(p.read_bytes())
    data[8:12] = (3).to_bytes(4, "little")
    p.write_bytes(bytes(data))
    with pytest.raises(Exception) as e, open_capture(p) as f:
        CaptureReader(f)
    assert "version 3" in str(e.value) and "1, 2" in str(e.value)


def _trace_launch(tmp_path, *args):
    devdir = tmp_path / "dev"
    devdir.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRACE_LAUNCH_DEVDIR=str(devdir))
    return subprocess.run([sys.executable, "-c", "from tracer.cli import trace_launch; "
                           "trace_launch(prog_name='trace-launch')", *map(str, args)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


def test_trace_launch_compresses_at_exit_unless_asked_not_to(tmp_path):
    from tracer import shim_path
    if not shim_path().exists():
        pytest.skip("shim not built here (pip install . builds tracer/libtracelaunch.so)")
    out = tmp_path / "out.tlc"
    res = _trace_launch(tmp_path, "-o", out, "--no-report", "/bin/true")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:4] == ZSTD_MAGIC and "zstd, " in res.stderr
    assert decode_capture(str(out)).end is not None
    res = _trace_launch(tmp_path, "-o", out, "--no-report", "--no-compress", "/bin/true")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:8] == F.TL_MAGIC and "zstd" not in res.stderr
