"""A brief decode (decode_capture(brief=N), decoders/spill.py drop=True): the text report that
shows N launches in full and counts the rest is the same, byte for byte, as the one made from
a full decode, on every recorded capture, while the launches, API calls, ioctls, syncs and
copies past the first N are counted and not kept. The expectation is the full decode's own report."""
import io
import json

import pytest

from conftest import SMALL, capture_path
from decoders.session import channels, decode_capture
from decoders.spill import Dropped, SpillList
from tracer.report import render_text


def _text(model, limit):
    """The report as trace-decode writes it for a brief decode: not --stats, whose naming
    coverage reads every ioctl's body (tracer/cli_common.py brief_for: --stats decodes in full)."""
    out = io.StringIO()
    render_text(model, out, launch_limit=limit)
    return out.getvalue()


@pytest.mark.parametrize("name", SMALL)
def test_brief_report_is_the_full_report(name):
    path = capture_path(name)
    full = decode_capture(path)
    brief = decode_capture(path, brief=3)
    assert brief.brief == 3 and len(brief.launches) == len(full.launches)
    assert len(brief.api_calls) == len(full.api_calls)
    assert _text(brief, 3) == _text(full, 3)
    assert brief.stats() == full.stats()    # (every count --stats shows but the coverage)
    if len(full.launches) > 3:      # the rest were counted, not kept
        assert brief.launches._dropped == len(full.launches) - 3
        with pytest.raises(Dropped):
            list(brief.launches)


@pytest.mark.parametrize("name,named", [("kernel-fault", True), ("ddp-2rank", False)])
def test_failed_calls_name_the_launch_before_them_with_nothing_kept(name, named):
    """kernel-fault (cuCtxSynchronize returns 700 after a faulting launch) and ddp-2rank (8
    failed cuLibraryGetKernel calls in 2 processes, before any launch): with no launch kept,
    the header's "launch before" of every failed call is the one a full decode finds by
    walking its launches."""
    from tracer.outcome import failed_calls
    path = capture_path(name)
    full = decode_capture(path)
    brief = decode_capture(path, brief=0)
    want = failed_calls(full)
    assert want and any(c["launch_before"] for c in want) == named
    assert failed_calls(brief) == want
    assert _text(brief, 0) == _text(full, 0)


def test_a_mismatched_launch_is_kept_and_shown_with_its_arguments(monkeypatch):
    """Synthetic: launch-loop-10k's launches all verify, so the check is made to find a
    difference at one launch (record index chosen from the capture). The brief report shows
    that launch in full, arguments by name included, as the full decode's report does."""
    from decoders.cuda import attribute
    path = capture_path("launch-loop-10k")
    real = attribute.Attribution._verify
    target = decode_capture(path).launches[5001].record_index

    def verify(self, call, params, cfg, s, info, hw_bytes):
        diffs = real(self, call, params, cfg, s, info, hw_bytes)
        if s.get("record_index") == target:
            diffs = diffs + [{"field": "grid", "api": [9, 9, 9], "qmd": s.get("grid")}]
        return diffs
    monkeypatch.setattr(attribute.Attribution, "_verify", verify)
    full = decode_capture(path)
    brief = decode_capture(path, brief=10)
    assert full.mismatched and brief.mismatched == full.mismatched
    n = full.mismatched[0]
    assert brief.launches[n]._summary["attribution"]["args"] == \
        full.launches[n].summary["attribution"]["args"]
    text = _text(brief, 10)
    assert text == _text(full, 10)
    assert f"  launch {n}: " in text and "MISMATCH" in text


def test_spill_list_drop_counts_and_keeps_what_is_pinned():
    kept = SpillList(2, drop=True)
    for k in range(10):
        kept.append({"k": k})
    kept.pin(7, {"k": 7})
    assert len(kept) == 10 and kept[1] == {"k": 1} and kept[7] == {"k": 7}
    assert not kept.sealed(7)
    with pytest.raises(Dropped):
        kept[5]
    with pytest.raises(Dropped):
        list(kept.iter_range(0, 4))


def test_channel_counts_made_while_decoding_equal_the_submissions():
    """The per-channel counts kept as submissions are fed (model.channel_counts) are what
    walking the submissions gives (the path a selection takes)."""
    import dataclasses
    for name in ("torch-eager", "ddp-2rank", "two-streams"):
        model = decode_capture(capture_path(name))
        walked = dataclasses.replace(model, channel_counts=None)
        assert channels(model) == channels(walked)
        assert model.stats() == walked.stats()


def test_a_brief_model_is_decoded_again_for_a_view_that_reads_everything():
    """print_report given a brief model (trace-launch's live decode) for a view that needs
    every launch (JSON here) decodes the capture again: the JSON is the full decode's."""
    from tracer.cli_common import print_report
    path = capture_path("jax-jit")
    outs = []
    for model in (None, decode_capture(path, brief=2)):
        out = io.StringIO()
        print_report(path, out, as_json=True, model=model)
        outs.append(json.loads(out.getvalue()))
    assert outs[0] == outs[1] and len(outs[1]["launches"]) > 2
