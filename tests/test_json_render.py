"""render_json's one-walk writer (tracer/report.py _json_text) against what it replaces:
json.dumps(_clean(obj), indent=1, default=str) nested `level` deep (_json_at), byte for byte."""
import enum
import io
import json
import math

from decoders.session import SpillList
from tracer.report import _clean, _json_at, _json_text


class _Flag(enum.IntEnum):
    A = 3


class _Name(str):
    pass


def _values():
    spill = SpillList(keep=1)
    for i in range(5):
        spill.append({"i": i, "b": bytes([i])})
    return [
        {}, [], (), "", "é\u2028\"\\\n", 0, -1, 2 ** 70, True, False, None, 1.5, -0.0,
        math.nan, math.inf, -math.inf, b"\x00\xff", bytearray(b"ab"), _Flag.A, _Name("x"),
        {1, 2}, complex(1, 2), spill,
        {"_hidden": 1, "shown": {"_x": [], "y": ({"z": None},)}, "": "empty key"},
        {"nested": [[[]], [{}], [1, [2, [3, {"a": b"\x01"}]]]], "f": [0.1, 1e300, 5e-324]},
        [{"k": True, "n": None, "s": "t", "i": 7, "l": [1, "2", None, False]}],
    ]


def test_json_text_equals_dumps_of_clean():
    for level in (0, 1, 2, 5):
        for v in _values():
            assert _json_text(v, level) == _json_at(_clean(v), level), (level, v)
        whole = {"items": _values(), "_no": 1}
        assert _json_text(whole, level) == _json_at(_clean(whole), level)


def test_worker_processes_write_the_same_json(monkeypatch):
    """render_json with its long lists rendered by forked workers (tracer/parallel.py) is
    byte for byte what one process writes: launch-loop-10k's 10,100 launches, spilled past
    the first 256, and its submissions and API calls, in order."""
    import io

    from conftest import capture_path
    from decoders.session import decode_capture
    from tracer import parallel
    from tracer.report import render_json
    model = decode_capture(capture_path("launch-loop-10k"))
    assert isinstance(model.launches, SpillList) and len(model.launches) > parallel.MIN_ITEMS
    texts = []
    # 3 workers, then 3 with a worker's text cut after ~one launch (CHUNK_TEXT: the parent
    # renders the rest of each range)
    for jobs, cut in (("1", parallel.CHUNK_TEXT), ("3", parallel.CHUNK_TEXT), ("3", 1000)):
        monkeypatch.setenv("TRACE_LAUNCH_JOBS", jobs)
        monkeypatch.setattr(parallel, "CHUNK_TEXT", cut)
        out = io.StringIO()
        render_json(model, out)
        texts.append(out.getvalue())
    assert texts[0] == texts[1] == texts[2]
    assert texts[0].count('"qmd_address"') >= len(model.launches)


def test_spill_list_ranges():
    """SpillList.iter_range (what a worker reads) gives list slices, across kept items,
    marshalled batches and the open batch."""
    import random
    rng = random.Random(3)
    for keep in (0, 3, 100):
        spill = SpillList(keep)
        for i in range(1000):
            spill.append({"i": i})
        for _ in range(100):
            a = rng.randrange(0, 1005)
            b = rng.randrange(a, 1010)
            assert [x["i"] for x in spill.iter_range(a, b)] == list(range(1000))[a:b]


def test_compact_items_parse_to_their_clean_objects():
    """The default JSON's long lists are one compact line per item (tracer/report_json.py
    _compact: orjson, or json's C encoder): each line parses to _clean(item), i.e. what the
    indented walk writes, on every committed capture (their first 300 items of each list).
    This also checks the premise that makes a C encoder right: no "_private" key inside
    them."""
    import json

    from conftest import ALL, capture_path
    from decoders.session import decode_capture
    from tracer import report_json as R
    for name in ALL:
        model = decode_capture(capture_path(name))
        one = R._LaunchText(all_fields=False)
        for k, launch in enumerate(list(model.launches)[:300]):
            text = one(k, launch)
            assert "\n" not in text
            s = launch.view(qmd_fields=R._NO_FIELDS) if hasattr(launch, "view") else launch
            assert json.loads(text) == json.loads(_json_text(R._brief_launch(s), 0)), (name, k)
        for item in list(model.submissions)[:300]:
            assert json.loads(R._submission_text(0, item)) == \
                json.loads(_json_text(R._brief_submission(item), 0)), name
        for item in list(model.api_calls)[:300]:
            assert json.loads(R._compact_item(0, item)) == json.loads(_json_text(item, 0)), name


def test_compact_writes_what_json_would_where_orjson_differs():
    """_compact takes orjson's text only where it is all ASCII and orjson can write the item:
    a capture's string with a terminal's control character (U+009B, CSI) or any non-ASCII
    character is escaped as json escapes it; a key that is not a string and an integer past
    64 bits are json's; bytes are hex either way. orjson is a dependency: it is used."""
    from decoders import jsontext
    from tracer import report_json as R
    assert jsontext.orjson is not None

    def json_text(obj):
        return json.dumps(obj, separators=(",", ":"), default=R._compact_default)
    for obj in ({"name": "k\u009b2J\u202e", "s": "é"}, {"big": 2 ** 70, "neg": -2 ** 64},
                {7: "int key"}, {"b": b"\x00\xff", "t": (1, [2, None]), "f": False}):
        text = R._compact(obj)
        assert text == json_text(obj) and text.isascii(), obj
    plain = {"grid": [2048, 1, 1], "value": 1e-06, "hex": "acc52737", "kernel": True}
    assert json.loads(R._compact(plain)) == plain


def test_json_of_a_header_with_nan_is_json(tmp_path):
    """A capture is hostile: a header whose metadata holds NaN and -Infinity (Python's json
    reads them) gives JSON all the same, the two as the strings they were (synthetic: a
    header and an END record, written by decoders/capture/writer.py)."""
    from decoders.capture.writer import append_end, create_capture
    from decoders.session import decode_capture
    from tracer.report import render_json
    path = tmp_path / "nan.tlc"
    create_capture(str(path), {"gpu_name": float("nan"), "driver": float("-inf")})
    append_end(str(path), 0)
    for all_fields in (False, True):
        out = io.StringIO()
        render_json(decode_capture(str(path)), out, all_fields=all_fields)

        def refuse(constant):
            raise AssertionError(f"{constant} in the JSON")
        doc = json.loads(out.getvalue(), parse_constant=refuse)
        assert (doc["meta"]["gpu_name"], doc["meta"]["driver"]) == ("NaN", "-Infinity")
