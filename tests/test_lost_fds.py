"""A process that submits work after the capture says it closed every NVIDIA device fd it
held. Its RM client goes with its last fd, and its channels with it, so the capture lost
records: a shim before the vfork fix (shim/tracelaunch.c I22) recorded the closes of
Python's subprocess child as its parent's and recorded none of the parent's later ioctls
or mmaps (captures/torch-compile and captures/triton-add were re-recorded for it). The
decode says so, once per process, naming the records; no committed capture has one."""
import pytest
from construct import Container

from decoders.capture import format as F
from decoders.session import decode_capture
from tests.conftest import ALL, capture_bytes, capture_path, walk_spans
from tests.test_graph_walks import _records, _write

CLOSE, OPEN, SUBMISSION = (F.TL_REC_BY_NAME[k] for k in ("CLOSE", "OPEN", "SUBMISSION"))


def _submits_after_all_closed(data):
    """[(pid, record of the CLOSE that left it no device fd, record of its next
    SUBMISSION)], the first of each process, walked from the raw records (the format's
    structs only)."""
    held, submitted, closed, found = {}, set(), {}, []
    for index, (off, length, rtype) in enumerate(walk_spans(data)):
        if rtype not in (OPEN, CLOSE, SUBMISSION):
            continue
        pid = F.TL_RECORD_HEADER.parse(data[off:off + F.TL_RECORD_HEADER_SIZE]).pid
        body = data[off + F.TL_RECORD_HEADER_SIZE:off + length]
        if rtype == SUBMISSION:
            submitted.add(pid)
            if pid in closed:
                found.append((pid, closed.pop(pid), index))
                held[pid] = None        # said once per process
        elif held.setdefault(pid, set()) is None:
            continue
        elif rtype == OPEN:
            held[pid].add(F.TL_OPEN.parse(body).fd)
        else:
            fds = held[pid]
            fd = F.TL_CLOSE.parse(body).fd
            if fd in fds:
                fds.discard(fd)
                if not fds and pid in submitted:
                    closed[pid] = index
    return found


@pytest.mark.parametrize("name", [n for n in ALL if n != "launch-loop-10k"])
def test_no_committed_capture_submits_after_its_fds_closed(name):
    assert _submits_after_all_closed(capture_bytes(name)) == []


def test_submission_after_every_fd_closed_is_one_problem(tmp_path):
    """captures/triton-add (H100) with the closes a pre-fix shim wrote: after the main
    process's first submission, a CLOSE of every device fd it held then, under its pid
    (what the vfork child's close_range left). Written as synthetic-vfork-closes.tlc."""
    head, recs = _records("triton-add")
    first = next(i for i, (h, _) in enumerate(recs) if h.type == SUBMISSION)
    pid = recs[first][0].pid
    held = []
    for h, body in recs[:first]:
        if h.pid == pid and h.type == OPEN:
            held.append(F.TL_OPEN.parse(body).fd)
        elif h.pid == pid and h.type == CLOSE and F.TL_CLOSE.parse(body).fd in held:
            held.remove(F.TL_CLOSE.parse(body).fd)
    assert len(held) >= 3
    template = recs[first][0]
    closes = [[Container(dict(template, type=CLOSE)), F.TL_CLOSE.build(dict(fd=fd, ret=0))] for fd in held]
    recs[first + 1:first + 1] = closes
    path = _write(tmp_path / "synthetic-vfork-closes.tlc", head, recs)
    found = _submits_after_all_closed(path.read_bytes())
    last_close = first + len(held)
    assert [(p, c) for p, c, _ in found] == [(pid, last_close)]
    next_sub = found[0][2]
    said = [str(p) for p in decode_capture(str(path)).problems if "submits work" in str(p)]
    assert len(said) == 1, said
    assert said[0].startswith(f"pid {pid} submits work at record {next_sub} after every NVIDIA "
                              f"device fd it held was recorded closed (record {last_close})")
    assert not [p for p in decode_capture(capture_path("triton-add")).problems]
