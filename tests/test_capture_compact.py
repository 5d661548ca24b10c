"""The tracer's exit step (issue 17, decoders/capture/writer.py compact_capture): each
distinct module image stored once (format version 2: IMAGE_REF sections), then zstd. The
rewritten capture decodes to the same report as the shim's file; version 1 files still
decode (every committed capture is one: tests/test_golden_json.py)."""
import io
import json
import os
import shutil
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


def _trace_launch(tmp_path, *args, shim=None):
    devdir = tmp_path / "dev"
    devdir.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRACE_LAUNCH_DEVDIR=str(devdir))
    if shim is not None:
        env["TRACE_LAUNCH_SHIM"] = str(shim)
    return subprocess.run([sys.executable, "-c", "from tracer.cli import trace_launch; "
                           "trace_launch(prog_name='trace-launch')", *map(str, args)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)


def _shim(tmp_path):
    """The installed shim (tracer.shim_path: this checkout's build, the installed
    distribution's, an editable install's), else one built here as setup.py builds it."""
    from tracer import shim_path
    if shim_path().exists():
        return shim_path()
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no shim installed (pip install . builds tracer/libtracelaunch.so) and no "
                    "C compiler to build one")
    so = tmp_path / "libtracelaunch.so"
    flags = (ROOT / "shim/cflags").read_text().split()
    subprocess.run([cc, *flags, "-fPIC", "-shared", "-I", str(ROOT / "shim"), "-o", str(so),
                    str(ROOT / "shim/tracelaunch.c"), "-ldl", "-lpthread"], check=True)
    return so


def test_trace_launch_compresses_at_exit_unless_asked_not_to(tmp_path):
    shim = _shim(tmp_path)
    out = tmp_path / "out.tlc"
    res = _trace_launch(tmp_path, "-o", out, "--no-report", "/bin/true", shim=shim)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:4] == ZSTD_MAGIC and "zstd, " in res.stderr
    assert decode_capture(str(out)).end is not None
    res = _trace_launch(tmp_path, "-o", out, "--no-report", "--no-compress", "/bin/true",
                        shim=shim)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes()[:8] == F.TL_MAGIC and "zstd" not in res.stderr


# ---- fatbin entries for other GPUs left out (issue 17: a PyTorch script's capture) ----------

def _images(path):
    """[(IMAGE section flags, bytes)] of the first copy of each module image."""
    from decoders.cuda import api as A
    tag = A.SECTION_BY_NAME["IMAGE"]
    out = []
    with open_capture(str(path)) as f:
        for rec in CaptureReader(f).records():
            if rec.type == "API_ENTER" and rec.body is not None:
                out += [(s.flags, bytes(s.data)) for s in rec.body.sections if s.tag == tag]
    return out


def _whole_fatbin(flags, data):
    return not flags & 1 and data[:4] == b"\x50\xed\x55\xba"      # not TRUNCATED


def _with_gpus(tmp_path, name, gpus):
    from decoders.capture.writer import update_meta
    p = _copy(tmp_path, name)
    if gpus is not None:
        update_meta(p, compute_capabilities=gpus)
    return p


@pytest.mark.parametrize("name", ["jax-jit", "torch-eager"])
def test_other_gpus_entries_left_out_same_report(tmp_path, name):
    """jax-jit and torch-eager (H100, compute capability 9.0 in their manifests) load whole
    fatbins with cubins for sm_75 up to sm_120: at the exit step only what a 9.0 GPU can run
    stays (sm_90 cubins, PTX of compute_90 and below), byte for byte, and the report is the
    same as from the file with every entry, apart from the line that says so."""
    from decoders.cubin import fatbin as FB
    manifest = json.loads((ROOT / "captures" / name / "manifest.json").read_text())
    assert manifest["compute_capability"] == "9.0"
    (tmp_path / "all").mkdir()
    full = _with_gpus(tmp_path / "all", name, ["9.0"])     # as the shim wrote it
    cut = _with_gpus(tmp_path, name, ["9.0"])
    before, _ = _json(full)
    st = compact_capture(cut)
    assert st["entries_elided"] > 0 and st["bytes"] < st["raw_bytes"]
    after, model = _json(cut)
    assert after["stats"].pop("module_images_entries_elided") == model.images_elided > 0
    # what trace-launch adds to the model decoded while the program ran (the file as the
    # shim wrote it): its report then says what trace-decode of the rewritten file says
    assert before["stats"].pop("module_images_entries_elided") + st["images_elided"] == \
        model.images_elided
    assert after == before
    elided = [(fl, d) for fl, d in _images(cut) if fl & 0x10000]
    assert len(elided) == model.images_elided
    for _, d in elided:
        entries = FB.parse_fatbin(d, 0, decompress=False)
        assert {e.arch for e in entries} <= {"sm_90", "compute_90", "compute_75", "compute_80"}
        assert any(e.arch == "sm_90" for e in entries)
    # every sm_90 cubin of the original images is still there, unchanged
    want = {bytes(e.stored) for fl, d in _images(full) if _whole_fatbin(fl, d)
            for e in FB.parse_fatbin(d, 0, decompress=False) if e.arch == "sm_90"}
    have = {bytes(e.stored) for fl, d in _images(cut) if _whole_fatbin(fl, d)
            for e in FB.parse_fatbin(d, 0, decompress=False) if e.arch == "sm_90"}
    assert want and want == have


@pytest.mark.parametrize("gpus, keeps", [
    (["9.0"], {"sm_90"}),
    (["8.6"], {"sm_80", "sm_86"}),          # an sm_80 cubin runs on 8.6 too
    (["9.0", "8.0"], {"sm_80", "sm_90"}),   # two GPUs: what either runs
    (["12.0"], {"sm_120", "compute_120"}),
])
def test_entries_kept_are_what_the_gpus_run(gpus, keeps):
    """The rule on a real image (torch-eager's first whole fatbin: sm_75, sm_80, sm_86, sm_90,
    sm_100, sm_120 and compute_120): cubins of the GPU's major version up to its minor, PTX
    up to its version."""
    from decoders.cubin import fatbin as FB
    from decoders.cubin import image_for_gpus
    image = next(d for fl, d in _images_of("torch-eager") if _whole_fatbin(fl, d) and
                 "compute_120" in {e.arch for e in FB.parse_fatbin(d, 0, decompress=False)})
    sms = [int(g.split(".")[0]) * 10 + int(g.split(".")[1]) for g in gpus]
    new, dropped = image_for_gpus(image, sms)
    kept = [e.arch for e in FB.parse_fatbin(new, 0, decompress=False)]
    assert set(kept) == keeps
    before = FB.parse_fatbin(image, 0, decompress=False)
    assert sorted(a for a, _ in dropped) == sorted(e.arch for e in before if e.arch not in keeps)
    assert len(image) - len(new) == sum(n for _, n in dropped)


def _images_of(name, _cache={}):
    if name not in _cache:
        import tempfile
        from pathlib import Path
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "c.tlc"
            p.write_bytes(capture_bytes(name))
            _cache[name] = _images(p)
    return _cache[name]


def test_no_gpus_in_header_nothing_left_out(tmp_path):
    """A capture whose header does not name its GPUs (every committed one: recorded before
    the tracer wrote compute_capabilities) keeps every entry."""
    p = _with_gpus(tmp_path, "jax-jit", None)
    st = compact_capture(p)
    assert st["entries_elided"] == 0 and st["images"] > 0
    (tmp_path / "b").mkdir()
    st = compact_capture(_with_gpus(tmp_path / "b", "jax-jit", ["9.0"]), all_entries=True)
    assert st["entries_elided"] == 0


def test_shim_path_finds_an_editable_install(tmp_path, monkeypatch):
    """From a checkout with no shim built in it, shim_path() finds the one in the package
    directory an editable install maps `tracer` to (its meta path finder), as it finds the
    file a regular install's RECORD lists: the trace-launch tests were skipped there."""
    import importlib.machinery
    import tracer
    installed = tmp_path / "installed" / "tracer"
    installed.mkdir(parents=True)
    (installed / "libtracelaunch.so").write_bytes(b"\x7fELF")

    class Finder:           # what setuptools' __editable__ finder answers
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name != "tracer":
                return None
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(installed)]
            return spec
    monkeypatch.delenv("TRACE_LAUNCH_SHIM", raising=False)
    monkeypatch.setattr(tracer, "PACKAGE_DIR", tmp_path / "checkout")
    monkeypatch.setattr(sys, "meta_path", [Finder] + sys.meta_path)
    monkeypatch.setattr(tracer, "_installed_shims", lambda f=tracer._installed_shims: (
        p for p in f() if str(p).startswith(str(tmp_path))))
    assert tracer.shim_path() == installed / "libtracelaunch.so"
    monkeypatch.setattr(sys, "meta_path", sys.meta_path[1:])
    assert tracer.shim_path() == tmp_path / "checkout" / "libtracelaunch.so"   # none: expected


@pytest.mark.parametrize("compress", [True, False])
def test_exit_step_apart_is_the_exit_step(tmp_path, compress):
    """trace-launch runs the exit step in a process of its own beside a live decode
    (tracer/cli_launch.py _finish_capture_apart): the same stats, note and file as in this
    one."""
    from tracer.cli_launch import _exit_note, _finish_capture, _finish_capture_apart
    a, b = _copy(tmp_path, "multi-gpu"), tmp_path / "b.tlc"
    shutil.copy(a, b)
    st = _finish_capture(a, compress)
    assert _exit_note(st) and st == _finish_capture_apart(b, compress)
    assert a.read_bytes() == b.read_bytes()


def test_exit_step_apart_raises_what_the_exit_step_raises(tmp_path):
    """synthetic-header: a file that is no capture fails the exit step apart as it does here,
    as the reader's one line naming the offset (trace-launch's _guard prints it and exits
    2), and a missing file as OSError."""
    from decoders.errors import CaptureError, TraceLaunchError
    from tracer.cli_launch import _finish_capture, _finish_capture_apart
    bad = tmp_path / "bad.tlc"
    bad.write_bytes(b"TLC1" + b"\xff" * 4096)
    with pytest.raises(CaptureError) as here:
        _finish_capture(bad, True)
    assert "not a trace-launch capture" in str(here.value) and "offset 0x0" in str(here.value)
    assert "\n" not in str(here.value)
    with pytest.raises(TraceLaunchError) as apart:
        _finish_capture_apart(bad, True)
    assert str(here.value).splitlines()[-1] in str(apart.value)
    assert "\n" not in str(apart.value)
    with pytest.raises(OSError):
        _finish_capture_apart(tmp_path / "missing.tlc", True)


def test_the_image_budget_counts_what_the_exit_step_keeps(tmp_path, monkeypatch):
    """A decode counts each module image against its budget as the exit step keeps it (the
    fatbin entries the capture's GPUs may run): the capture as the shim wrote it spends the
    budget as its rewritten file does. Before, a library-heavy job's live decode passed 128
    MiB on cubins for other GPU generations (held-out mix3), and its report lost cubins and
    its decode in blocks. torch-eager's 23 distinct images: 5,495,656 bytes whole, counted
    5,292,384 for a 9.0 GPU (the 21 kept in a file as image_for_gpus() leaves them, the 2
    kept in memory whole: memory stays bounded whatever entries an image claims). The
    whole lengths of those kept in a file have a limit of their own (SPILLED_IMAGES)."""
    from decoders.capture.writer import update_meta
    from decoders.cubin import bytes_in_use, image_for_gpus
    from decoders.session import budget, decode_capture
    for fl, d in _images_of("torch-eager"):
        if _whole_fatbin(fl, d):
            assert bytes_in_use(d, [90]) == len(image_for_gpus(bytes(d), [90])[0]) < len(d)
    monkeypatch.setattr(budget, "KEPT_IMAGES", 5_400_000)
    (tmp_path / "unknown").mkdir()
    known = _with_gpus(tmp_path, "torch-eager", ["9.0"])
    unknown = _copy(tmp_path / "unknown", "torch-eager")
    update_meta(unknown, compute_capabilities=[])       # (no GPU said: every entry counts)
    over = [[str(e) for e in decode_capture(p, brief=2).problems
             if "module images pass" in str(e)] for p in (known, unknown)]
    assert over[0] == [] and len(over[1]) == 1
    monkeypatch.setattr(budget, "SPILLED_IMAGES", 5_000_000)     # (under 5,484,432)
    over = [str(e) for e in decode_capture(known, brief=2).problems
            if "module images pass" in str(e)]
    assert len(over) == 1 and "pass 4 MiB as recorded" in over[0]
