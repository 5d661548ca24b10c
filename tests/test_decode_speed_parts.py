"""Launch summaries hold the remembered QMD parts (grid, grid_raw, cluster, block,
constant_buffers, release semaphore fields) while decoding and get their own copies on the
first read of Launch.summary; a replayed segment's words are read through a memoryview
(pushbuf._WORD_VIEW). Both give what the plain path gives, on real captures."""

import pytest

from decoders.submissions import decode_submissions
from decoders import pushbuf
from decoders.capture.reader import read_capture
from decoders.session import decode_capture

from tests.conftest import capture_path as _path
PARTS = ("grid", "grid_raw", "cluster", "block", "constant_buffers")


def test_parts_shared_while_decoding_own_once_read():
    """builtin-vadd: its GRID_NULL QMDs share one remembered grid until read; read, each
    summary has its own, equal; changing a kernel summary's lists and dicts changes no
    other summary (nor what a fresh decode gives)."""
    path = _path("builtin-vadd")
    model = decode_capture(path, keep=None)
    kernels = [l for l in model.launches if l.kernel]
    nulls = [l for l in model.launches if not l.kernel]
    assert len(nulls) >= 2
    a, b = nulls[0], nulls[1]
    assert a._summary["grid"] is b._summary["grid"]          # one remembered part
    sa, sb = a.summary, b.summary
    for key in PARTS:
        if sa[key] is not None:
            assert sa[key] == sb[key] and sa[key] is not sb[key]
    s = kernels[0].summary
    assert s["constant_buffers"] and s["semaphores"]
    fields = [sem["fields"] for sem in s["semaphores"]]
    s["grid"].append(0)
    s["constant_buffers"][0]["size"] = 1
    for f in fields:
        f.clear()
    fresh = decode_capture(path, keep=None)
    again = [l.summary for l in fresh.launches]
    assert again[model.launches.index(kernels[0])]["grid"] != s["grid"]
    assert all(sem["fields"] for x in again for sem in x["semaphores"])
    assert [l.summary for l in model.launches if l is not kernels[0]] == \
        [x for l, x in zip(model.launches, again) if l is not kernels[0]]


@pytest.mark.parametrize("name", ["launch-loop-10k", "torch-small"])
def test_spilled_batch_parts_own(name):
    """Launches read back from one spilled batch (marshal keeps what they shared) still
    get their own lists and dicts, equal to the in-memory decode's."""
    path = _path(name)
    ref = decode_capture(path, keep=None)
    model = decode_capture(path, keep=0)
    n = min(len(ref.launches), 200)
    got = [l.summary for l in model.launches[:n]]
    assert got == [l.summary for l in ref.launches[:n]]
    seen = set()
    for s in got:
        for key in PARTS:
            if s[key] is not None:
                assert id(s[key]) not in seen
                seen.add(id(s[key]))
        for cb in s["constant_buffers"]:
            assert id(cb) not in seen
            seen.add(id(cb))


@pytest.mark.parametrize("name", ["launch-loop-10k", "two-streams"])
def test_word_view_equals_unpacked_words(name):
    """decode_submissions with the segment words as a memoryview == with every word
    unpacked by struct (the path hosts without a little-endian 4-byte int take)."""
    _, records = read_capture(_path(name))
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"][:3000]

    def run(view):
        saved = pushbuf._WORD_VIEW
        pushbuf._WORD_VIEW = view
        pushbuf._TEMPLATES.clear()
        try:
            result = decode_submissions(subs)
        finally:
            pushbuf._WORD_VIEW = saved
        return [l.summary for l in result.launches], [str(p) for p in result.problems]

    a, b = run(True), run(False)
    assert a[0] and a == b
