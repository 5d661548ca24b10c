"""Faster forms on the ioctl rendering path == the forms they replace, on the ioctls of real
captures: Node.find (recursion) == the first walk() node with that path; changed() (path
keys by one split, signatures without a generator per node) == the join-of-split version;
format_value's shortcut for no display kind == the full chain."""
import os

import pytest

from decoders import ioctl as I
from decoders.capture.reader import read_capture
from decoders.escapes import render as R
from tests.conftest import capture_file

CAPTURES = os.path.join(os.path.dirname(__file__), "..", "captures")


def _ioctls(name, limit=None):
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    _, records = read_capture(path)
    out = [r.body for r in records if r.type == "IOCTL"]
    return out[:limit] if limit else out


def _find_by_walk(root, path):
    for n in root.walk():
        if n.path == path:
            return n
    return None


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small"])
def test_find_equals_walk(name):
    for body in _ioctls(name, 300):
        root = I.decode_ioctl(body)
        paths = {n.path for n in root.walk()}
        for path in sorted(paths) + ["ioctl.nothing", "ioctl.params", ""]:
            assert root.find(path) is _find_by_walk(root, path)


def _changed_reference(before_nodes, after_nodes, always=("status", "rmStatus", "Status")):
    """render.changed() as it was before the faster keys and signatures."""
    def key(path, prefix_parts):
        return ".".join(path.split(".")[prefix_parts:])

    if not after_nodes:
        return []
    depth_b = len(before_nodes[0].path.split(".")) - 1 if before_nodes else 0
    depth_a = len(after_nodes[0].path.split(".")) - 1

    def sig(node):
        raw = node.raw if not isinstance(node.raw, list) else tuple(node.raw)
        return (raw, node.display, tuple(sig(c) for c in node.children or ()))

    old = {}
    for node in before_nodes:
        old[key(node.path, depth_b)] = sig(node)
    return [n for n in after_nodes
            if n.name in always or old.get(key(n.path, depth_a)) != sig(n)]


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-small"])
def test_changed_equals_reference(name):
    seen = 0
    for body in _ioctls(name, 300):
        _, b = I._decode_new(body, "580")
        ins = (b.root.find("ioctl.params.in") or b.root.find("ioctl.in"))
        if ins is None or not ins.children:
            continue
        # the after-copy rendered under another prefix, and a copy with one value changed
        after = [type(n)(n.path.replace(".in", ".out", 1), n.name, n.raw, n.display, n.offset,
                         n.children, n.note) for n in ins.children]
        if after[-1].raw is not None:
            after[-1].display += "!"
        assert R.changed(ins.children, after) == _changed_reference(ins.children, after)
        assert R.changed([], after) == _changed_reference([], after)
        seen += 1
    assert seen > 10


def test_format_value_without_kind():
    for value in (0, 1, 9, 10, 255, 1 << 40):
        assert R.format_value(value) == (f"{value:#x}" if value > 9 else str(value))
        assert R.format_value(value, None, {"T": {}}) == R.format_value(value)
