"""Golden `--json` outputs of every recorded capture (tests/golden/, written by
scripts/make_golden.py): any change in what the decoders say about a recording fails here,
with the first differing JSON paths. Reviewed by hand when written (session 2): for each
capture the launches' grid/block/cluster/registers/shared memory against its manifest,
the API attribution (kernel names, argument values, `verified`), the stats counts against
the manifest summary, and the problems list (empty except captures/sigkill's unfinished
call and cut process)."""
import gzip
import json
import os

import pytest

from tests.conftest import ALL, ROOT

from scripts.make_golden import render  # noqa: E402


def _diff(a, b, path="$", out=None):
    out = [] if out is None else out
    if len(out) >= 10:
        return out
    if type(a) is not type(b):
        out.append(f"{path}: {a!r:.80} != {b!r:.80}")
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: only in {'golden' if k in a else 'output'}")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(f"{path}: {a!r:.80} != {b!r:.80}")
    return out


@pytest.mark.parametrize("name", ALL)
def test_json_equals_golden(name):
    golden_path = ROOT / "tests/golden" / f"{name}.json.gz"
    assert golden_path.exists(), f"no golden output for {name}: run scripts/make_golden.py {name}"
    golden = json.loads(gzip.decompress(golden_path.read_bytes()))
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        got = json.loads(json.dumps(render(name), sort_keys=True))
    finally:
        os.chdir(cwd)
    diffs = _diff(golden, got)
    assert not diffs, "\n".join(diffs)
