"""Every capture of captures/ decoded: its kernel launches verified / mismatched / not
checked / unnamed, and each not-checked reason by count (issue 25's "done when"). A kernel
launch inside a cuGraphLaunch that is not checked is counted apart.

    python3 bench/corpus_kernels.py [--json OUT] [CAPTURE_DIR ...]
"""
import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def census(capture_dir):
    from decoders.session import decode_capture
    path = next(p for p in (capture_dir / "capture.tlc.gz", capture_dir / "capture.tlc",
                            capture_dir / "capture.tlc.zst") if p.exists())
    model = decode_capture(str(path))
    out = Counter()
    why = Counter()
    for launch in model.launches:
        s = launch.summary
        if not s["kernel"]:
            continue
        a = s.get("attribution") or {}
        out["kernel_launches"] += 1
        if not (a.get("kernel") or {}).get("name"):
            out["unnamed"] += 1
        v = a.get("verified")
        if (a.get("graph_node") or {}).get("sent_by"):
            out["graph_prepared"] += 1
        elif v is True:
            out["verified"] += 1
        elif v is False:
            out["mismatched"] += 1
        else:
            out["not_checked"] += 1
            why[(a.get("why") or "no attribution")[:160]] += 1
            if (a.get("api_call") or {}).get("name") == "cuGraphLaunch":
                out["not_checked_in_graph_launch"] += 1
    return {"capture": capture_dir.name, **out, "not_checked_why": dict(why.most_common())}


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args(argv)
    dirs = [Path(d) for d in a.dirs] or sorted(p.parent for p in (ROOT / "captures").glob(
        "*/manifest.json"))
    rows, total = [], Counter()
    for d in dirs:
        r = census(d)
        rows.append(r)
        total.update({k: v for k, v in r.items() if isinstance(v, int)})
        print(json.dumps(r), flush=True)
    print(json.dumps({"captures": len(rows), **total}))
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "total": dict(total)}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
