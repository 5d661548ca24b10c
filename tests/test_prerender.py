"""tracer/prerender.py: the JSON's long lists rendered by a worker while the capture decodes
are written byte for byte as the render makes them after the decode; a batch patched after
the worker rendered it, or a worker that died, leaves the render to make it as before."""
import io
import json
import os
import signal
from types import SimpleNamespace

from conftest import capture_path
from decoders.session import decode_capture
from decoders.spill import SpillList
from tracer import prerender
from tracer.prerender import Prerender, render
from tracer.report_json import prerender_views, render_json


def _json(model, pre=None):
    out = io.StringIO()
    render_json(model, out, all_fields=False, prerender=pre)
    return out.getvalue()


def test_rendered_ahead_is_the_same_json(monkeypatch):
    """launch-loop-10k decoded twice, split as on a machine of 2 CPUs: once rendered after
    the decode, once with a worker that rendered every batch as it was sealed."""
    monkeypatch.setenv("TRACE_LAUNCH_SPLIT", "1")
    monkeypatch.setenv("TRACE_LAUNCH_JOBS", "2")
    path = capture_path("launch-loop-10k")
    plain = _json(decode_capture(path, full_blocks=True))
    pre = Prerender(prerender_views(False))
    try:
        model = decode_capture(path, full_blocks=True, prerender=pre)
        pre.finish(wait=True)
        done = {name: len(pre.texts(model, name)) for name in pre.views}
        # every sealed batch of the three lists (the first 256 items stay in memory)
        assert done == {name: len(getattr(model, name)._ends) for name in pre.views}
        assert done["launches"] > 100
        assert _json(model, pre) == plain
    finally:
        pre.close()


def _spilled(n, keep=3):
    lst = SpillList(keep, dump=None, load=None, repair=lambda item, change: dict(item, **change))
    lst.BATCH = 4
    return lst


def _one(_, item):
    return json.dumps(item)


def _texts(seq, views_pre, patches=(), kill=False):
    model = SimpleNamespace(items=seq)
    pre = Prerender({"items": _one})
    try:
        pre.attach(model)
        for i in range(40):
            seq.append({"i": i})
        if kill:
            os.kill(pre.pid, signal.SIGKILL)
        pre.finish(wait=True)
        for i, change in patches:
            seq.patch(i, change)
        out = []
        texts = pre.texts(model, "items")
        render(seq, _one, out.append, texts, pre.read)
        return ",\n  ".join(out), texts
    finally:
        pre.close()


def test_a_batch_patched_after_it_was_rendered_is_rendered_again():
    want = _spilled(40)
    for i in range(40):
        want.append({"i": i})
    want.patch(9, {"late": True})
    want.patch(38, {"late": 2})
    expect = ",\n  ".join(_one(0, x) for x in want)
    assert '"late": true' in expect and '"late": 2' in expect
    got, texts = _texts(_spilled(40), None, patches=[(9, {"late": True}), (38, {"late": 2})])
    assert len(texts) == 9      # (40 - 3 kept) items, 4 a batch: 9 sealed, 1 item open
    assert got == expect


def test_a_worker_that_died_leaves_the_render_as_before():
    expect = ",\n  ".join(_one(0, {"i": i}) for i in range(40))
    got, texts = _texts(_spilled(40), None, kill=True)
    assert got == expect


def test_wanted(monkeypatch):
    monkeypatch.setenv("TRACE_LAUNCH_PRERENDER", "0")
    assert not prerender.wanted()
    monkeypatch.setenv("TRACE_LAUNCH_PRERENDER", "1")
    assert prerender.wanted()
    assert prerender_views(True) == {}
