"""The work of the launch path does not grow with the length of the run (issue 24): a
capture cut at record boundaries to several lengths decodes with the same work per
submission at each, and no more work per launch.

Work is counted, not timed: the lines of decoders/ code run (sys.settrace), each charged
to the record being handled (between two records the reader hands out) or to the end of
the decode. The launch path is the SUBMISSION records plus the end (where held launches
go to the sink), counted per SUBMISSION record (the unit it decodes; per launch moves with
how many submissions carry none, e.g. torch-graph's copies between its replays) and shown
per launch. The captures have more than one channel, where a channel that goes idle after
a launch used to hold every later launch back while the decode walked them all after each
submission: captures/jax-jit holds 640 of its 641 launches so, and its launch path's work
per submission grew from 1,300 lines at 55% of the records to 2,100 at the end (09c72ff)."""
import os
import sys
from collections import Counter

import pytest

from conftest import capture_bytes, record_spans

CAPTURES = ["jax-jit", "torch-graph", "torch-eager", "two-streams"]
CUTS = (0.55, 0.7, 0.85, 1.0)     # of the records: after the start-up ioctls, then on
GROWTH = 1.1                       # what one length may cost over a shorter one


def decode_work(path):
    """({record kind or "end": lines run}, {record kind: records}, launches) of one decode."""
    import decoders
    from decoders.capture import reader as R
    from decoders.session import decode_capture
    root = os.path.dirname(os.path.abspath(decoders.__file__))
    count = [0]
    marks = []
    records = R.CaptureReader.records

    def marked(self, *a, **kw):
        for rec in records(self, *a, **kw):
            marks.append((rec.type, count[0]))
            yield rec

    def line(frame, event, arg):
        count[0] += 1
        return line

    def call(frame, event, arg):
        return line if frame.f_code.co_filename.startswith(root) else None
    R.CaptureReader.records = marked
    sys.settrace(call)
    try:
        model = decode_capture(path)
    finally:
        sys.settrace(None)
        R.CaptureReader.records = records
    work, seen = Counter(), Counter()
    ends = [at for _, at in marks[1:]] + [count[0]]
    for k, ((kind, at), after) in enumerate(zip(marks, ends)):
        # the last record's own handling is small beside the end's: both go to the end
        kind = "end" if k == len(marks) - 1 else kind
        work[kind] += after - at
        seen[kind] += 1
    return work, seen, len(model.launches)


def cut(name, fraction, tmp_path):
    """The capture's header and its first `fraction` of records, as a file."""
    data, spans = capture_bytes(name), record_spans(name)
    k = int(len(spans) * fraction)
    path = tmp_path / f"{name}-{fraction}.tlc"
    path.write_bytes(data[:spans[k][0]] if k < len(spans) else data)
    return path


def launch_work(name, tmp_path):
    """[(fraction, submissions, launches, launch-path work)] at each cut with submissions."""
    out = []
    for f in CUTS:
        work, seen, launches = decode_work(cut(name, f, tmp_path))
        if seen["SUBMISSION"]:
            out.append((f, seen["SUBMISSION"], launches, work["SUBMISSION"] + work["end"]))
    return out


@pytest.mark.parametrize("name", CAPTURES)
def test_launch_path_work_does_not_grow(name, tmp_path):
    rows = launch_work(name, tmp_path)
    assert rows and rows[-1][0] == 1.0 and rows[-1][2]
    print(name, "; ".join(f"{f}: {s} submissions {w / s:.0f}/submission, {n} launches"
                          + (f" {w / n:.0f}/launch" if n else "") for f, s, n, w in rows))
    for k, (f, s, n, w) in enumerate(rows[1:], 1):
        best = min(x[3] / x[1] for x in rows[:k])
        assert w / s <= GROWTH * best, (f"{name}: {w / s:.0f} per submission at {f} of the "
                                        f"records, {best:.0f} at a shorter cut", rows)
    # and no more per launch at the full length than at the longest cut before it
    (_, _, n0, w0), (_, _, n1, w1) = rows[-2], rows[-1]
    assert not n0 or w1 / n1 <= GROWTH * w0 / n0, rows


@pytest.mark.parametrize("name", ["jax-jit"])
def test_other_records_cost_what_they_did(name, tmp_path):
    """Every other kind of record: its mean work at the full length is what it was at the
    shortest cut (the ioctl model, the API calls and their attribution do not grow)."""
    short_work, short_seen, _ = decode_work(cut(name, CUTS[0], tmp_path))
    work, seen, _ = decode_work(cut(name, 1.0, tmp_path))
    for kind in short_seen:
        if kind in ("SUBMISSION", "end") or short_seen[kind] < 20:
            continue
        before, after = short_work[kind] / short_seen[kind], work[kind] / seen[kind]
        assert after <= GROWTH * before, (kind, before, after)
