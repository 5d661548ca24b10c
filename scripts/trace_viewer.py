#!/usr/bin/env python3
"""Open a `trace-decode timeline` file in Chrome's trace viewer, headless: check what the
viewer imported from it, or take a screenshot.

The viewer is catapult's trace viewer, the code behind chrome://tracing (its
tr.importer.Import and TraceEventImporter parse the file; tr-ui-timeline-view draws it),
as Google's xprof wheel on PyPI bundles it (xprof/static/trace_viewer_index.html and .js).
`fetch` downloads that wheel with pip and unpacks only xprof/static into a cache; none of
it is committed. It runs in Chromium (Debian's /usr/bin/chromium) driven by Playwright.
Why not chrome://tracing itself: Chromium 156 answers ERR_FAILED for it, even with the
internal debugging pages enabled; and ui.perfetto.dev cannot be reached from our machines.

    python3 scripts/trace_viewer.py fetch                      # the viewer, into the cache
    python3 scripts/trace_viewer.py check trace.json [...]     # one JSON line per file
    python3 scripts/trace_viewer.py shot trace.json -o x.png [--from MS --to MS]
                                          [--select NAME] [--width PX --height PX]

`check` prints what the viewer's model holds after the import: its import warnings,
processes (pid, name, thread count), threads, slices (X events and thread-scoped
instants; catapult imports an instant of scope "t" as a zero-length slice), global
instants, and the time bounds in ms (the importer moves the earliest event to 0). Exit status 1 when the page could not load a file.
"""
import argparse
import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile

XPROF = "xprof==2.24.2"
CACHE = os.environ.get("TL_TRACE_VIEWER") or os.path.join(
    os.path.expanduser("~"), ".cache", "trace-launch", XPROF.replace("==", "-"), "static")
CHROMIUM = os.environ.get("TL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Without the networking switches Chromium keeps trying Google's hosts on a closed network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
PAGE = "trace_viewer_index.html"

# tf-trace-viewer keeps the imported tr.Model on _traceModel and sets the timeline view's
# model when the import promise resolves.
LOADED = """() => { const t = document.querySelector('tf-trace-viewer');
  return !!(t && t._traceViewer && t._traceViewer.model) }"""
STATS = """() => {
  const m = document.querySelector('tf-trace-viewer')._traceModel;
  let slices = 0, threads = 0;
  for (const t of m.getAllThreads()) { threads++; slices += t.sliceGroup.slices.length; }
  const processes = Object.values(m.processes).map(
      p => [p.pid, p.name, Object.keys(p.threads).length]);
  return {warnings: m.importWarnings.map(w => w.type + ': ' + w.message), processes,
          threads, slices, instants: m.instantEvents.length,
          bounds_ms: [m.bounds.min, m.bounds.max]};
}"""
# The viewport the way tf-trace-viewer sets its own (_initViewport): world bounds in ms
# over the track canvas's width.
ZOOM = """([lo, hi]) => {
  const view = document.querySelector('tf-trace-viewer')._traceViewer;
  const dt = new tr.ui.TimelineDisplayTransform();
  dt.xSetWorldBounds(lo, hi, view.trackView.modelTrackContainer_.canvas.width);
  view.trackView.viewport.setDisplayTransformImmediately(dt);
}"""
SELECT = """(name) => {
  const view = document.querySelector('tf-trace-viewer')._traceViewer;
  for (const t of view.model.getAllThreads())
    for (const s of t.sliceGroup.slices)
      if (s.title === name) {
        view.brushingStateController.changeSelectionFromTimeline(new tr.model.EventSet([s]));
        return true; }
  return false;
}"""


def fetch(dest=CACHE):
    """Unpack xprof's static viewer files into dest (nothing if already there)."""
    if os.path.exists(os.path.join(dest, PAGE)):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", tmp, XPROF], check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        os.makedirs(dest, exist_ok=True)
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.startswith("xprof/static/") and not name.endswith("/"):
                    with z.open(name) as src, open(os.path.join(dest, os.path.basename(name)),
                                                   "wb") as out:
                        shutil.copyfileobj(src, out)
    return dest


def missing(viewer=CACHE):
    """Why the viewer cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TL_CHROMIUM)"
    if not os.path.exists(os.path.join(viewer, PAGE)):
        return f"no trace viewer in {viewer} (python3 scripts/trace_viewer.py fetch)"
    return None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def viewer_session(viewer=CACHE):
    """(open(trace_path) -> page with the trace imported, close) over one Chromium and one
    loopback HTTP server serving the viewer and each trace file under its own name."""
    from playwright.sync_api import sync_playwright
    root = tempfile.mkdtemp(prefix="trace-viewer-")
    for f in os.listdir(viewer):
        os.symlink(os.path.join(os.path.abspath(viewer), f), os.path.join(root, f))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    counter = [0]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                        headless=True)

            def open_trace(path, width=1600, height=1000, timeout_ms=120000):
                counter[0] += 1
                name = f"trace{counter[0]}.json"
                os.symlink(os.path.abspath(path), os.path.join(root, name))
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"http://127.0.0.1:{port}/{PAGE}?trace_data_url=/{name}"
                          "&is_streaming=false", timeout=timeout_ms)
                page.wait_for_function(LOADED, timeout=timeout_ms)
                return page
            yield open_trace
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(root, ignore_errors=True)


def stats(page):
    return page.evaluate(STATS)


def expected(path):
    """What a viewer that imports every event of a trace-event file must hold."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    work = [e for e in events if e["ph"] != "M"]
    tracks = {(e["pid"], e["tid"]) for e in work}
    return {"processes": sorted((pid, names.get(pid), sum(1 for t in tracks if t[0] == pid))
                                for pid in {t[0] for t in tracks}),
            "threads": len(tracks),
            "slices": sum(1 for e in work if e["ph"] == "X"
                          or (e["ph"] in "iI" and e.get("s", "t") == "t")),
            "instants": sum(1 for e in work if e["ph"] in "iI" and e.get("s") == "g"),
            "start_ms": min(e["ts"] for e in work) / 1000.0,
            "end_ms": max((e["ts"] + e.get("dur", 0)) / 1000.0 for e in work)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch")
    c = sub.add_parser("check")
    c.add_argument("traces", nargs="+")
    s = sub.add_parser("shot")
    s.add_argument("trace")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--from", dest="lo", type=float, help="ms from the trace's origin")
    s.add_argument("--to", dest="hi", type=float)
    s.add_argument("--select", help="the title of a slice to select (details panel)")
    s.add_argument("--width", type=int, default=1600)
    s.add_argument("--height", type=int, default=1000)
    a = ap.parse_args(argv)
    if a.cmd == "fetch":
        print(fetch())
        return 0
    why = missing()
    if why:
        print(f"trace_viewer: {why}", file=sys.stderr)
        return 2
    with viewer_session() as open_trace:
        if a.cmd == "check":
            status = 0
            for path in a.traces:
                try:
                    page = open_trace(path)
                except Exception as e:  # the page never held a model: say which file
                    print(json.dumps({"trace": path, "error": str(e).splitlines()[0]}))
                    status = 1
                    continue
                print(json.dumps({"trace": path, **stats(page)}))
                page.close()
            return status
        page = open_trace(a.trace, a.width, a.height)
        page.wait_for_timeout(1500)     # the viewer sets its initial viewport after load
        if a.lo is not None and a.hi is not None:
            # The importer shifts the earliest event to 0 ms.
            start = expected(a.trace)["start_ms"]
            page.evaluate(ZOOM, [a.lo - start, a.hi - start])
        if a.select and not page.evaluate(SELECT, a.select):
            print(f"trace_viewer: no slice titled {a.select!r}", file=sys.stderr)
            return 2
        page.wait_for_timeout(1000)     # the canvas redraws on the next animation frame
        page.screenshot(path=a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
