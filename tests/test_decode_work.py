"""Only the work the report needs (issue 17): demangling starts at most one process per
capture, a module image is read once per distinct content, and of its cubin only the
launched kernels are parsed."""
import subprocess

import pytest

from conftest import ROOT, capture_path
from decoders import cubin as C
from decoders.cuda import attribute as A
from decoders.session import decode_capture


@pytest.fixture
def fresh_demangler(monkeypatch):
    """A demangler with nothing cached, and a count of the processes started meanwhile."""
    d = C._Demangler()
    monkeypatch.setattr(C, "demangle", d)
    monkeypatch.setattr(A, "demangle", d)
    started = []
    real = subprocess.Popen

    def counting(argv, *a, **kw):
        started.append(argv)
        return real(argv, *a, **kw)
    monkeypatch.setattr(subprocess, "Popen", counting)
    yield d, started
    d.close()


@pytest.mark.parametrize("name", ["torch-small", "runtime-vadd", "two-streams"])
def test_demangling_starts_at_most_one_process_per_capture(name, fresh_demangler):
    d, started = fresh_demangler
    model = decode_capture(capture_path(name))
    names = {c.get("kernel") for c in model.api_calls if c.get("kernel")}
    mangled = [n for n in d.cache if n.startswith("_Z")]
    assert len(started) <= 1 and d.started == len(started), started
    # and it did demangle: every C++ kernel name shown is demangled
    assert names and not any(n.startswith("_Z") for n in names), names
    if C.shutil.which("c++filt"):
        assert d.started == (1 if mangled else 0)
    if name == "torch-small":
        assert len(mangled) >= 5     # one process for many names (it was one per name)


def test_only_launched_kernels_are_parsed():
    """launch-shapes' cubin has 7 kernels; the capture launches 5 of them: only those 5
    have their .nv.info parsed."""
    model = decode_capture(capture_path("launch-shapes"))
    [cubin] = model.attribution._cubins.values()
    why = model.attribution._image_why.get(next(iter(model.attribution._cubins)))
    launched = {l.summary["attribution"]["kernel"]["mangled"] for l in model.launches
                if l.summary.get("attribution") and l.summary["attribution"]["kernel"]}
    assert why is None and len(cubin.kernel_names) == 7
    assert set(cubin._built) == launched and len(launched) == 5


def test_an_image_loaded_twice_is_read_once(monkeypatch):
    """multi-gpu loads the same image on each of its two GPUs: one image_cubin call."""
    calls = []
    real = A.image_cubin

    def counting(image, sm):
        calls.append(len(image))
        return real(image, sm)
    monkeypatch.setattr(A, "image_cubin", counting)
    model = decode_capture(capture_path("multi-gpu"))
    assert len(model.attribution.images) == 2 and len(calls) == 1
    assert model.verified["verified"] == 2


def test_kernel_lookup_by_demangled_name_still_works():
    (_, cubin), = C.find_cubins(ROOT / "tests/fixtures/cubins/shapes.sm_90.cubin")
    k = cubin.kernels[0]
    assert cubin.kernel(k.name) is k and cubin.kernel(k.mangled) is k
    with pytest.raises(KeyError):
        cubin.kernel("no_such_kernel")



def test_cubin_cache_drops_least_recently_used_and_keeps_parsed_kernels(monkeypatch):
    """Two module images, a cache that holds one cubin: asking the second drops (and
    releases) the first, whose parsed kernel is still answered; a kernel of the first not
    asked before decodes it again, with the same result as a fresh decode."""
    from types import SimpleNamespace
    monkeypatch.setattr(A, "CUBIN_CACHE_BYTES", 1)
    fix = ROOT / "tests/fixtures/cubins"
    images = [(fix / "shapes.sm_90.cubin").read_bytes(),
              (fix / "shapes.sm_90.size.fatbin").read_bytes()]
    loads = [SimpleNamespace(image=im, sections={"IMAGE": {"flags": []}}, index=i, name="load",
                             _records=(i, 0)) for i, im in enumerate(images)]
    attr = A.Attribution(sm=90)
    k1, arch, why = attr._image_kernel(loads[0], "tl_args")
    first = attr._cubins[images[0]]
    assert k1.mangled == "tl_args" and arch == "sm_90" and why is None
    k2, _, _ = attr._image_kernel(loads[1], "tl_args")
    assert list(attr._cubins) == [images[1]] and first.data is None     # dropped, released
    assert attr._image_kernel(loads[0], "tl_args")[0] is k1             # still answered
    k3, _, _ = attr._image_kernel(loads[0], "tl_1d")                    # decoded again
    fresh = C.image_cubin(images[0], 90).kernel("tl_1d")
    assert k3.to_json() == fresh.to_json() and k2.to_json() == k1.to_json()
    assert attr._cubin_bytes == len(attr._cubins[images[0]].data)


def test_launch_view_is_the_summary_without_copies_or_extraction():
    """Launch.view() == .summary (same keys, order, values); given the fields' stand-in it
    extracts no QMD field; and the text report reads no QMD field at all."""
    import io
    from tracer.report import render_text
    model = decode_capture(capture_path("builtin-vadd"), keep=None)
    fresh = decode_capture(capture_path("builtin-vadd"), keep=None)
    for a, b in zip(model.launches, fresh.launches):
        assert list(a.view().items()) == list(b.summary.items())
    l = decode_capture(capture_path("builtin-vadd"), keep=None).launches[-1]
    v = l.view(qmd_fields="stand-in")
    assert v["qmd_fields"] == "stand-in" and l._fields is None and not l._own
    text_model = decode_capture(capture_path("builtin-vadd"), keep=None)
    render_text(text_model, io.StringIO())
    assert all(x._fields is None for x in text_model.launches)
