"""A decode split over two processes (decoders/session/split.py, front.py) gives the model a
decode in one process gives: the JSON with every field and the brief text report, byte for
byte, on real recordings of every shape (several processes, graphs, conditional nodes,
programmatic dependent launches, a program killed mid-run, a kernel fault, copies). Where
the front cannot follow (a capture window, a front that died, a capture whose records the
two readers would frame apart), the decode goes on in one process and says why."""
import io
import os
import threading

import pytest

from conftest import CAPTURES, capture_bytes, capture_file, record_spans
from decoders.capture import format as F
from decoders.session import decode_capture, split
from tracer.report import render_json, render_text


def _outputs(model):
    js, text = io.StringIO(), io.StringIO()
    render_json(model, js)
    render_text(model, text, launch_limit=200)
    return js.getvalue(), text.getvalue()


def _both(path, **kw):
    one = decode_capture(path, split=False, **kw)
    two = decode_capture(path, split=True, **kw)
    assert one.split is None
    return one, two


@pytest.mark.parametrize("name", [
    "launch-loop-10k", "ddp-2rank", "jax-train", "jax-loops", "cond-nodes", "pdl",
    "torch-graph", "graph-replay", "sigkill", "kernel-fault", "copy-sizes", "multi-gpu",
    "torch-libs", "peer-copy"])
def test_split_gives_the_same_model(capture_files, name):
    one, two = _both(capture_files[name])
    assert two.split == "front"
    assert _outputs(two) == _outputs(one)
    assert [str(p) for p in two.problems] == [str(p) for p in one.problems]


def test_split_brief_decode(capture_files):
    """What trace-launch's report reads: a brief decode (the first launches kept)."""
    one, two = _both(capture_files["launch-loop-10k"], brief=200)
    assert two.split == "front"
    texts = []
    for model in (one, two):
        out = io.StringIO()
        render_text(model, out, launch_limit=200)
        texts.append(out.getvalue())
    assert texts[1] == texts[0]


def test_window_capture_decodes_in_one_process(capture_files):
    one, two = _both(capture_files["torch-window-launches"])
    assert two.split.startswith("one process: a capture with windows")
    assert _outputs(two) == _outputs(one)


def test_front_that_dies_leaves_one_process(capture_files, monkeypatch):
    start = split.Front.__init__

    def dying(self, *a, **k):
        start(self, *a, **k)
        self.proc.kill()
    monkeypatch.setattr(split.Front, "__init__", dying)
    one, two = _both(capture_files["two-streams"])
    assert two.split.startswith("one process: the decode's front process ended early")
    assert _outputs(two) == _outputs(one)


def _corrupt(tmp_path, name, kind, at=0.5):
    """captures/<name> with the body of one record of `kind` (about `at` into the capture)
    filled with 0xff: synthetic, for the readers' framing."""
    data = bytearray(capture_bytes(name))
    spans = [s for s in record_spans(name) if s[2] == F.TL_REC_BY_NAME[kind]]
    off, length, _ = spans[int(len(spans) * at)]
    data[off + F.TL_RECORD_HEADER_SIZE:off + length] = b"\xff" * (length -
                                                                 F.TL_RECORD_HEADER_SIZE)
    path = tmp_path / f"{name}-{kind}.tlc"
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("kind", ["SUBMISSION", "API_ENTER", "API_EXIT", "IOCTL"])
def test_corrupt_record_gives_the_same_model(tmp_path, kind):
    """A record whose fields do not fit its frame: one reader parses it and the other may
    not (the front passes over API records unparsed): the model is still the one-process
    model, problems and all."""
    path = _corrupt(tmp_path, "launch-loop-10k", kind)
    one, two = _both(path)
    assert one.problems
    assert _outputs(two) == _outputs(one)
    assert [str(p) for p in two.problems] == [str(p) for p in one.problems]


@pytest.mark.parametrize("name,at", [("launch-loop-10k", 0.5), ("launch-loop-10k", 1.0),
                                     ("ddp-2rank", 0.7), ("jax-train", 0.9)])
def test_capture_cut_short_stays_split(tmp_path, name, at):
    """A capture that ends inside a record (a job killed, a recording stopped: the held-out
    FSDP job of 200 steps) was decoded twice, the second time in one process, because the
    front's reader had found a problem. Both readers find the same one, at the same offset:
    the decode stays split, and its model is the one-process model. (Synthetic: a real
    recording cut `at` into one of its records.)"""
    data = capture_bytes(name)
    spans = record_spans(name)
    off, length, _ = spans[min(int(len(spans) * at), len(spans) - 1)]
    path = tmp_path / f"{name}-cut.tlc"
    path.write_bytes(data[:off + length // 2])
    one, two = _both(str(path))
    assert any("truncated" in str(p) for p in one.problems), one.problems
    assert two.split == "front"
    assert _outputs(two) == _outputs(one)
    assert [str(p) for p in two.problems] == [str(p) for p in one.problems]


def test_live_split_equals_offline(tmp_path):
    """A capture read while it is written (trace-launch's decode): the front reads it too,
    and both read to the end once the writers are done."""
    from tests.test_live_decode import decode_while_written
    live, path = decode_while_written(tmp_path, "launch-loop-10k", 7, split=True)
    offline = decode_capture(path, split=False)
    live.header = offline.header        # read at the start: the cursor has moved since
    assert live.split == "front"
    assert _outputs(live) == _outputs(offline)


def test_wanted_by_size(tmp_path, monkeypatch):
    monkeypatch.delenv("TRACE_LAUNCH_SPLIT", raising=False)
    small = tmp_path / "small.tlc"
    small.write_bytes(b"\0" * 1024)
    big = tmp_path / "big.tlc"
    with open(big, "wb") as f:
        f.truncate(split.SPLIT_MIN_BYTES)
    cpus = len(os.sched_getaffinity(0))
    assert not split.wanted(str(small))
    assert split.wanted(str(big)) == (cpus >= 2)
    monkeypatch.setenv("TRACE_LAUNCH_SPLIT", "0")
    assert not split.wanted(str(big))
    monkeypatch.setenv("TRACE_LAUNCH_SPLIT", "1")
    assert split.wanted(str(small))


def test_wanted_by_gzip_size(tmp_path, monkeypatch):
    """A gzip capture is split by the size it holds where its trailer says more than the
    estimate: captures/launch-loop-10k packs 20.6 MB into 0.9 MB (8 times 0.9 is under
    SPLIT_MIN_BYTES)."""
    import gzip
    monkeypatch.delenv("TRACE_LAUNCH_SPLIT", raising=False)
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: never split")
    loop = capture_file("launch-loop-10k")
    assert loop.stat().st_size * split.COMPRESSION < split.SPLIT_MIN_BYTES
    assert split.wanted(str(loop))
    zeros = tmp_path / "zeros.tlc.gz"      # ISIZE under the limit, and the estimate too
    zeros.write_bytes(gzip.compress(bytes(split.SPLIT_MIN_BYTES - 1)))
    assert not split.wanted(str(zeros))


def _messages(fd):
    """Every (kind, payload) the front's wire format holds on `fd`, to its end."""
    import marshal
    from decoders.session.front import _LEN
    out, buf = [], b""
    while True:
        data = os.read(fd, 1 << 16)
        if not data:
            break
        buf += data
    while buf:
        (n,) = _LEN.unpack(buf[:_LEN.size])
        out.append(marshal.loads(buf[_LEN.size:_LEN.size + n]))
        buf = buf[_LEN.size + n:]
    return out


def test_front_sender_keeps_order_and_its_bound():
    """The front's writes go in a thread of their own (front.Sender): every message arrives,
    in order, and no more than QUEUED bytes wait behind a reader that is slow to start."""
    from decoders.session.front import Sender
    r, w = os.pipe()
    sender = Sender(w)
    sender.QUEUED = 1 << 16
    most = [0]
    put = sender.put

    def watched(kind, payload):
        put(kind, payload)
        most[0] = max(most[0], sender._bytes)
    sender.put = watched
    got = []
    # the reader starts late: the pipe and then the queue fill to its bound, and put() waits
    reader = threading.Timer(0.5, lambda: got.extend(_messages(r)))
    reader.start()
    payloads = [(0, list(range(k, k + 500))) for k in range(200)]
    for kind, payload in payloads:
        sender.put(kind, payload)
    sender.close()
    os.close(w)
    reader.join()
    os.close(r)
    assert got == payloads
    one = len(__import__("decoders.session.front", fromlist=["_message"])._message(*payloads[0]))
    assert sender.QUEUED // 2 < most[0] <= sender.QUEUED + one


def test_front_sender_raises_when_the_reader_is_gone():
    """The decoding process went on without the front (its end of the pipe closed): the
    front's next put() raises BrokenPipeError (front.main returns 1), never hangs."""
    from decoders.session.front import Sender
    r, w = os.pipe()
    os.close(r)
    sender = Sender(w)
    with pytest.raises(BrokenPipeError):
        for _ in range(1000):
            sender.put(0, [1, 2, 3])
        sender.close()
    os.close(w)
