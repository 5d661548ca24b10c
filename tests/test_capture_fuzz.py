"""Fuzz (STYLE 22): recordings mutated (random bytes after a valid header, truncations, bit
flips, records spliced from two captures) never make decode_capture raise anything but
CaptureError/TraceLaunchError/OSError, and never make trace-decode print a traceback: it
exits 2 with an offset on every stderr line when there is a problem, and every record
before the first damaged byte is still decoded. Inputs are synthetic-*.

The bases are windows of real captures (the process start, the first ioctls, a stretch of
submissions with the launch, END) so that one example decodes in tens of milliseconds."""
import io
import json
import re
import struct

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import RECORD_HEADER, capture_bytes, record_spans
from decoders.capture import format as F
from decoders.capture.reader import CaptureReader
from decoders.errors import TraceLaunchError
from decoders.session import decode_capture
from tracer.cli import trace_decode
from tracer.report import render_text, to_json

OFFSET = re.compile(r"offset 0x[0-9a-f]+")
SUBMISSION = F.TL_REC_BY_NAME["SUBMISSION"]


def _records(name):
    data = capture_bytes(name)
    return [data[off:off + length] for off, length, _ in record_spans(name)]


def _window(name, head=40, subs=40):
    """Record bytes: the first `head` records, `subs` records around the last submission
    (the marked launch), and END."""
    recs = _records(name)
    spans = record_spans(name)
    last_sub = max(i for i, s in enumerate(spans) if s[2] == SUBMISSION)
    return recs[:head] + recs[max(head, last_sub - subs + 3):last_sub + 3] + recs[-1:]


def _capture(name, records):
    """A capture: the recording's own header (cursor set to the new end) + records."""
    data = capture_bytes(name)
    header = bytearray(data[:F.TL_HEADER_SIZE])
    body = b"".join(records)
    header[16:24] = struct.pack("<Q", F.TL_HEADER_SIZE + len(body))
    return bytes(header) + body


BASES = {n: _window(n) for n in ("builtin-vadd", "launch-shapes", "runtime-vadd")}
BASE_FILES = {n: _capture(n, recs) for n, recs in BASES.items()}


class Case(tuple):
    """(bytes, offset of the first damaged byte or None), with a short repr: hypothesis
    prints failing examples, and a capture is 100 kB. derandomize=True replays them."""

    def __repr__(self):
        data, damaged = self
        return f"Case({len(data)} bytes, first damage at {damaged})"


@st.composite
def mutated(draw):
    return Case(draw(_mutated()))


@st.composite
def _mutated(draw):
    kind = draw(st.sampled_from(["random", "truncate", "flip", "splice", "splice-flip"]))
    name = draw(st.sampled_from(sorted(BASES)))
    base = BASE_FILES[name]
    if kind == "random":
        tail = draw(st.binary(max_size=4096))
        if draw(st.booleans()):     # random bodies behind valid sync words
            tail = b"".join(struct.pack("<IIH", F.TL_RECORD_SYNC, 40 + 8 * (len(c) // 8),
                                        draw(st.integers(0, 15))) + bytes(30) + c[:8 * (len(c) // 8)]
                            for c in draw(st.lists(st.binary(max_size=300), max_size=8)))
        return base[:F.TL_HEADER_SIZE] + tail, F.TL_HEADER_SIZE
    if kind == "truncate":
        cut = draw(st.integers(0, len(base)))
        return base[:cut], cut
    if kind in ("splice", "splice-flip"):
        other = draw(st.sampled_from(sorted(BASES)))
        pool = BASES[name] + BASES[other]
        picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=60))
        data = _capture(name, [pool[i] for i in picks])
        if kind == "splice":
            return data, None
        base = data
    flips = draw(st.lists(st.tuples(st.integers(0, len(base) - 1), st.integers(0, 7)),
                          min_size=1, max_size=8))
    if draw(st.booleans()):         # aim at record headers, where framing lives
        starts = [i for i in range(F.TL_HEADER_SIZE, len(base) - 12, 8)
                  if base[i:i + 4] == F.TL_RECORD_SYNC.to_bytes(4, "little")]
        flips = [(draw(st.sampled_from(starts)) + pos % 12, bit) for pos, bit in flips]
    data = bytearray(base)
    for pos, bit in flips:
        data[pos] ^= 1 << bit
    return bytes(data), min(pos for pos, _ in flips)


def _intact(data, damaged):
    """Offsets of the whole records that lie before the first damaged byte."""
    out = []
    off = F.TL_HEADER_SIZE
    while off + RECORD_HEADER <= len(data):
        sync, length = struct.unpack_from("<II", data, off)
        if sync != F.TL_RECORD_SYNC or length < RECORD_HEADER or off + length > len(data):
            break
        if damaged is not None and off + length > damaged:
            break
        out.append(off)
        off += length
    return out


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_decode_capture_never_raises_foreign_errors(tmp_path_factory, case):
    data, damaged = case
    path = tmp_path_factory.mktemp("fuzz") / "synthetic-fuzz.tlc"
    path.write_bytes(data)
    try:
        model = decode_capture(path)
    except (TraceLaunchError, OSError) as exc:
        assert OFFSET.search(str(exc)), str(exc)
        return
    for p in model.problems:
        assert isinstance(p, TraceLaunchError) and OFFSET.search(str(p)), repr(p)
    reader = CaptureReader(io.BytesIO(data))
    offsets = [r.offset for r in reader.records()]
    if damaged is None or damaged >= F.TL_HEADER_SIZE:
        intact = _intact(data, damaged)
        assert offsets[:len(intact)] == intact
    render_text(model, io.StringIO(), show_ioctls=True, show_objects=True, show_stats=True)
    json.dumps(to_json(model), default=str)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_cli_never_prints_a_traceback(tmp_path_factory, case):
    data, damaged = case
    path = tmp_path_factory.mktemp("fuzz") / "synthetic-fuzz.tlc"
    path.write_bytes(data)
    for args in ([path], [path, "--json"]):
        res = CliRunner().invoke(trace_decode, [str(a) for a in args])
        assert "Traceback" not in res.output
        assert res.exception is None or isinstance(res.exception, SystemExit), \
            repr(res.exception)
        assert res.exit_code in (0, 2)
        if res.exit_code == 2:
            lines = res.stderr.strip().splitlines()
            assert lines and all(OFFSET.search(line) for line in lines), lines
        else:
            assert res.stderr == ""
