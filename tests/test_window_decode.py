"""The decode of a capture window (decoders/window.py), on real H100 recordings cut the way
the shim cuts them (shim/window.c) by `emulate_window` below: synthetic windows over real
pushbuffers. Every launch decoded inside the window must be the launch the whole capture
decodes for the same API call (kernel, grid, block, verified, QMD), and the window must add
no problem: its start resyncs each channel's stream, the submissions it left out are holes
the decoder does not report, and a graph replayed inside it runs the node QMDs written by
the calls kept outside it (instantiate, upload, the exec's first launch).

The shim's own filtering is tested on the simulated device (tests/test_shim_window.py);
the real windows of a PyTorch loop, when recorded, by tests/test_window_real.py."""
import struct

import pytest

from conftest import CAPTURES, capture_bytes, capture_file
from decoders.capture import format as F
from decoders.capture.writer import update_meta
from decoders.cuda.api import BY_NAME, BY_SLOT, window_role
from decoders.session import decode_capture

HDR = struct.Struct("<IIHHIIIQQ")       # TL_RECORD_HEADER
REC = {v: k for k, v in F.TL_REC.items()}


def _records(data):
    off = struct.unpack_from("<I", data, 12)[0]
    while off + HDR.size <= len(data):
        sync, length, rtype = struct.unpack_from("<IIH", data, off)
        assert sync == F.TL_RECORD_SYNC
        yield off, data[off:off + length]
        off += length


def _window_record(edge, pid, tid, t, ordinal):
    body = F.TL_WINDOW.build(dict(edge=edge, trigger=3, ordinal=ordinal, call=0, launches=0,
                                  submissions_skipped=0, api_calls_skipped=0, name_len=8,
                                  reserved0=0, name=b"emulated"))
    return HDR.pack(F.TL_RECORD_SYNC, HDR.size + len(body), REC["WINDOW"], F.TL_RF_COMPLETE, pid,
                    tid, 0, t, t) + body


def emulate_window(data, first, last):
    """The capture `data` as the shim records it with a window from the API call numbered
    `first` to the one numbered `last` (0-based, in entry order; every call of the capture
    is an outermost one): what shim/window.c keeps and drops outside the window, by each
    call's role (decoders/cuda/api.py window_role), with WINDOW records at the edges. A launch
    that rang no doorbell stands for one into a stream being captured (kept anywhere)."""
    out = bytearray(data[:struct.unpack_from("<I", data, 12)[0]])
    rang, open_calls, n = set(), {}, -1       # calls whose thread rang a doorbell inside them
    for _, rec in _records(data):
        rtype, pid, tid = struct.unpack_from("<H", rec, 8)[0], *struct.unpack_from("<II", rec, 12)
        if rtype == REC["API_ENTER"]:
            n += 1
            open_calls[(pid, tid)] = n
        elif rtype == REC["API_EXIT"]:
            open_calls.pop((pid, tid), None)
        elif rtype == REC["SUBMISSION"] and (pid, tid) in open_calls:
            rang.add(open_calls[(pid, tid)])
    opened = False
    call_no = -1
    deciding = {}           # (pid, tid) -> (kept?, submissions: "keep"/"drop"/"follow")
    launched = set()        # graph execs launched since their instantiate/update
    end_at = None
    for off, rec in _records(data):
        _, length, rtype, flags, pid, tid, seq, t0, t1 = HDR.unpack_from(rec)
        name = F.TL_REC.get(rtype)
        keep = True
        if name == "API_ENTER":
            slot, call = struct.unpack_from("<II", rec, HDR.size)
            call_no += 1
            if call_no == first:
                out += _window_record(1, pid, tid, t0, first)
                opened = True
            f = BY_SLOT[slot]
            role = window_role(f)
            exec_ = struct.unpack_from("<Q", rec, HDR.size + 16)[0] if f.params else 0
            sub = "follow"
            if role in ("LAUNCH", "WORK"):
                keep = opened
                sub = "keep" if keep else "drop"
                if role == "LAUNCH" and not keep and call_no not in rang:
                    keep, sub = True, "follow"
            elif role == "GRAPH_LAUNCH":
                first_launch = exec_ not in launched
                launched.add(exec_)
                keep = opened or first_launch
                sub = "keep" if keep else "drop"
            elif role == "GRAPH_PREPARE":
                sub = "keep"
                if f.kind != "OUT0":
                    launched.discard(exec_)
            deciding[(pid, tid)] = (keep, sub, call_no)
        elif name == "API_EXIT":
            keep, _, n = deciding.pop((pid, tid))
            body = F.TL_API.parse(rec[HDR.size:])
            if BY_SLOT[body.slot].name.startswith("cuGraphInstantiate"):
                out_sec = [s for s in body.sections if s.tag == 8]
                if out_sec:
                    launched.discard(struct.unpack_from("<Q", bytes(out_sec[0].data))[0])
            if keep:
                out += rec
            if n == last:
                out += _window_record(2, pid, tid, t1, last)
                opened = False
            continue
        elif name == "SUBMISSION":
            d = deciding.get((pid, tid))
            sub = d[1] if d else "follow"
            keep = sub == "keep" or (sub == "follow" and opened)
        elif name == "END":
            end_at = len(out)
        if keep:
            out += rec
    assert end_at is not None
    struct.pack_into("<Q", out, 16, len(out))                       # header cursor
    struct.pack_into("<Q", out, end_at + HDR.size + 8, end_at)      # END's own offset
    return bytes(out)


def _launches(model):
    """(API call t_start, name) -> [(kernel, grid, block, verified, QMD bytes)] of each call."""
    out = {}
    for launch in model.launches:
        s = launch.summary
        call = s.get("api_call")
        if not s["kernel"] or call is None:
            continue
        k = (s.get("attribution") or {}).get("kernel") or {}
        out.setdefault((call["t_start"], call["name"]), []).append(
            (k.get("name"), s["grid"], s["block"], s.get("verified"), launch.qmd_bytes))
    return out


def _calls(data):
    return [BY_SLOT[struct.unpack_from("<I", rec, HDR.size)[0]].name
            for _, rec in _records(data) if struct.unpack_from("<H", rec, 8)[0] == REC["API_ENTER"]]


def _check(tmp_path, name, first, last, min_inside):
    raw = capture_bytes(name)
    full = decode_capture(str(capture_file(name)))
    cut = emulate_window(raw, first, last)
    path = tmp_path / f"{name}-window.tlc"
    path.write_bytes(cut)
    # what trace-launch writes in the header (tracer/run.py); the ordinals are API calls here
    update_meta(path, capture_range={"kind": "launches", "skip": first, "count": last - first + 1})
    win = decode_capture(str(path))
    assert [str(p) for p in win.problems] == [str(p) for p in full.problems]
    (w,) = win.windows
    assert w["opened"] and w["closed"]
    want, got = _launches(full), _launches(win)
    inside = {}
    for launch in win.launches:
        s = launch.summary
        if s["kernel"] and s.get("window") == "inside":
            call = s["api_call"]
            inside.setdefault((call["t_start"], call["name"]), 0)
    assert len(inside) >= min_inside
    for key in inside:
        assert got[key] == want[key], key
    assert w["launches_inside"] == sum(1 for l in win.launches if l.summary.get("window") == "inside")
    # every call in the window is kept, and so is every bookkeeping call outside it
    # the calls in the window are all kept, and so are the bookkeeping ones outside it
    calls, kept = _calls(raw), _calls(cut)
    assert len(kept) < len(calls)
    bookkeeping = [c for i, c in enumerate(calls) if first <= i <= last or
                   window_role(BY_NAME[c]) not in ("LAUNCH", "WORK", "GRAPH_LAUNCH")]
    assert _is_subsequence(bookkeeping, kept)
    return full, win


def _is_subsequence(a, b):
    it = iter(b)
    return all(x in it for x in a)


def test_window_in_a_launch_loop(tmp_path):
    """launch-loop-10k: calls 5000-5019 of 10,104, the middle of the loop."""
    full, win = _check(tmp_path, "launch-loop-10k", 5000, 5019, 20)
    assert len(win.submissions) < 50 < len(full.submissions)
    assert sum(1 for l in win.launches if l.summary["kernel"]) == 20


def test_window_in_pytorch_eager(tmp_path):
    """torch-eager: from the 30th call on, past cuBLAS's launch (cuLaunchKernelEx) and the
    library loads kept outside."""
    _check(tmp_path, "torch-eager", 30, 90, 10)


@pytest.mark.parametrize("name, launch", [("graph-replay", 2), ("torch-graph", 2)])
def test_window_on_a_graph_replay(tmp_path, name, launch):
    """The window holds only the graph's last replay: its nodes run the QMDs written at the
    instantiate and the first replay, both kept outside the window."""
    raw = capture_bytes(name)
    calls = _calls(raw)
    n = [i for i, c in enumerate(calls) if c == "cuGraphLaunch"][launch]
    full, win = _check(tmp_path, name, n, n, 1)
    outside = [l for l in win.launches if l.summary.get("window") == "outside"]
    assert outside, "the first replay's launches, kept for its QMDs, are marked outside"


def _body(token, words, va=0x200800000):
    """A SUBMISSION body with one segment holding `words` (synthetic)."""
    from decoders.pushbuf import pack_words
    data = pack_words(words)
    entry = (va & 0xFFFFFFFFFC) | (len(words) << 42)
    raw = F.TL_SUBMISSION.build(dict(
        token=token, hClient=1, hChannel=0x100 + token, hClass=0xC86F, gp_put_prev=0, gp_put=1,
        gp_entries=16, flags=F.TL_SUB_CHANNEL_KNOWN, gpfifo_va=0, doorbell_addr=0, rip=0,
        nentries=1, nsegments=1, lost=0, insn_len=0, entries=[entry],
        segments=[dict(va=va, size=len(data), flags=F.TL_SF_COPIED, data=data)]))
    return F.TL_SUBMISSION.parse(raw)


def test_resync_drops_a_sequence_cut_by_the_window():
    """Synthetic: a segment ends inside an INC sequence (5 data words announced, 1 there) on
    two channels; the window resyncs channel 0xa only. Its next segment decodes as its own
    packets and nothing is reported; channel 0xb carries the sequence on, as without a
    window, and the end of the capture reports it."""
    from decoders.submissions import SubmissionDecoder
    from decoders.pushbuf import INC, StreamDecoder, encode
    cut = encode(INC, 1, 0x200, [1, 2, 3, 4, 5])[:2]
    dec = SubmissionDecoder()
    for token in (0xA, 0xB):
        dec.feed(1, _body(token, cut))
    dec.resync(_body(0xA, []))
    for token in (0xA, 0xB):
        dec.feed(2, _body(token, encode(INC, 1, 0x204, [7])))
    problems = [str(p) for p in dec.finish().problems]
    assert len(problems) == 1 and "channel token 0xb" in problems[0] and \
        "stream ends inside" in problems[0], problems
    s = StreamDecoder()
    s.feed_raw(pack(cut))
    s.resync()
    (pkt,) = s.feed_raw(pack(encode(INC, 1, 0x204, [7])))
    assert (pkt[4], tuple(pkt[5])) == (0x204, (7,))
    assert s.finish() == []


def pack(words):
    from decoders.pushbuf import pack_words
    return pack_words(words)


def test_report_and_json_say_what_the_window_was(tmp_path):
    """The text report's "capture window" section and the JSON's `windows` (validated
    against docs/json-schema.json), on the launch loop's emulated window."""
    import io
    import json
    from tests.test_json_schema import _schema, validate
    from tracer.cli_common import print_report
    raw = capture_bytes("launch-loop-10k")
    path = tmp_path / "w.tlc"
    path.write_bytes(emulate_window(raw, 5000, 5019))
    update_meta(path, capture_range={"kind": "launches", "skip": 4998, "count": 20})
    out = io.StringIO()
    assert print_report(str(path), out, as_json=True) == 0
    doc = json.loads(out.getvalue())
    assert validate(doc, _schema()) == []
    (w,) = doc["windows"]
    assert (w["opened"], w["closed"], w["trigger"], w["launches_inside"]) == (True, True, "LAUNCHES", 40)
    assert w["begin"]["ordinal"] == 5000 and w["end"]["ordinal"] == 5019
    assert {l["window"] for l in doc["launches"]} == {"inside"}
    out = io.StringIO()
    assert print_report(str(path), out, color=False) == 0
    text = out.getvalue()
    section = text.split("capture window\n", 1)[1].split("\n\n", 1)[0]
    assert "asked    kernel launch calls 4999 to 5018" in section
    assert "opened at record" in section and "closed at record" in section
    assert "launches decoded 40 inside, 0 outside" in section
