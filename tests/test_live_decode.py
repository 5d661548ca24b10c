"""Decoding a capture while it is written (decoders/capture/live.py, tracer/live.py): a
writer thread replays a real recording the way the shim writes, reserving each record by
moving the header's cursor, writing it with type 0 and publishing it later, some out of
order, with the file grown ahead in zeros; the live decode must give the model an offline
decode of the finished file gives, whatever was unpublished when the reader got there."""
import io
import os
import random
import struct
import threading
import time

import pytest

from conftest import capture_bytes, record_spans
from decoders.capture import format as F
from decoders.capture.live import LiveCapture
from decoders.session import decode_capture
from tests.test_shim import shim  # noqa: F401  (the session-built shim fixture)
from tracer.report import render_json


def _offset(con, name):
    off = 0
    for sc in con.subcons:
        if sc.name == name:
            return off
        off += sc.sizeof()
    raise KeyError(name)


TYPE_AT = _offset(F.TL_RECORD_HEADER, "type")


def _json(model):
    out = io.StringIO()
    render_json(model, out)
    return out.getvalue()


def _writer(path, data, spans, done, rng, never=()):
    """Replay `data` into `path` record by record; records in `never` stay unpublished."""
    header_size = struct.unpack_from("<I", data, 12)[0]
    fd = os.open(path, os.O_RDWR)
    try:
        os.pwrite(fd, data[:header_size], 0)
        os.pwrite(fd, struct.pack("<Q", header_size), F.TL_CURSOR_OFFSET)
        os.ftruncate(fd, len(data) + (1 << 20))          # grown ahead, as the shim does
        pending = []
        for k, (off, length, _) in enumerate(spans):
            rec = bytearray(data[off:off + length])
            rtype = bytes(rec[TYPE_AT:TYPE_AT + 2])
            rec[TYPE_AT:TYPE_AT + 2] = b"\0\0"
            os.pwrite(fd, struct.pack("<Q", off + length), F.TL_CURSOR_OFFSET)   # reserve
            os.pwrite(fd, bytes(rec), off)
            if k not in never:
                pending.append((off, rtype))
            rng.shuffle(pending)                # publish in any order, a few at a time
            while len(pending) > rng.randrange(0, 4):
                at, t = pending.pop()
                os.pwrite(fd, t, at + TYPE_AT)
            if rng.random() < 0.02:
                time.sleep(0.002)
        for at, t in pending:
            os.pwrite(fd, t, at + TYPE_AT)
        os.ftruncate(fd, len(data))             # append_end cuts the file to its records
    finally:
        os.close(fd)
        done.set()


def decode_while_written(tmp_path, name, seed, never=(), **kw):
    """(decode_capture's model of the capture `name` read while _writer replays it into a
    new file, that file's path as a str); `kw` go to decode_capture."""
    data = capture_bytes(name)
    spans = record_spans(name)
    path = tmp_path / f"{name}.tlc"
    path.write_bytes(b"")
    done = threading.Event()
    fd = os.open(path, os.O_RDONLY)
    w = threading.Thread(target=_writer, args=(path, data, spans, done, random.Random(seed),
                                               set(never)))
    w.start()
    try:
        return decode_capture(str(path), stream=LiveCapture(fd, done, poll_s=0.001),
                              **kw), str(path)
    finally:
        w.join()
        os.close(fd)


@pytest.mark.parametrize("name, seed, never", [
    ("runtime-vadd", 1, ()), ("torch-small", 2, ()), ("two-streams", 3, (40,)),
    ("launch-loop-10k", 4, ())])
def test_live_decode_equals_offline(tmp_path, name, seed, never):
    live, path = decode_while_written(tmp_path, name, seed, never)
    offline = decode_capture(path)
    live.header = offline.header            # read at the start, the cursor has moved since
    assert _json(live) == _json(offline)
    assert [str(p) for p in live.problems] == [str(p) for p in offline.problems]


def test_unpublished_record_waits_for_the_end(tmp_path):
    """A record left unpublished (type 0: its writer died) stops what the reader is handed
    until the program is over; then the reader sees it as an offline decode does."""
    data = capture_bytes("runtime-vadd")
    spans = record_spans("runtime-vadd")
    path = tmp_path / "c.tlc"
    path.write_bytes(b"")
    done = threading.Event()
    w = threading.Thread(target=_writer, args=(path, data, spans[:10], threading.Event(),
                                               random.Random(0), {5}))
    w.start()
    w.join()
    fd = os.open(path, os.O_RDONLY)
    try:
        stream = LiveCapture(fd, done, poll_s=0.001)
        got = stream.read(1 << 20)
        assert len(got) == spans[5][0]          # the header and records 0..4, no further
        t = threading.Timer(0.05, done.set)
        t.start()
        rest = stream.read(1 << 20)             # blocks until `done`, then reads on
        assert done.is_set() and rest[:4] == data[spans[5][0]:spans[5][0] + 4]
        while chunk := stream.read(1 << 20):
            rest += chunk
        assert len(got) + len(rest) == os.fstat(fd).st_size
    finally:
        os.close(fd)


def test_trace_launch_reports_from_the_live_decode(tmp_path, shim):  # noqa: F811
    """trace-launch with the live decode forced on (TRACE_LAUNCH_LIVE=1) over a program run
    under the shim (fake devices): its --json report is what trace-decode --json of the
    finished capture says; with it off, the same."""
    import json
    import subprocess
    import sys

    from conftest import ROOT, marker_program
    script, marker, devdir = marker_program(tmp_path)
    docs = []
    for live in ("1", "0"):
        out = tmp_path / f"live{live}.tlc"
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, TRACE_LAUNCH_DEVDIR=str(devdir), PYTHONPATH=path,
                   TRACE_LAUNCH_SHIM=str(shim), TRACE_LAUNCH_LIVE=live)
        res = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-launch", "--json",
                              "-o", str(out), "sh", "-c", f"{script}; {script}"],
                             capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
        assert res.returncode == 0 and marker.exists(), res.stderr
        report = json.loads(res.stderr[res.stderr.index("{"):])
        dec = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", "--json",
                              str(out)], capture_output=True, text=True, env=env, timeout=120)
        assert report == json.loads(dec.stdout)
        assert report["stats"]["processes"] >= 2 and report["stats"]["records"] > 0
        docs.append(report)


def test_run_traced_live_model(tmp_path, shim, monkeypatch):  # noqa: F811
    """The model trace-launch reports from is the one decoded during the run (not a decode
    of the file afterwards), and it equals the file's."""
    from conftest import marker_program
    from tracer.live import LiveDecode
    from tracer.run import open_output, run_traced
    script, marker, devdir = marker_program(tmp_path)
    monkeypatch.setenv("TRACE_LAUNCH_SHIM", str(shim))
    out = open_output(tmp_path / "c.tlc")
    held = []

    def follow(capture):
        held.append(LiveDecode(capture).start())
        return held[0]
    rc = run_traced(["sh", "-c", f"{script}; {script}"], out, live=follow,
                    env=dict(os.environ, TRACE_LAUNCH_DEVDIR=str(devdir)))
    assert rc == 0 and marker.exists()
    (watch,) = held
    assert watch.error is None and watch.model is not None and watch.finished.is_set()
    offline = decode_capture(str(out))
    watch.model.header = offline.header
    assert _json(watch.model) == _json(offline) and offline.records > 0


def test_live_decode_shows_progress_once_the_program_exited(tmp_path, monkeypatch):
    """tracer/live.py: the decode left when the program has exited draws a progress line
    (issue 24: the report never waits silently), over the capture file's bytes, and ends
    at the whole file; before finish() (the program still running) nothing is drawn."""
    from tracer import live, progress
    data = capture_bytes("runtime-vadd")
    path = tmp_path / "c.tlc"
    path.write_bytes(data)
    drawn = []

    class Recorder(progress.Bar):
        def __init__(self, label, **kw):
            super().__init__(label, delay=0)
            self.on = True

        def __call__(self, done, total=None):
            drawn.append((self.label, done, total))

        def close(self):
            drawn.append("closed")
    monkeypatch.setattr(progress, "Bar", Recorder)
    monkeypatch.setenv("TRACE_LAUNCH_LIVE", "1")

    class Output:
        fd = os.open(path, os.O_RDONLY)

        def __str__(self):
            return str(path)
    out = Output()
    ld = live.LiveDecode(out)
    ld._progress(1, 2)                  # the program still runs: no line
    assert drawn == []
    ld.start()
    model = ld.finish()
    os.close(out.fd)
    assert model is not None and len(model.launches) == len(decode_capture(path).launches)
    assert drawn[-1] == "closed"
    lines = [d for d in drawn if d != "closed"]
    assert lines and lines[-1][0].startswith("trace-launch: program exited")
    assert lines[-1][1] == lines[-1][2] == len(data)


def test_exit_step_beside_the_decode_returns_or_raises_what_it_did():
    """tracer/cli_launch.py _beside: trace-launch's exit step runs in a thread beside the live
    decode's tail; waiting for it gives its result, or raises its error in the waiter (where
    _guard turns it into one line, as when it ran in the main thread)."""
    import threading

    from decoders.errors import CaptureError
    from tracer.cli_launch import _beside
    started = threading.Event()

    def step():
        started.set()
        return " (zstd, 10 -> 5 B)"
    wait = _beside(step)
    assert started.wait(5) and wait() == " (zstd, 10 -> 5 B)"

    def broken():
        raise CaptureError("capture cut short", offset=0x40)
    wait = _beside(broken)
    with pytest.raises(CaptureError, match="cut short"):
        wait()
