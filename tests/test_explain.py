"""`trace-decode explain` (issue 27): one launch's story from the capture's own numbers.

Truth tests compare the story's numbers with each capture's manifest ground truth (grid,
block, arguments, kernel) and with the decoded model (STYLE 19); the text defines every
term once, where it is first used; the page is self-contained and escapes capture strings;
and in headless Chromium (where Chromium and Playwright are installed: .ci/run installs
them, else skipped with the reason) the page loads with no console error and shows the
manifest's grid and block and the model's register count."""
import html
import io
import os
import re
import shutil

import pytest
from click.testing import CliRunner

from conftest import CAPTURES, capture_file, manifest
from decoders.session import decode_capture
from tracer import explain as E
from tracer.cli import trace_decode

# captures whose manifest names the launch's grid, block and arguments
TRUTH = ["builtin-vadd", "builtin-vadd-grid123", "runtime-vadd"]


def _path(name):
    return str(capture_file(name))


_MODELS = {}


def _model(name):
    if name not in _MODELS:
        _MODELS[name] = decode_capture(_path(name))
    return _MODELS[name]


def _story(name, index=None):
    model = _model(name)
    return model, E.build_story(model, E.pick_launch(model, index))


def _text(story):
    out = io.StringIO()
    E.render_text(story, out)
    return out.getvalue()


def _html(story):
    out = io.StringIO()
    E.render_html(story, out)
    return out.getvalue()


def _param_names(signature):
    """['a', 'b', 'c', 'n'] from 'vadd(const float* a, ..., int n)'; None where the
    signature names no parameters."""
    inner = signature[signature.index("(") + 1:signature.rindex(")")]
    names = [re.findall(r"[A-Za-z_]\w*", p)[-1] for p in inner.split(",")]
    types = {"int", "float", "double", "char", "long", "const", "unsigned", "short"}
    return None if any(n in types for n in names) else names


@pytest.mark.parametrize("name", TRUTH)
def test_story_numbers_are_the_manifests(name):
    truth = manifest(name)["ground_truth"]
    _, story = _story(name)
    f = story.facts
    assert f["kernel_name"] == truth["kernel"]
    assert f["grid"] == truth["grid"] and f["block"] == truth["block"]
    args = f["api_call"]["args"]
    assert [args["gridDimX"], args["gridDimY"], args["gridDimZ"]] == truth["grid"]
    assert [args["blockDimX"], args["blockDimY"], args["blockDimZ"]] == truth["block"]
    assert args["sharedMemBytes"] == truth["shared_mem_dynamic"]
    values = [a["value"] for a in f["args"]]
    names = _param_names(truth["signature"])
    if names:
        assert dict(zip(names, values)) == truth["args"]
    else:       # runtime-vadd: the manifest names `n` only, its signature no parameter
        assert set(truth["args"].values()) <= set(values)
    if truth.get("param_info"):
        assert [(a["index"], a["offset"], a["size"]) for a in f["args"]] == \
            [(p["index"], p["offset"], p["size"]) for p in truth["param_info"]]
    text = _text(story)
    grid, block = (", ".join(map(str, truth[k])) for k in ("grid", "block"))
    assert f"{truth['kernel']}<<<({grid}), ({block})>>>" in text
    for a in f["args"]:
        shown = f"{a['value']:#x}" if a["size"] == 8 else str(a["value"])
        assert f"] = {shown}" in text


@pytest.mark.parametrize("name", TRUTH)
def test_story_numbers_are_the_models(name):
    model, story = _story(name)
    f = story.facts
    launch = model.launches[f["launch"]]
    s = launch.summary
    sub = next(x for x in model.submissions if x["index"] == launch.record_index)
    assert (f["registers"], f["shared_memory_bytes"], f["program_address"]) == \
        (s["registers"], s["shared_memory_bytes"], s["program_address"])
    assert (f["token"], f["channel"], f["gp_put_prev"], f["gp_put"], f["doorbell_addr"]) == \
        (sub["token"], sub["channel"], sub["gp_put_prev"], sub["gp_put"], sub["doorbell_addr"])
    ch = model.objects.channels[sub["channel"]]
    assert (f["gpfifo_va"], f["gpfifo_entries"]) == (ch.gpfifo_va, ch.entries)
    q = f["qmd_fields"]
    width = q.get("GRID_WIDTH", q.get("CTA_RASTER_WIDTH"))
    assert width == s["grid_raw"][0]
    assert q["CTA_THREAD_DIMENSION0"] == s["block"][0]
    # the pushbuffer steps: the QMD uploaded inline, then sent by SEND_PCAS_A
    steps = f["pushbuffer_steps"]
    kinds = [(x["kind"], x.get("target")) for x in steps]
    assert ("upload", "qmd") in kinds and ("upload", "args") in kinds
    assert {"kind": "pcas", "qmd": s["qmd_address"]} in steps
    cb0 = next(c for c in s["constant_buffers"] if c["index"] == 0)
    up = next(x for x in steps if x.get("target") == "args")
    assert up["dst"] == cb0["address"] + s["params"]["offset"]
    assert up["size"] == s["params"]["size"]


def test_builtin_vadd_default_is_the_marked_launch():
    model, story = _story("builtin-vadd")
    from decoders.session import marked_submissions
    marked = {x["index"] for _, subs in marked_submissions(model) for x in subs}
    assert model.launches[story.index].record_index in marked
    assert story.facts["kernel"] and story.facts["api_call"]["name"] == "cuLaunchKernel"


def test_each_term_defined_once_after_its_first_use():
    _, story = _story("builtin-vadd")
    text = _text(story)
    lines = text.splitlines()
    defined = [l.strip()[2:].split(":")[0] for l in lines if l.strip().startswith("* ")]
    assert len(defined) == len(set(defined))
    for term in ("GPFIFO", "GP_PUT", "pushbuffer", "method", "subchannel", "QMD", "PCAS",
                 "constant bank 0", "channel token", "GRID_NULL", "inline-to-memory", "USERD",
                 "doorbell", "semaphore", "RM client", "RM object", "RM class"):
        assert term in defined, term
        at = next(k for k, l in enumerate(lines) if l.strip().startswith(f"* {term}:"))
        first = next(k for k, l in enumerate(lines) if term in l)
        assert first < at, term      # used in the story before its definition line


def test_every_line_fits():
    _, story = _story("builtin-vadd")
    assert max(len(l) for l in _text(story).splitlines()) <= 300


def test_grid_null_launch_is_told_too():
    model, story = _story("builtin-vadd", 2)
    assert not story.facts["kernel"]
    assert "GRID_NULL" in _text(story)


def test_html_is_self_contained_and_has_the_numbers():
    _, story = _story("builtin-vadd")
    page = _html(story)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"\b(src|href)=|https?://|@import|url\(", page)
    for key, value in (("grid-x", 4096), ("block-x", 256), ("registers", 16)):
        assert f'data-k="{key}">{value}<' in page
    for term in ("QMD", "GPFIFO", "doorbell", "PCAS"):
        assert f'data-term="{term}"' in page


def test_html_escapes_capture_strings():
    """A hostile kernel name, path or GPU string is text on the page, never markup."""
    evil = '<img src=x onerror="alert(1)">\x1b[31m&'
    story = E.Story(evil, 0, {}, [E.Section("launch", evil, evil, [
        E.Line(["kernel ", E.Value("kernel", evil, True), " ", E.Term("QMD", "QMD")])],
        [E.Line([E.Value("kernel", evil, True)])])])
    page = _html(story)
    assert "<img" not in page and "\x1b" not in page
    assert html.escape("<img src=x onerror=") in page.replace("&quot;", '"') or \
        "&lt;img src=x onerror=" in page
    text = _text(story)
    assert "\x1b" not in text and "\\x1b" in text


# ---- the CLI ---------------------------------------------------------------------------

def _runner():
    try:
        return CliRunner(mix_stderr=False)      # click < 8.2
    except TypeError:
        return CliRunner()


@pytest.mark.parametrize("bad", ["4", "99", "-1"])
def test_bad_launch_is_one_line_exit_2(bad):
    res = _runner().invoke(trace_decode, ["explain", _path("builtin-vadd"), "--launch", bad])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trace-decode: ") and \
        f"no launch {bad}" in lines[0]
    assert res.stdout == ""


def test_cli_text_and_html(tmp_path):
    res = _runner().invoke(trace_decode, ["explain", _path("builtin-vadd")])
    assert res.exit_code == 0, res.stderr
    assert "cuLaunchKernel(f=" in res.stdout and "SEND_PCAS_A" in res.stdout
    out = tmp_path / "launch.html"
    res = _runner().invoke(trace_decode, ["explain", _path("builtin-vadd"), "--html", str(out)])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == "" and 'data-k="grid-x">4096<' in out.read_text()


# ---- in Chromium -----------------------------------------------------------------------
CHROMIUM = os.environ.get("TL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def _browser_missing():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; .ci/run does)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TL_CHROMIUM)"
    return None


@pytest.mark.viewer
def test_page_in_chromium(tmp_path):
    why = _browser_missing()
    if why:
        pytest.skip(why)
    from playwright.sync_api import sync_playwright
    name = "builtin-vadd"
    truth = manifest(name)["ground_truth"]
    model, story = _story(name)
    path = tmp_path / "launch.html"
    path.write_text(_html(story), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: errors.append(f"request {r.url}")
                    if not r.url.startswith("file:") else None)
            page.goto(path.as_uri())

            def texts(key):
                return page.eval_on_selector_all(
                    f'[data-k="{key}"]', "els => els.map(e => e.textContent)")
            for axis, k in zip("xyz", range(3)):
                assert str(truth["grid"][k]) in texts(f"grid-{axis}")
                assert str(truth["block"][k]) in texts(f"block-{axis}")
            regs = model.launches[story.index].summary["registers"]
            assert str(regs) in texts("registers")
            # in the QMD's box, as its field GRID_WIDTH
            assert page.inner_text("#box-qmd").count(str(truth["grid"][0])) >= 1
            # hovering a value marks every place it appears
            page.hover('#box-qmd [data-k="grid-x"]')
            marked = page.eval_on_selector_all(
                '[data-k="grid-x"]', "els => els.filter(e => e.classList.contains('hl')).length")
            assert marked == len(texts("grid-x")) > 1
            # a term's definition is on the page, for hover
            assert "Queue Meta Data" in page.get_attribute('[data-term="QMD"]', "data-def")
            assert errors == []
        finally:
            browser.close()


def test_dependent_qmd_is_the_one_in_its_own_submission():
    """QMD memory is a ring the driver reuses: launch-loop-10k's last kernel names its
    GRID_NULL QMD at an address many earlier launches also used. The story names the launch
    of the same submission (the nearest one), not the first launch ever at that address."""
    model = decode_capture(str(capture_file("launch-loop-10k")))
    last = len(model.launches) - 1
    story = E.build_story(model, last)
    text = io.StringIO()
    E.render_text(story, text)
    found = re.findall(r"dependent pointer names the QMD at (0x[0-9a-f]+) \(launch (\d+)", text.getvalue())
    assert found
    for va, n in found:
        target = model.launches[int(n)]
        assert target.record_index == model.launches[last].record_index
        assert target._summary["qmd_address"] == int(va, 16)
