#!/usr/bin/env python3
"""Render a Trace Event Format JSON file (what `trace-decode timeline` writes) as an SVG
image laid out like Perfetto's timeline: one row per track, grouped under a header row per
process, labelled with the `process_name` / `thread_name` metadata; X events as boxes
coloured by a hash of their name (stacked by nesting depth, with the name inside when it
fits), instant events as small markers, a time axis in ms.

    python3 scripts/render_timeline.py trace.json -o timeline.svg
    python3 scripts/render_timeline.py trace.json -o zoom.svg --from 153.0 --to 153.8 --skip-empty
    python3 scripts/render_timeline.py trace.json -o x.svg --tracks 'main thread|token 0xb'

Pure standard library, no viewer needed. Boxes narrower than --min-px (0.5 px) are not
drawn one by one: neighbouring ones on a row (gaps under 1 px) are merged into a grey tick
at least 1 px wide that says how many events it stands for (`data-n`, and its tooltip);
instants that land on the same pixel are drawn once. The legend line at the bottom gives
the counts. Every drawn box has a <title> (name, start, duration) that a browser shows on
hover when the SVG is opened on its own.

Markup the tests rely on: each row label is a <text class="label" data-kind=...> whose
data-kind is "process_name" / "thread_name" when it comes from an M event ("implicit"
when a track has no metadata) and whose <title> holds the full name; each X event that
is drawn alone is a <rect class="ev">; each merged tick a <rect class="agg" data-n=N>.
No other <rect> carries those classes.
"""
import argparse
import colorsys
import json
import math
import re
import sys
import zlib
from xml.sax.saxutils import escape

FONT = "font-family='Helvetica,Arial,sans-serif'"
CHAR_W = 5.6            # approximate advance of a 10 px sans-serif character
LEVEL_H = 14            # one nesting level of boxes
ROW_PAD = 3
HEADER_H = 18           # a process's header row
AXIS_H = 34
TITLE_H = 20
LEGEND_H = 34
INSTANT_H = 7          # strip above a row's boxes for its instant markers


def load(path):
    """The traceEvents list of a JSON trace file ('-': stdin); the object form or a bare array."""
    if path == "-":
        doc = json.load(sys.stdin)
    else:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise ValueError(f"{path}: no traceEvents array")
    other = doc.get("otherData") if isinstance(doc, dict) else None
    return events, other if isinstance(other, dict) else {}


def colour(name):
    """A stable mid-saturation colour for a name (hue from its CRC32), and a text colour."""
    h = zlib.crc32(name.encode("utf-8", "replace"))
    hue = (h & 0xFFFF) / 0x10000
    light = 0.50 + ((h >> 16) & 0xF) / 15 * 0.16
    sat = 0.45 + ((h >> 20) & 0xF) / 15 * 0.25
    r, g, b = colorsys.hls_to_rgb(hue, light, sat)
    fill = "#%02x%02x%02x" % (round(r * 255), round(g * 255), round(b * 255))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return fill, ("#ffffff" if lum < 0.55 else "#1a1a1a")


def fit(text, width_px):
    """text cut to width_px (with an ellipsis), or '' when not even 3 characters fit."""
    n = int(width_px // CHAR_W)
    if n >= len(text):
        return text
    if n < 3:
        return ""
    return text[:n - 1] + "\u2026"


def nice_step(span_ms, target):
    """A 1/2/5 x 10^k tick step giving about `target` ticks over span_ms."""
    raw = span_ms / max(target, 1)
    k = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if m * k >= raw:
            return m * k
    return 10 * k


def fmt_ms(v, step):
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{v:.{digits}f}"


class Track:
    def __init__(self, pid, tid):
        self.pid, self.tid = pid, tid
        self.name = None            # thread_name, when the trace has one
        self.sort = None
        self.x = []                 # X events
        self.i = []                 # instant events

    @property
    def label(self):
        return self.name if self.name is not None else f"tid {self.tid}"


def build_tracks(events):
    """{pid: {...}} processes with their tracks from the events' pid/tid and M metadata."""
    procs = {}

    def proc(pid):
        return procs.setdefault(pid, {"pid": pid, "name": None, "sort": None, "tracks": {}})

    def track(pid, tid):
        t = proc(pid)["tracks"]
        if tid not in t:
            t[tid] = Track(pid, tid)
        return t[tid]

    for e in events:
        ph, pid, tid = e.get("ph"), e.get("pid", 0), e.get("tid", 0)
        args = e.get("args") or {}
        if ph == "M":
            n = e.get("name")
            if n == "process_name":
                proc(pid)["name"] = str(args.get("name", ""))
            elif n == "process_sort_index":
                proc(pid)["sort"] = args.get("sort_index")
            elif n == "thread_name":
                track(pid, tid).name = str(args.get("name", ""))
            elif n == "thread_sort_index":
                track(pid, tid).sort = args.get("sort_index")
        elif ph == "X":
            track(pid, tid).x.append(e)
        elif ph in ("i", "I", "R"):
            track(pid, tid).i.append(e)
    return procs


def ordered(procs):
    """[(process, [tracks])] in Perfetto's order: sort_index, then pid / tid."""
    def key_p(p):
        return (p["sort"] if isinstance(p["sort"], (int, float)) else 0, p["pid"])

    def key_t(t):
        return (t.sort if isinstance(t.sort, (int, float)) else 0, t.tid)
    return [(p, sorted(p["tracks"].values(), key=key_t)) for p in sorted(procs.values(), key=key_p)]


def in_window(e, t0, t1):
    ts, dur = e["ts"], e.get("dur", 0) or 0
    if dur <= 0:
        return t0 <= ts <= t1
    return ts < t1 and ts + dur > t0


def depths(xs):
    """[(event, depth)] of one track's X events by nesting (start order, longest first)."""
    out, stack = [], []
    for e in sorted(xs, key=lambda e: (e["ts"], -(e.get("dur") or 0))):
        end = e["ts"] + (e.get("dur") or 0)
        while stack and stack[-1] <= e["ts"]:
            stack.pop()
        out.append((e, len(stack)))
        stack.append(end)
    return out


def render(events, other=None, t_from=None, t_to=None, tracks=None, skip_empty=False,
           width=1400, label_w=360, min_px=0.5, title=None):
    """The SVG text of a trace. Times in ms (t_from/t_to); tracks: a regex searched in
    "process name / thread name"; skip_empty: drop tracks with nothing in the window."""
    other = other or {}
    timed = [e for e in events if e.get("ph") in ("X", "i", "I", "R") and isinstance(e.get("ts"), (int, float))]
    lo = min((e["ts"] for e in timed), default=0.0)
    hi = max((e["ts"] + (e.get("dur") or 0) for e in timed), default=1.0)
    t0 = t_from * 1000.0 if t_from is not None else min(lo, 0.0)
    t1 = t_to * 1000.0 if t_to is not None else hi
    if t1 <= t0:
        t1 = t0 + 1.0
    pattern = re.compile(tracks) if tracks else None

    area_x = label_w + 10
    area_w = width - area_x - 12
    scale = area_w / (t1 - t0)                      # px per µs

    def px(ts):
        return area_x + (ts - t0) * scale

    rows = []           # ("proc", process) | ("track", track, x_in, i_in, levels)
    n_x_window = 0
    for p, tlist in ordered(build_tracks(events)):
        kept = []
        pname = p["name"] if p["name"] is not None else f"pid {p['pid']}"
        for t in tlist:
            if pattern and not pattern.search(f"{pname} / {t.label}"):
                continue
            xs = [e for e in t.x if isinstance(e.get("ts"), (int, float)) and in_window(e, t0, t1)]
            ins = [e for e in t.i if isinstance(e.get("ts"), (int, float)) and t0 <= e["ts"] <= t1]
            if skip_empty and not xs and not ins:
                continue
            placed = depths(xs)
            levels = 1 + max((d for _, d in placed), default=0)
            kept.append(("track", t, placed, ins, levels))
            n_x_window += len(xs)
        if kept or (not pattern and not skip_empty):
            rows.append(("proc", p, pname))
            rows.extend(kept)

    out = []
    stats = {"boxes": 0, "labelled": 0, "agg": 0, "agg_events": 0, "zero": 0,
             "instants": 0, "instant_marks": 0}
    y = TITLE_H + AXIS_H
    body = []
    for row in rows:
        if row[0] == "proc":
            p, pname = row[1], row[2]
            kind = "process_name" if p["name"] is not None else "implicit"
            shown = f"{pname} (pid {p['pid']})" if p["name"] is not None else pname
            body.append(f"<rect x='0' y='{y}' width='{width}' height='{HEADER_H}' fill='#e8eaed'/>")
            body.append(f"<text class='label' data-kind='{kind}' x='6' y='{y + 13}' font-size='11' "
                        f"font-weight='bold' fill='#202124'>{escape(fit(shown, width - 12))}"
                        f"<title>{escape(pname)}</title></text>")
            y += HEADER_H
            continue
        _, t, placed, ins, levels = row
        top = y + (INSTANT_H if ins else 0)         # instants get a strip above the boxes
        h = levels * LEVEL_H + 2 * ROW_PAD + (top - y)
        kind = "thread_name" if t.name is not None else "implicit"
        body.append(f"<line x1='0' x2='{width}' y1='{y + h}' y2='{y + h}' stroke='#dadce0'/>")
        body.append(f"<text class='label' data-kind='{kind}' x='16' y='{y + ROW_PAD + 10}' "
                    f"font-size='10' fill='#3c4043'>{escape(fit(t.label, label_w - 20))}"
                    f"<title>{escape(t.label)}</title></text>")
        # boxes: wide ones one by one, narrow ones merged per level
        narrow = {}
        for e, d in placed:
            ts, dur = e["ts"], e.get("dur") or 0
            a, b = max(ts, t0), min(ts + dur, t1)
            w = (b - a) * scale
            by = top + ROW_PAD + d * LEVEL_H
            if w < min_px:
                narrow.setdefault(d, []).append((px(a), e))
                if dur <= 0:
                    stats["zero"] += 1
                continue
            name = str(e.get("name", ""))
            fill, ink = colour(name)
            tip = f"{name}\n{ts / 1000:.6f} ms, {dur:.3f} \u00b5s"
            body.append(f"<rect class='ev' x='{px(a):.2f}' y='{by}' width='{w:.2f}' height='{LEVEL_H - 1}' "
                        f"fill='{fill}'><title>{escape(tip)}</title></rect>")
            stats["boxes"] += 1
            label = fit(name, w - 4)
            if label:
                stats["labelled"] += 1
                body.append(f"<text x='{px(a) + 2:.2f}' y='{by + 10}' font-size='10' fill='{ink}' "
                            f"pointer-events='none'>{escape(label)}</text>")
        for d, items in sorted(narrow.items()):
            items.sort(key=lambda it: it[0])
            groups = []
            for x, e in items:
                end = x + ((e.get("dur") or 0) * scale)
                if groups and x <= groups[-1][1] + 1.0:
                    groups[-1][1] = max(groups[-1][1], end)
                    groups[-1][2].append(e)
                else:
                    groups.append([x, end, [e]])
            by = top + ROW_PAD + d * LEVEL_H
            for g, (x, end, es) in enumerate(groups):
                w = max(end - x, 1.0 if len(es) > 1 else 1.5)
                names = {}
                for e in es:
                    names[str(e.get("name", ""))] = names.get(str(e.get("name", "")), 0) + 1
                most = sorted(names.items(), key=lambda kv: -kv[1])[:3]
                if len(es) == 1:
                    fill = colour(most[0][0])[0]
                    tip = f"{most[0][0]}\n{es[0]['ts'] / 1000:.6f} ms, {es[0].get('dur') or 0:.3f} \u00b5s"
                else:
                    fill = "#80868b"
                    tip = f"{len(es)} events: " + ", ".join(f"{n} \u00d7{c}" for n, c in most) + \
                        (", \u2026" if len(names) > 3 else "")
                body.append(f"<rect class='agg' data-n='{len(es)}' x='{x:.2f}' y='{by}' width='{w:.2f}' "
                            f"height='{LEVEL_H - 1}' fill='{fill}'><title>{escape(tip)}</title></rect>")
                stats["agg"] += 1
                stats["agg_events"] += len(es)
                if len(es) == 1:            # a lone tick: its name to its right, if there is room
                    room = (groups[g + 1][0] if g + 1 < len(groups) else area_x + area_w) - (x + w) - 6
                    label = fit(most[0][0], room)
                    if label:
                        stats["labelled"] += 1
                        body.append(f"<text x='{x + w + 2:.2f}' y='{by + 10}' font-size='10' "
                                    f"fill='#3c4043'>{escape(label)}</text>")
        # instants: a small downward triangle at the top of the row, once per pixel
        seen = set()
        for e in sorted(ins, key=lambda e: e["ts"]):
            stats["instants"] += 1
            x = px(e["ts"])
            key = (round(x * 2), str(e.get("name", "")))
            if key in seen:
                continue
            seen.add(key)
            stats["instant_marks"] += 1
            fill = colour(str(e.get("name", "")))[0]
            body.append(f"<path class='inst' d='M{x - 3.5:.2f} {y + 1}h7l-3.5 6z' fill='{fill}' "
                        f"stroke='#202124' stroke-width='0.4'><title>{escape(str(e.get('name', '')))}\n"
                        f"{e['ts'] / 1000:.6f} ms</title></path>")
        y += h
    grid_bottom = y

    # axis with grid lines
    span_ms = (t1 - t0) / 1000.0
    step = nice_step(span_ms, area_w / 110)
    axis = [f"<rect x='{area_x}' y='{TITLE_H}' width='{area_w}' height='{AXIS_H - 6}' fill='#f8f9fa'/>"]
    first = math.ceil(t0 / 1000.0 / step - 1e-9) * step
    k = 0
    while first + k * step <= t1 / 1000.0 + 1e-9 and k < 1000:
        v = first + k * step
        x = px(v * 1000.0)
        axis.append(f"<line x1='{x:.2f}' x2='{x:.2f}' y1='{TITLE_H + 16}' y2='{grid_bottom}' stroke='#dadce0' "
                    f"stroke-width='0.6'/>")
        axis.append(f"<text x='{x + 2:.2f}' y='{TITLE_H + 12}' font-size='10' fill='#5f6368'>"
                    f"{fmt_ms(v, step)} ms</text>")
        k += 1
    axis.append(f"<line x1='{area_x}' x2='{area_x}' y1='{TITLE_H}' y2='{grid_bottom}' stroke='#bdc1c6'/>")

    if title is None:
        bits = [str(other[k]) for k in ("capture", "gpu", "driver") if other.get(k)]
        title = " \u00b7 ".join(bits) if bits else "trace"
    head = f"{title} \u2014 {t0 / 1000:.{max(0, 3 - int(math.log10(max(span_ms, 1e-3))))}f}" \
           f"\u2013{t1 / 1000:.{max(0, 3 - int(math.log10(max(span_ms, 1e-3))))}f} ms"

    legend = (f"{n_x_window} X events in the window: {stats['boxes']} drawn as boxes; {stats['agg_events']}"
              f" narrower than {min_px:g} px ({stats['zero']} of duration 0) drawn as {stats['agg']} ticks of"
              f" \u2265 1 px, a grey tick standing for several neighbouring events (its tooltip counts them)."
              f" Names shown where they fit ({stats['labelled']}).")
    legend2 = (f"\u25bc instant events: {stats['instants']} ({stats['instant_marks']} markers; those on the"
               f" same pixel drawn once). Colour: hash of the event name. Hover a box for its name and times.")
    height = grid_bottom + LEGEND_H
    out.append("<?xml version='1.0' encoding='UTF-8'?>")
    out.append(f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
               f"viewBox='0 0 {width} {height}' {FONT}>")
    out.append(f"<rect width='{width}' height='{height}' fill='#ffffff'/>")
    out.append(f"<text x='6' y='14' font-size='12' font-weight='bold' fill='#202124'>{escape(head)}</text>")
    out.extend(axis)
    out.extend(body)
    out.append(f"<text class='legend' x='6' y='{grid_bottom + 14}' font-size='10' fill='#5f6368'>"
               f"{escape(legend)}</text>")
    out.append(f"<text class='legend' x='6' y='{grid_bottom + 27}' font-size='10' fill='#5f6368'>"
               f"{escape(legend2)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="trace-event JSON file ('-': stdin)")
    ap.add_argument("-o", "--output", default="-", help="SVG file to write ('-': stdout)")
    ap.add_argument("--from", dest="t_from", type=float, help="window start, ms")
    ap.add_argument("--to", dest="t_to", type=float, help="window end, ms")
    ap.add_argument("--tracks", help="regex searched in 'process name / thread name'; other tracks are left out")
    ap.add_argument("--skip-empty", action="store_true", help="leave out tracks with nothing in the window")
    ap.add_argument("--width", type=int, default=1400, help="image width in px (default 1400)")
    ap.add_argument("--label-width", type=int, default=360, help="width of the label column in px")
    ap.add_argument("--min-px", type=float, default=0.5,
                    help="boxes narrower than this are merged into ticks (default 0.5)")
    ap.add_argument("--title", help="heading (default: otherData capture, gpu, driver)")
    a = ap.parse_args(argv)
    events, other = load(a.trace)
    svg = render(events, other, a.t_from, a.t_to, a.tracks, a.skip_empty, a.width, a.label_width,
                 a.min_px, a.title)
    if a.output == "-":
        sys.stdout.write(svg)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
