"""docs/json-schema.json against what `trace-decode CAPTURE --json` prints for every capture
in captures/ (a golden-vs-schema test), and the schema against docs/json.md's key tables.

The schema uses a small part of JSON Schema (draft 2020-12): type, required, properties,
items, additionalProperties, enum, const, minimum, maximum, minItems, maxItems, pattern,
anyOf and local $ref. `validate` below implements exactly that part, so the test needs no
new dependency; where the `jsonschema` package is installed it checks the same documents
too, and checks that the schema itself is a valid draft 2020-12 schema.
"""
import io
import json
import re

import pytest

from conftest import ALL, ROOT

SCHEMA_PATH = ROOT / "docs" / "json-schema.json"
KNOWN = {"$schema", "title", "description", "$defs", "type", "required", "properties", "items",
         "additionalProperties", "enum", "const", "minimum", "maximum", "minItems", "maxItems",
         "pattern", "anyOf", "$ref"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _schema():
    return json.loads(SCHEMA_PATH.read_text())


def _type_check(names):
    checks = []
    for n in names:
        if n == "integer":
            checks.append(lambda v: isinstance(v, int) and not isinstance(v, bool))
        elif n == "number":
            checks.append(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
        else:
            checks.append(lambda v, t=TYPES[n]: isinstance(v, t))
    return lambda v: any(c(v) for c in checks)


def _path(p):
    parts = []
    while isinstance(p, tuple):
        p, key = p
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return p + "".join(reversed(parts))


class Validator:
    """The schema subset compiled once into one check per schema node (the 10,000-launch
    capture has ~2 million values: a tree walk per value took 25 s, this takes a few)."""

    def __init__(self, root, limit=20):
        self.root = root
        self.limit = limit
        self._refs = {}

    def errors(self, value):
        out = []
        self.compile(self.root)(value, "$", out)
        return [f"{_path(p)}: {m}" for p, m in out]

    def compile(self, schema):
        unknown = set(schema) - KNOWN
        assert not unknown, f"schema keyword(s) this validator does not implement: {unknown}"
        if schema == {"type": "integer", "minimum": 0}:          # most values: one check
            def uint(v, p, e):
                if type(v) is not int or v < 0:
                    e.append((p, f"{v!r} is not an integer >= 0"))
            return uint
        steps = []
        if "$ref" in schema:
            ref = schema["$ref"]
            assert ref.startswith("#/$defs/"), ref
            name = ref[len("#/$defs/"):]
            refs = self._refs
            if name not in refs:
                refs[name] = None                  # a recursive reference resolves later
                refs[name] = self.compile(self.root["$defs"][name])
            steps.append(lambda v, p, e, name=name: refs[name](v, p, e))
        if "anyOf" in schema:
            alts = [self.compile(a) for a in schema["anyOf"]]

            def any_of(v, p, e):
                for a in alts:
                    trial = []
                    a(v, p, trial)
                    if not trial:
                        return True
                e.append((p, f"matches none of anyOf ({str(v)[:80]})"))
                return False
            steps.append(any_of)
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            ok = _type_check(names)

            def typed(v, p, e):
                if not ok(v):
                    e.append((p, f"{type(v).__name__} is not {'/'.join(names)}"))
                    return False
            steps.append(typed)
        if "const" in schema:
            c = schema["const"]
            steps.append(lambda v, p, e: (v == c and type(v) is type(c)) or
                         e.append((p, f"{v!r} != const {c!r}")))
        if "enum" in schema:
            en = schema["enum"]
            steps.append(lambda v, p, e: v in en or e.append((p, f"{v!r} not in {en}")))
        num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
        if "minimum" in schema:
            lo = schema["minimum"]
            steps.append(lambda v, p, e: not num(v) or v >= lo or
                         e.append((p, f"{v} < minimum {lo}")))
        if "maximum" in schema:
            hi = schema["maximum"]
            steps.append(lambda v, p, e: not num(v) or v <= hi or
                         e.append((p, f"{v} > maximum {hi}")))
        if "pattern" in schema:
            rx = re.compile(schema["pattern"])
            steps.append(lambda v, p, e: not isinstance(v, str) or rx.search(v) or
                         e.append((p, f"{v[:40]!r} does not match {rx.pattern}")))
        if "minItems" in schema:
            n0 = schema["minItems"]
            steps.append(lambda v, p, e: not isinstance(v, list) or len(v) >= n0 or
                         e.append((p, f"{len(v)} items < minItems {n0}")))
        if "maxItems" in schema:
            n1 = schema["maxItems"]
            steps.append(lambda v, p, e: not isinstance(v, list) or len(v) <= n1 or
                         e.append((p, f"{len(v)} items > maxItems {n1}")))
        if "items" in schema:
            item = self.compile(schema["items"])
            limit = self.limit

            def items(v, p, e):
                if isinstance(v, list):
                    for n, x in enumerate(v):
                        if len(e) >= limit:
                            return
                        item(x, (p, n), e)
            steps.append(items)
        if "required" in schema or "properties" in schema or "additionalProperties" in schema:
            required = schema.get("required", ())
            props = {k: self.compile(v) for k, v in schema.get("properties", {}).items()}
            extra = schema.get("additionalProperties", True)
            extra_check = self.compile(extra) if isinstance(extra, dict) else None

            def obj(v, p, e):
                if not isinstance(v, dict):
                    return
                for key in required:
                    if key not in v:
                        e.append((p, f"missing required key {key!r}"))
                for key, x in v.items():
                    check = props.get(key)
                    if check is not None:
                        check(x, (p, key), e)
                    elif extra is False:
                        e.append((p, f"unexpected key {key!r}"))
                    elif extra_check is not None:
                        extra_check(x, (p, key), e)
            steps.append(obj)

        def run(v, p, e):
            for step in steps:
                if step(v, p, e) is False:     # a wrong type: the other checks say nothing more
                    return
        return run


def validate(value, schema):
    """Errors ('path: message') of `value` against `schema` (the subset named above)."""
    return Validator(schema).errors(value)


@pytest.fixture(scope="module")
def schema():
    return _schema()


def _json_output(path, all_fields=False):
    """What `trace-decode PATH --json [--all-fields]` prints, parsed (in-process, as
    test_cli does)."""
    from tracer.cli_common import print_report
    out = io.StringIO()
    rc = print_report(str(path), out, as_json=True, all_fields=all_fields)
    return rc, json.loads(out.getvalue(), parse_constant=_not_json)


def _not_json(constant):
    """json.loads takes NaN and Infinity; JSON (and jq, JSON.parse) does not."""
    raise AssertionError(f"{constant} in the JSON: no JSON parser but Python's reads it")


def _elided_parts(doc):
    """[(dotted path, present?)] for every place an `elided` path names in `doc`."""
    out = []
    for launch in doc["launches"]:
        out.append(("launches[].qmd_fields", "qmd_fields" in launch))
        if launch["cbank0_driver"] is not None:
            out.append(("launches[].cbank0_driver.hex", "hex" in launch["cbank0_driver"]))
        for sem in launch["semaphores"]:
            if isinstance(sem, dict):
                out.append(("launches[].semaphores[].fields", "fields" in sem))
        out.append(("launches[].resolved", "resolved" in launch))
        a = launch.get("attribution")
        if a is not None:
            out.append(("launches[].attribution.api_call", "api_call" in a))
            args = a.get("args") or []
            for x in args:
                if x["hex"] is not None and x.get("api_hex", x["hex"]) == x["hex"]:
                    out.append(("launches[].attribution.args[].api_hex", "api_hex" in x))
            if args and all(x["hex"] is not None for x in args) and launch["params"]:
                out.append(("launches[].params.hex", "hex" in launch["params"]))
    for sub in doc["submissions"]:
        for seg in sub["segments"]:
            out.append(("submissions[].segments[].hex", "hex" in seg))
    for sync in doc.get("syncs", ()):
        out.append(("syncs[].fields", "fields" in sync))
    return out


@pytest.mark.parametrize("all_fields", [False, True], ids=["default", "all-fields"])
@pytest.mark.parametrize("name", ALL)
def test_json_output_matches_schema(name, all_fields, capture_files, schema):
    """Each capture's JSON, by default and with --all-fields, against the schema; the
    parts `elided.paths` names are absent by default and all there with --all-fields."""
    if all_fields and name == "launch-loop-10k":
        pytest.skip("the 287 MB --all-fields JSON of 10,100 launches: too slow for a 2-core "
                    "machine; the default JSON of it is checked, and every other capture both ways")
    rc, doc = _json_output(capture_files[name], all_fields)
    assert rc == 0
    errors = validate(doc, schema)
    assert errors == [], "\n".join(errors)
    parts = _elided_parts(doc)
    assert parts and doc["elided"]["complete_with"] == "--all-fields"
    if all_fields:
        assert doc["elided"]["paths"] == [] and all(present for _, present in parts)
    else:
        assert not any(present for _, present in parts)
        assert {p for p, _ in parts} <= set(doc["elided"]["paths"])
    try:
        import jsonschema
    except ImportError:      # optional: the subset validator above is the test
        return
    if name != "launch-loop-10k":   # the same check, slower: ~1 min on 10,000 launches
        bad = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
        assert not bad, [f"{list(e.path)}: {e.message}" for e in bad[:5]]


@pytest.mark.parametrize("name", ["two-streams", "kernel-fault", "torch-small"])
def test_default_json_is_all_fields_less_the_elided_parts(name, capture_files):
    """Nothing but the elided parts differs: the default JSON is the --all-fields JSON with
    each path of `elided.paths` removed."""
    _, brief = _json_output(capture_files[name])
    _, full = _json_output(capture_files[name], all_fields=True)
    for launch in full["launches"]:
        launch.pop("qmd_fields")
        if launch["cbank0_driver"] is not None:
            launch["cbank0_driver"].pop("hex")
        for sem in launch["semaphores"]:
            sem.pop("fields", None)
        launch.pop("resolved", None)
        a = launch.get("attribution")
        if a is not None:
            assert a.pop("api_call") == launch["api_call"]
            for x in a.get("args") or ():
                if x["api_hex"] == x["hex"]:
                    x.pop("api_hex")
            if a.get("args") and all(x["hex"] is not None for x in a["args"]):
                # the arguments hold the bytes, each where params.hex has it
                hw = bytes.fromhex(launch["params"].pop("hex"))
                for x in a["args"]:
                    assert hw[x["offset"]:x["offset"] + x["size"]].hex() == x["hex"]
    for sub in full["submissions"]:
        for seg in sub["segments"]:
            seg.pop("hex")
    for sync in full["syncs"]:
        sync.pop("fields")
    full["elided"], brief["elided"] = None, None
    assert brief == full


def test_schema_is_valid_draft_2020_12(schema):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema not installed: the "
                                     "meta-schema check needs it (the subset validator does not)")
    jsonschema.Draft202012Validator.check_schema(schema)


def _doc_keys(section):
    """Keys of the first column of a table in docs/json.md under `## section`."""
    text = (ROOT / "docs" / "json.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    keys = []
    for line in part.splitlines():
        if line.startswith("| `"):
            keys += re.findall(r"`([a-z_A-Z]+)`", line.split("|")[1])
    return keys


@pytest.mark.parametrize("section,definition", [
    ("Top level", None), ("`ioctls[]`", "ioctl"), ("`submissions[]`", "submission"),
    ("`stats`", "stats")])
def test_schema_requires_the_documented_keys(section, definition, schema):
    node = schema if definition is None else schema["$defs"][definition]
    keys = _doc_keys(section)
    assert keys
    assert set(keys) <= set(node["required"]), set(keys) - set(node["required"])


@pytest.mark.parametrize("mutate,where", [
    (lambda d: d.pop("stats"), "missing required key 'stats'"),
    (lambda d: d["ioctls"][0].update(pid="422"), "$.ioctls[0].pid"),
    (lambda d: d["launches"][0].update(grid=[1, 2]), "$.launches[0].grid"),
    (lambda d: d["marks"][0].update(kind="MIDDLE"), "$.marks[0].kind"),
    (lambda d: d["submissions"][0]["segments"][0].update(hex="XYZ"), "segments[0].hex"),
    (lambda d: d.update(exit={"status": -9}), "$.exit"),
    (lambda d: d["elided"]["paths"].append("launches[].grid"), "$.elided.paths[9]"),
    (lambda d: d["mmaps"].append({"index": 1}), "matches none of anyOf"),
])
def test_validator_rejects_synthetic_damage(mutate, where, capture_files, schema):
    """synthetic-* documents: the subset validator really fails on what the schema forbids."""
    _, doc = _json_output(capture_files["builtin-vadd"])
    mutate(doc)
    errors = validate(doc, schema)
    assert any(where in e for e in errors), errors
