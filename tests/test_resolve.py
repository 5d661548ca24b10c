"""Launch addresses resolved to RM memory objects (issue 5), checked on real captures
against the object tree's own mappings, found here independently of ObjectTree.resolve."""
import io
import json
import os

import pytest

from decoders.session import decode_capture
from tracer.report import render_json, render_text
from tests.conftest import capture_file

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _path(name):
    return str(capture_file(name))


def _covering(tree_json, va):
    """(object json, offset) of every live object with a GPU mapping over va."""
    out = []
    for o in tree_json["objects"]:
        if o["freed"]:
            continue
        for m in o.get("gpu_mappings", []):
            if m["va"] is not None and m["va"] <= va < m["va"] + (m["length"] or 0):
                out.append((o, va - m["va"] + (m["offset"] or 0)))
    return out


@pytest.fixture(scope="module")
def vadd():
    return decode_capture(_path("builtin-vadd"))


def _marked_kernel(model):
    begin = next(m["index"] for m in model.marks if m["kind"] == "BEGIN")
    end = next(m["index"] for m in model.marks if m["kind"] == "END")
    (launch,) = [l for l in model.launches
                 if begin < l.record_index < end and l.summary["kernel"]]
    return launch.summary


def test_cbank0_of_builtin_vadd_resolves_to_the_covering_memory_object(vadd):
    s = _marked_kernel(vadd)
    cb0 = next(cb for cb in s["constant_buffers"] if cb["index"] == 0)
    k = s["constant_buffers"].index(cb0)
    r = s["resolved"]["constant_buffers"][k]
    cands = _covering(vadd.objects.to_json(), cb0["address"])
    assert cands, "no GPU mapping of the capture covers cbank0"
    obj, off = cands[0]
    assert (r["handle"], r["offset"], r["class"]) == (obj["handle"], off, obj["class"])
    assert r["size"] == obj["size"] and 0 <= r["offset"] < r["size"]
    assert r["memory"] == obj["location"] == "vidmem"


def test_every_launch_address_of_builtin_vadd_resolves(vadd):
    tree = vadd.objects.to_json()
    for launch in vadd.launches:
        s = launch.summary
        res = s["resolved"]
        pairs = [(s["qmd_address"], res["qmd_address"])]
        if s["program_address"]:
            pairs.append((s["program_address"], res["program_address"]))
        pairs += [(cb["address"], r) for cb, r in zip(s["constant_buffers"], res["constant_buffers"])]
        pairs += [(sem["address"], r) for sem, r in zip(s["semaphores"], res["semaphores"])]
        assert len(res["constant_buffers"]) == len(s["constant_buffers"])
        assert len(res["semaphores"]) == len(s["semaphores"])
        for va, r in pairs:
            assert r is not None, f"{va:#x} unresolved"
            obj, off = _covering(tree, va)[0]
            assert (r["handle"], r["offset"]) == (obj["handle"], off)


def test_semaphores_land_in_sysmem_with_a_cpu_mapping(vadd):
    s = _marked_kernel(vadd)
    for sem, r in zip(s["semaphores"], s["resolved"]["semaphores"]):
        assert r["memory"] == "sysmem" and r["cpu"] is not None


@pytest.mark.parametrize("name", ["launch-shapes", "torch-small", "launch-loop-10k"])
def test_resolved_in_report_and_json(name):
    model = decode_capture(_path(name))
    out = io.StringIO()
    render_json(model, out)
    launches = json.loads(out.getvalue())["launches"]
    assert launches and all("resolved" in l for l in launches)
    assert all(l["resolved"]["qmd_address"] is not None for l in launches)
    keys = {"handle", "class", "class_name", "offset", "size", "memory", "cpu", "via"}
    assert set(launches[0]["resolved"]["qmd_address"]) == keys
    text = io.StringIO()
    render_text(model, text)
    assert "    QMD: offset 0x" in text.getvalue()


def test_resolution_remembered_until_the_tree_changes(vadd):
    """A VA asked again gets the remembered dict, equal to a fresh resolution; a change to
    the tree forgets it, a record that changes nothing does not."""
    tree = vadd.objects
    va = _marked_kernel(vadd)["qmd_address"]
    first = tree.resolution(va)
    assert first is not None and tree.resolution(va) is first
    tree._forget()
    again = tree.resolution(va)
    assert again == first and again is not first
    assert tree.resolution(1) is None and tree.resolution(1) is None
    tree.feed_munmap(0x10, 0x1000, pid=0)           # nothing mapped there: no change
    assert tree.resolution(va) is again
    hit = tree.resolve(va).obj
    obj, m = next((o, m) for o in tree.objects.values() if o is not hit
                  for m in o.cpu_mappings if m["fd"] is not None)
    tree.feed_munmap(m["addr"], m["length"], pid=obj.pid)   # a mapping goes: forgotten
    assert m not in obj.cpu_mappings
    assert tree.resolution(va) is not again and tree.resolution(va) == first
