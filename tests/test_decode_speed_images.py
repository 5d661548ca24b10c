"""A QMD image seen before gives its remembered words, version and parts
(launch/qmds.py _QMD_IMAGES: a launch loop's GRID_NULL QMDs cycle through a ring of slots with the
same bytes); a summary is its parts' prototype with the launch's own values set; an
"already decoded" dependent and a launch's attribution "kernel" are one shared dict until
the summary is read. Checked against decoding with nothing remembered on real captures,
for a QMD with no version (never remembered: the problem is reported every time), and for
independence of the summaries handed out."""

import pytest

from decoders import launch as L
from decoders.launch import channel as LC, qmds as LQ
from decoders.submissions import decode_submissions
from decoders.capture.reader import read_capture
from decoders.session import decode_capture

from tests.conftest import capture_path as _path


class _Never(dict):
    """A memo that remembers nothing: every QMD image takes the general path."""

    def get(self, key, default=None):
        return default


def _subs(name, limit=None):
    _, records = read_capture(_path(name))
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"]
    return subs[:limit] if limit else subs


@pytest.mark.parametrize("name", ["launch-loop-10k", "builtin-vadd", "two-streams",
                                  "launch-shapes", "torch-small", "multi-gpu"])
def test_remembered_images_equal_general_path(name, monkeypatch):
    subs = _subs(name, 3000)
    LQ._QMD_IMAGES.clear()
    fast = decode_submissions(subs)
    monkeypatch.setattr(LQ, "_QMD_IMAGES", _Never())
    slow = decode_submissions(subs)
    assert len(fast.launches) == len(slow.launches) and fast.launches
    for a, b in zip(fast.launches, slow.launches):
        assert list(a.summary.items()) == list(b.summary.items())     # same keys, same order
        assert a.qmd_bytes == b.qmd_bytes and a.fields == b.fields
    assert [str(p) for p in fast.problems] == [str(p) for p in slow.problems]


def test_image_without_version_is_reported_each_time():
    """The same bytes with no QMD version, sent twice: two problems, no launch."""
    LQ._QMD_IMAGES.clear()
    dec = L.LaunchDecoder()
    plan = LC._ClassPlan(dec, 0xCBC0)
    ch = LC._Channel()
    junk = bytes(384)
    for offset in (0x10, 0x20):
        assert dec._launch_at(ch, 0x1000, "SEND_PCAS_A", (offset, None), plan, data=junk) is None
    assert [p["offset"] for p in dec.problems] == [0x10, 0x20]
    assert all("no known QMD version" in p["message"] for p in dec.problems)
    assert not any(key[1] == junk for key in LQ._QMD_IMAGES)


def test_shared_parts_are_own_once_read():
    model = decode_capture(_path("launch-shapes"), keep=None)
    done = [l.summary for l in model.launches
            if any(d.get("why") == "already decoded" for d in l.summary["dependents"])]
    kernels = [l.summary for l in model.launches
               if (l.summary.get("attribution") or {}).get("kernel")]
    for group, part in ((done, lambda s: s["dependents"][0]),
                        (kernels, lambda s: s["attribution"]["kernel"])):
        assert len(group) >= 2
        want = dict(part(group[1]))
        part(group[0])["changed"] = True
        assert part(group[1]) == want


class _NeverMemo(dict):
    def get(self, key, default=None):
        return default


@pytest.mark.parametrize("name", ["builtin-vadd", "two-streams", "multi-gpu", "torch-small",
                                  "memcpy-memset", "graph-replay"])
def test_remembered_resolution_equals_general_path(name, monkeypatch):
    """session._resolve_launch with ObjectTree.launch_memo == resolving every VA anew."""
    fast = decode_capture(_path(name), keep=None)
    from decoders.rm import objects
    real_init = objects.ProcessTree.__init__     # (each process's tree keeps its memo)

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        self.launch_memo = _NeverMemo()
    monkeypatch.setattr(objects.ProcessTree, "__init__", init)
    slow = decode_capture(_path(name), keep=None)
    assert len(fast.launches) == len(slow.launches) and fast.launches
    for a, b in zip(fast.launches, slow.launches):
        assert a.summary["resolved"] == b.summary["resolved"]


def test_tree_change_forgets_remembered_resolution():
    """A mapping that goes away (munmap) must not leave a launch resolved through it."""
    from decoders.session import _resolve_launch
    model = decode_capture(_path("builtin-vadd"), keep=None)
    tree = model.objects
    s = next(l.summary for l in model.launches if l.summary["resolved"]["qmd_address"])
    fresh = {k: v for k, v in s.items() if k != "resolved"}
    _resolve_launch(tree, fresh)
    assert tree.launch_memo
    tree._forget()                   # what every feed_ioctl / feed_mmap / feed_munmap does
    assert not tree.launch_memo
    again = dict(fresh)
    del again["resolved"]
    _resolve_launch(tree, again)
    assert again["resolved"] == fresh["resolved"]


def test_resolved_constant_banks_own_once_read():
    model = decode_capture(_path("launch-shapes"), keep=None)
    with_cbs = [l.summary for l in model.launches if l.summary["resolved"]["constant_buffers"]]
    assert len(with_cbs) >= 2
    want = list(with_cbs[1]["resolved"]["constant_buffers"])
    with_cbs[0]["resolved"]["constant_buffers"].append("changed")
    assert with_cbs[1]["resolved"]["constant_buffers"] == want


@pytest.mark.parametrize("name", ["launch-loop-10k", "builtin-vadd", "launch-shapes",
                                  "torch-small"])
def test_already_decoded_in_place_equals_general_path(name, monkeypatch):
    """_follow_dependents' SparseMemory.holds() check == reading the bytes out and comparing."""
    subs = _subs(name, 3000)
    fast = decode_submissions(subs)
    monkeypatch.setattr(L.SparseMemory, "holds", lambda self, va, n, prefix: False)
    slow = decode_submissions(subs)
    assert len(fast.launches) == len(slow.launches) and fast.launches
    for a, b in zip(fast.launches, slow.launches):
        assert a.summary["dependents"] == b.summary["dependents"]
    assert any(d.get("why") == "already decoded" for l in fast.launches
               for d in l.summary["dependents"])


def test_holds_only_whole_known_equal_bytes_in_one_page():
    mem = L.SparseMemory()
    qmd = bytes(range(256)) + bytes(128)
    mem.write(0x10000, qmd)
    assert mem.holds(0x10000, 384, qmd) and mem.holds(0x10000, 384, qmd[:256])
    assert not mem.holds(0x10000, 384, b"\xff" + qmd[1:])        # a byte differs
    assert not mem.holds(0x10000, 385, qmd)                        # one byte not known
    assert not mem.holds(0x20000, 384, qmd)                        # nothing there
    mem.write(L.PAGE * 9 - 100, qmd)                               # crosses a page
    assert mem.read(L.PAGE * 9 - 100, 384) == qmd
    assert not mem.holds(L.PAGE * 9 - 100, 384, qmd)
