"""Whether a capture's report decoded in blocks (decoders/session/shard.py) is the one a
decode in one process makes: `trace-decode CAPTURE --json` and the text report, each run
with TRACE_LAUNCH_SHARDS=1 and as the machine's default, compared (the JSON as parsed, the
text line for line; neither says how the decode was split). Prints the sizes and the first
difference; exit status 1 on one.

    python3 bench/same_sharded.py CAPTURE [CAPTURE ...]
"""
import json
import os
import subprocess
import sys

def run(capture, shards, *flags):
    env = dict(os.environ)
    if shards is not None:
        env["TRACE_LAUNCH_SHARDS"] = str(shards)
    return subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", capture,
                           *flags], capture_output=True, text=True, env=env).stdout


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if a.get(k, KeyError) != b.get(k, KeyError):
                return first_difference(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
        if len(a) != len(b):
            return f"{path} length", len(a), len(b)
    return path, a, b


def main():
    bad = 0
    for capture in sys.argv[1:]:
        one, sharded = run(capture, 1, "--json"), run(capture, None, "--json")
        a, b = json.loads(one), json.loads(sharded)
        same = a == b
        print(f"{capture}: JSON {len(one)} / {len(sharded)} bytes: "
              f"{'the same' if same else 'DIFFERENT at %s: %.200r / %.200r' % first_difference(a, b)}")
        t1, t2 = run(capture, 1).splitlines(), run(capture, None).splitlines()
        diff = next((i for i, (x, y) in enumerate(zip(t1, t2)) if x != y), None)
        tsame = diff is None and len(t1) == len(t2)
        print(f"  text {len(t1)} / {len(t2)} lines: " + (
            "the same" if tsame else f"DIFFERENT at line {diff}: {t1[diff]!r} / {t2[diff]!r}"
            if diff is not None else "DIFFERENT lengths"))
        bad += not (same and tsame)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
