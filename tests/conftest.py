"""Shared fixtures: the recorded captures, decompressed once per session, and an independent
record walker (plain struct.unpack, not the reader under test) to know where records lie."""
import importlib.util
import json
import os
import struct
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"

# Decodes run in this process unless a test asks for a split one (tests/test_split_decode.py
# compares the two on every shape of capture): many tests change the decoder's classes
# with monkeypatch, which a front process (decoders/session/split.py) would not see. The same
# for a decode in blocks (decoders/session/shard.py: by default on a machine of 8 CPUs or
# more), which tests/test_shard.py asks for on every capture.
os.environ.setdefault("TRACE_LAUNCH_SPLIT", "0")
os.environ.setdefault("TRACE_LAUNCH_SHARDS", "1")
# A capture is captures/<name>/capture.tlc.gz, or capture.tlc.zst where zstd keeps a large one
# small (ddp-2rank: its manifest's `storage`).
CAPTURE_FILES = ("capture.tlc.gz", "capture.tlc.zst")


def capture_file(name):
    """captures/<name>'s capture file (a Path; the .gz one where neither exists)."""
    for f in CAPTURE_FILES:
        if (CAPTURES / name / f).exists():
            return CAPTURES / name / f
    return CAPTURES / name / CAPTURE_FILES[0]


ALL = sorted(p.name for p in CAPTURES.glob("*/") if capture_file(p.name).exists())
# ~800 records, ~1 MiB each; launch-loop-10k (17 MiB) is only read where a test needs every capture.
SMALL = [n for n in ALL if n != "launch-loop-10k"]

HEADER_FIXED = 56          # TL_FILE_HEADER_PREFIX, counted by hand from docs/capture-format.md
RECORD_HEADER = 40
SYNC = 0x52434C54          # "TLCR"


def capture_path(name):
    """captures/<name>'s capture file as a string; the test is skipped where it is absent."""
    path = capture_file(name)
    if not path.exists():
        pytest.skip(f"captures/{name} not present")
    return str(path)


def plain(obj):
    """Containers without construct's bookkeeping (keys starting with _), for comparing parses."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    return obj


@lru_cache(maxsize=None)
def bench_module(name):
    """bench/<name>.py as a module (bench/ is not a package; its own imports of bench/
    modules find them on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def manifest(name):
    return json.loads((CAPTURES / name / "manifest.json").read_text())


@lru_cache(maxsize=None)
def capture_bytes(name):
    """The decompressed capture of captures/<name>/."""
    from decoders.capture.files import open_capture
    with open_capture(capture_file(name)) as f:
        return f.read()


@lru_cache(maxsize=None)
def record_spans(name):
    """[(offset, length, type)] of every record of captures/<name>, walked with
    struct.unpack alone."""
    return walk_spans(capture_bytes(name), name)


def walk_spans(data, name="capture"):
    """[(offset, length, type)] of every record of a capture's bytes, walked with
    struct.unpack alone."""
    header_size = struct.unpack_from("<I", data, 12)[0]
    spans = []
    off = header_size
    while off + RECORD_HEADER <= len(data):
        sync, length, rtype = struct.unpack_from("<IIH", data, off)
        assert sync == SYNC, f"{name}: no sync word at {off:#x}"
        spans.append((off, length, rtype))
        off += length
    assert off == len(data), f"{name}: records end at {off:#x}, file at {len(data):#x}"
    return tuple(spans)


@pytest.fixture(scope="session")
def capture_files(tmp_path_factory):
    """name -> path of an uncompressed copy of each capture (session-scoped, in tmp)."""
    d = tmp_path_factory.mktemp("captures")
    out = {}
    for name in ALL:
        p = d / f"{name}.tlc"
        p.write_bytes(capture_bytes(name))
        out[name] = p
    return out


@pytest.fixture
def write_synthetic(tmp_path):
    """Write bytes to tmp as synthetic-<name>.tlc and return the path."""
    def write(name, data):
        p = tmp_path / f"synthetic-{name}.tlc"
        p.write_bytes(data)
        return p
    return write


def marker_program(tmp_path):
    """A fake-devices directory and a shell program that touches a marker when it runs:
    (script, marker, devdir) for trace-launch runs that need no GPU."""
    devdir = tmp_path / "dev"
    devdir.mkdir()
    marker = tmp_path / "ran"
    script = tmp_path / "prog.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    return script, marker, devdir
