"""Write tests/golden/<capture>.json.gz: the `trace-decode CAPTURE --json --all-fields` output
of every capture in captures/ (every field: the default --json leaves the bulk out, and the
schema test checks it is exactly this less the elided paths), as tests/test_golden_json.py
compares it.

    python3 scripts/make_golden.py [NAME ...]

Regenerate only after reading the diff of what changed (tests/test_golden_json.py prints
the first differing paths) and deciding the new output is right. To keep the files small
and stable, `golden_view` replaces each pushbuffer segment's bytes (raw capture data, not
decoded output) by its SHA-256, and keeps the first 60 and last 20 entries of
`submissions`, `launches` and `api_calls` (all of them for shorter captures).
"""
import gzip
import hashlib
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEAD, TAIL = 60, 20


def golden_view(doc):
    for s in doc["submissions"]:
        for g in s["segments"]:
            g["hex"] = "sha256:" + hashlib.sha256(bytes.fromhex(g["hex"])).hexdigest()
    for key in ("submissions", "launches", "api_calls"):
        items = doc[key]
        if len(items) > HEAD + TAIL:
            doc[key] = items[:HEAD] + [{"omitted": len(items) - HEAD - TAIL}] + items[-TAIL:]
    return doc


def render(name):
    from decoders.session import decode_capture
    from tracer.report import render_json
    out = io.StringIO()
    path = next((f"captures/{name}/{f}" for f in ("capture.tlc.gz", "capture.tlc.zst")
                 if (ROOT / "captures" / name / f).exists()), f"captures/{name}/capture.tlc.gz")
    render_json(decode_capture(path), out, all_fields=True)
    return golden_view(json.loads(out.getvalue(), parse_constant=_not_json))


def _not_json(constant):
    raise ValueError(f"{constant} in the JSON output: not JSON (only Python reads it)")


def main(names):
    import os
    os.chdir(ROOT)   # meta.capture is the path as given: keep it relative
    names = names or sorted(p.name for p in (ROOT / "captures").iterdir()
                            if (p / "capture.tlc.gz").exists() or (p / "capture.tlc.zst").exists())
    for name in names:
        data = json.dumps(render(name), indent=1, sort_keys=True).encode()
        (ROOT / "tests/golden" / f"{name}.json.gz").write_bytes(gzip.compress(data, 9, mtime=0))
        print(name, len(data))


if __name__ == "__main__":
    main(sys.argv[1:])
