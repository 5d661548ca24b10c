"""The JSON view of a CaptureModel (docs/json.md): the parts in order, the bulk --all-fields
adds (ELIDED), and a writer that streams the long lists one item at a time, byte for byte what
json.dump(indent=1) writes. tracer/report.py renders the text report and re-exports these."""
import json

from decoders.jsontext import compact_encoder
from decoders.ranks import processes_meta
from decoders.session import SpillList
from tracer.parallel import render_ranges


def coverage_stats(model):
    try:
        from decoders.ioctl import coverage_of
    except ImportError:
        return None
    # one pass over each ioctl's facts, taken when it was decoded: a job's ioctls may be
    # hundreds of thousands, read back from the decode's file without their bodies
    # (decoders/session/model.py IoctlList)
    return coverage_of(i.get("_facts") for i in model.ioctls)


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, (list, tuple, SpillList)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).hex()
    return obj


# What the default JSON leaves out (issue 24: 10,100 launches made 287 MB, most of it every
# field of every QMD, the driver's constant bank 0 words and the pushbuffer bytes of every
# submission); `--all-fields` keeps them. Dotted paths as docs/json.md names them.
ELIDED = ("launches[].qmd_fields", "launches[].cbank0_driver.hex",
          "launches[].semaphores[].fields", "launches[].attribution.api_call",
          "submissions[].segments[].hex", "syncs[].fields",
          # a long real job (a 100-step transformer: 167 MB -> 115 MB): where each VA lands
          # (the same few memory objects on every launch), the parameter bytes when the
          # arguments hold them one by one, and a call's bytes where they are the QMD's
          "launches[].resolved", "launches[].params.hex",
          "launches[].attribution.args[].api_hex")
ALL_FIELDS_FLAG = "--all-fields"


def _elided(all_fields):
    return {"paths": [] if all_fields else list(ELIDED), "complete_with": ALL_FIELDS_FLAG}


def _processes(model):
    """meta.processes: each process with its exit status as a shell shows it and where
    that came from (tracer/outcome.py process_exit)."""
    from tracer.outcome import process_exit
    return [dict(p, **process_exit(model, p)[0]) for p in processes_meta(model)]


def _brief_launch(s):
    """A launch summary without ELIDED's parts (new dicts; `s` is not changed). The
    attribution's api_call is launches[].api_call, the same dict; params.hex goes only
    where every argument of attribution.args has its bytes, an argument's api_hex only
    where it equals its hex."""
    s = dict(s)
    s.pop("qmd_fields", None)
    cb = s.get("cbank0_driver")
    if isinstance(cb, dict) and "hex" in cb:
        s["cbank0_driver"] = {k: v for k, v in cb.items() if k != "hex"}
    if s.get("semaphores"):
        s["semaphores"] = [{k: v for k, v in m.items() if k != "fields"}
                           if isinstance(m, dict) else m for m in s["semaphores"]]
    s.pop("resolved", None)
    a = s.get("attribution")
    if isinstance(a, dict):
        a = s["attribution"] = {k: v for k, v in a.items() if k != "api_call"}
        args = a.get("args")
        if args:
            a["args"] = [_brief_arg(x) for x in args]
            p = s.get("params")
            if isinstance(p, dict) and "hex" in p and _args_hold_bytes(args):
                s["params"] = {k: v for k, v in p.items() if k != "hex"}
    return s


def _args_hold_bytes(args):
    """Whether attribution.args has every argument's bytes (params.hex is then left out)."""
    return all(isinstance(x, dict) and x.get("hex") is not None for x in args)


def _brief_arg(x):
    """An argument without api_hex where the call passed the bytes the QMD holds."""
    if isinstance(x, dict) and "api_hex" in x and x["api_hex"] == x.get("hex"):
        return {k: v for k, v in x.items() if k != "api_hex"}
    return x


def _brief_submission(s):
    s = dict(s)
    s["segments"] = [{k: v for k, v in g.items() if k != "hex"} for g in s["segments"]]
    return s


def _brief_sync(s):
    return {k: v for k, v in s.items() if k != "fields"}


def _parts(model, all_fields=True):
    """(key, value) of the JSON object in order: what to_json and render_json write."""
    from tracer.outcome import run_json
    stats = model.stats()
    cov = coverage_stats(model)
    if cov:
        stats.update(cov)
    run = run_json(model)
    return (
        ("elided", _elided(all_fields)),
        ("meta", dict(model.meta, capture=model.path, header=model.header,
                      processes=_processes(model))),
        ("exit", run["exit"]),
        ("failed_calls", run["failed_calls"]),
        ("ioctls", model.ioctls),
        ("mmaps", model.mmaps),
        ("submissions", model.submissions),
        ("launches", model.launches),
        ("syncs", model.syncs),
        ("copies", model.copies),
        ("api_calls", model.api_calls),
        ("marks", model.marks),
        ("notes", model.notes),
    ) + ((("windows", model.windows),) if model.windows else ()) + (
        ("stats", dict(stats, failed_api_calls=model.failed_call_count)),
        ("problems", [str(p) for p in model.problems]),
    )


def to_json(model, all_fields=True):
    """The JSON object as data (render_json writes the same, streamed). `all_fields`
    False: without ELIDED's parts (what `trace-decode --json` prints by default)."""
    out = {}
    for key, value in _parts(model, all_fields):
        if key == "launches":
            value = [l.summary if hasattr(l, "summary") else l for l in value]
            if not all_fields:
                value = [_brief_launch(l) for l in value]
        elif key == "submissions" and not all_fields:
            value = [_brief_submission(x) for x in value]
        elif key == "syncs" and not all_fields:
            value = [_brief_sync(x) for x in value]
        out[key] = value
    return _clean(out)


def _json_at(obj, level):
    """obj as json.dump(indent=1) writes it nested `level` deep (JSON strings hold no raw
    newline, so indenting every line is exact)."""
    return json.dumps(obj, indent=1, default=str).replace("\n", "\n" + " " * level)


_ENCODE = json.encoder.encode_basestring_ascii       # json.dumps' own (C) string encoder
_INF = float("inf")


def _float_text(o):
    """json.dumps' text of a float (allow_nan)."""
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _leaf_text(o):
    """json.dumps(o, default=str)'s text of a value that is no dict, list or tuple."""
    if isinstance(o, str):
        return _ENCODE(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float_text(o)
    return _ENCODE(str(o))


_KEYS = {}      # dict key -> its JSON text and ": " ("" for a "_private" key)


def _key_text(k):
    text = "" if k.startswith("_") else _ENCODE(k) + ": "
    if len(_KEYS) >= 65536:
        _KEYS.clear()
    _KEYS[k] = text
    return text


class _Text(str):
    """JSON text written as it is by _emit (made by _json_text at the same level)."""


def _emit(o, level, w):
    """Write what _json_at(_clean(o), level) returns, in pieces, in one walk: json.dumps'
    indent=1 layout, separators, key and string encoding (its C string encoder), float and
    int text and default=str, without building the cleaned copy first or running json's
    pure-Python indenting encoder (~5x slower on a long capture's launches)."""
    if o.__class__ is _Text:
        w(o)
    elif isinstance(o, dict):
        nl = "\n" + " " * (level + 1)
        sep = "{" + nl
        keys = _KEYS
        for k, v in o.items():
            kt = keys.get(k)
            if kt is None:
                kt = _key_text(k)
            if not kt:                      # "_private" keys are not part of the JSON
                continue
            cls = v.__class__
            if cls is int:
                w(sep + kt + int.__repr__(v))
            elif cls is str:
                w(sep + kt + _ENCODE(v))
            elif v is None:
                w(sep + kt + "null")
            else:
                w(sep + kt)
                _emit(v, level + 1, w)
            sep = "," + nl
        w("{}" if sep[0] == "{" else "\n" + " " * level + "}")
    elif isinstance(o, (list, tuple, SpillList)):
        first = True
        nl = "\n" + " " * (level + 1)
        for v in o:
            w("[" + nl if first else "," + nl)
            first = False
            cls = v.__class__
            if cls is str:
                w(_ENCODE(v))
            elif cls is int:
                w(int.__repr__(v))
            elif v is None:
                w("null")
            else:
                _emit(v, level + 1, w)
        w("[]" if first else "\n" + " " * level + "]")
    elif isinstance(o, (bytes, bytearray)):
        w('"' + bytes(o).hex() + '"')
    else:
        w(_leaf_text(o))


def write_indented(obj, out):
    """json.dump(obj, out, indent=1) and a newline, byte for byte, a SpillList's items read
    one at a time (_emit: "_private" keys left out, bytes as hex, as the JSON report)."""
    _emit(obj, 0, out.write)
    out.write("\n")


def _json_text(obj, level):
    """_json_at(_clean(obj), level), byte for byte."""
    parts = []
    _emit(obj, level, parts.append)
    return "".join(parts)


QMD_TEXTS = 1024    # QMD images whose fields' JSON text render_json keeps


def _launch_views(launches, texts=None):
    """Each launch's summary for the JSON, its `qmd_fields` text made once per distinct QMD
    image (version, bytes): a launch loop's GRID_NULL QMDs repeat, and every field of a
    384-byte QMD is most of a launch's JSON. Byte for byte what .summary renders to.
    `texts`: the cache, kept by the caller across calls."""
    texts = {} if texts is None else texts
    for l in launches:
        if not hasattr(l, "view"):
            yield l
            continue
        key = (l.version, l.qmd_bytes)
        text = texts.get(key)
        if text is None:
            s = l.view()
            if len(texts) >= QMD_TEXTS:
                texts.clear()
            texts[key] = _Text(_json_text(s["qmd_fields"], 3))
            s = dict(s, qmd_fields=texts[key])
        else:
            s = l.view(qmd_fields=text)
        yield s


_LONG_LISTS = ("ioctls", "mmaps", "submissions", "launches", "syncs", "copies", "api_calls",
               "marks", "notes", "problems", "failed_calls")


def render_json(model, out, all_fields=True, progress=None, prerender=None):
    """Write to_json(model, all_fields) to `out`, one array item at a time: a long capture's
    submissions and launches are never all in memory (decoders/session.py SpillList). With
    all_fields, byte for byte what json.dump(indent=1) writes; without, the same but each
    item of COMPACT_LISTS on one line (_compact), which parses to the same object.
    `progress(done, total)`: the long lists' items written, of all of them. `prerender`:
    a tracer/prerender.py Prerender made with prerender_views(all_fields), attached to the
    decode of `model` and finished: the batches it rendered are written as it did."""
    w = out.write
    parts = list(_parts(model, all_fields))
    advance = None
    if progress is not None:
        done = [0]
        total = sum(len(v) for key, v in parts if key in _LONG_LISTS and v is not None)

        def advance(n):
            done[0] += n
            progress(done[0], total)
    w("{")
    for k, (key, value) in enumerate(parts):
        w(("," if k else "") + "\n " + json.dumps(key) + ": ")
        if key not in _LONG_LISTS:
            w(_json_text(value, 1))
            continue
        first = [True]

        def chunk(text):
            if text:
                w(("[\n  " if first[0] else ",\n  ") + text)
                first[0] = False
        # the long lists: rendered a range at a time, by worker processes when long
        one = _LaunchText(all_fields) if key == "launches" else \
            _item_text if all_fields or key not in COMPACT_LISTS else \
            _submission_text if key == "submissions" else \
            _sync_text if key == "syncs" else _compact_item
        texts = prerender.texts(model, key) if prerender is not None else None
        if texts:
            from tracer.prerender import render
            render(value, one, chunk, texts, prerender.read, advance=advance)
        else:
            render_ranges(value, one, chunk, advance=advance)
        w("[]" if first[0] else "\n ]")
    w("\n}\n")


COMPACT_LISTS = ("submissions", "launches", "syncs", "copies", "api_calls")    # a line each


def prerender_views(all_fields=False):
    """{list: one(index, item) -> its text}: what render_json makes of the items of the
    lists a decode may render ahead (tracer/prerender.py), the longest ones."""
    if all_fields:
        return {}
    return {"launches": _LaunchText(False), "api_calls": _compact_item,
            "submissions": _submission_text}


def _compact_item(_, item):
    return _compact(item)


def _sync_text(_, item):
    return _compact(_brief_sync(item))


def _item_text(_, item):
    return _json_text(item, 2)


def _submission_text(_, item):
    return _compact(_brief_submission(item))


def _compact_default(o):
    """json.dumps(_clean(o), default=str)'s value for what the C encoder does not know."""
    if isinstance(o, (bytes, bytearray)):
        return bytes(o).hex()
    if isinstance(o, SpillList):
        return list(o)
    return str(o)


# The default JSON's long lists (submissions, launches, api_calls) hold one item per line,
# compact (decoders/jsontext.py: orjson where it writes what json's C encoder would, else
# json's): ~3x faster than the indenting walk above, which json.dumps would do in pure
# Python, and a quarter smaller; a line per item also greps. Their items carry no
# "_private" keys (tests/test_json_render.py checks every capture's); the floats here are
# finite (attribute._value).
_compact = compact_encoder(_compact_default)


class _LaunchText:
    """A launch's JSON text, each distinct QMD image's `qmd_fields` made once (what
    _launch_views does for a stream of launches, one launch at a time); without
    all_fields, the launch without ELIDED's parts (its QMD fields never extracted)."""

    def __init__(self, all_fields=True):
        self.texts = {}
        self.all_fields = all_fields

    def __call__(self, _, launch):
        if self.all_fields:
            return _json_text(next(_launch_views((launch,), self.texts)), 2)
        s = launch.view(qmd_fields=_NO_FIELDS) if hasattr(launch, "view") else launch
        return _compact(_brief_launch(s))


_NO_FIELDS = _Text("null")      # stands in for qmd_fields, which _brief_launch drops
