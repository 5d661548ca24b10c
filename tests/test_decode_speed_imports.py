"""bench/decode_bench.py IMPORTS is what a decode imports (its with-the-imports figure stays
honest): a fresh process that decodes launch-loop-10k ends up with every listed module, and
one that imported the list first imports no further decoders module while decoding.
Method tables made lazily (MethodTable: a MethodDef on first get) == made all at once."""
import json
import os
import subprocess
import sys

import pytest

from decoders import methods as M
from tests.conftest import capture_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LOOP = str(capture_file("launch-loop-10k"))


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.exists(LOOP), reason="captures/launch-loop-10k not present")
def test_bench_imports_are_what_a_decode_imports():
    listed = _run("import json, sys; sys.argv = ['x']; import bench.decode_bench as b; "
                  "print(json.dumps(list(b.IMPORTS)))")
    missing = _run("import json, sys; from decoders.session import decode_capture; "
                   f"decode_capture({LOOP!r}); "
                   f"print(json.dumps([m for m in {listed!r} if m not in sys.modules]))")
    assert missing == []
    extra = _run("import importlib, json, sys; "
                 f"[importlib.import_module(m) for m in {listed!r}]; before = set(sys.modules); "
                 "from decoders.session import decode_capture; "
                 f"decode_capture({LOOP!r}); "
                 "print(json.dumps(sorted(m for m in set(sys.modules) - before "
                 "if m.startswith('decoders'))))")
    assert extra == []


def _eager(info, module):
    """MethodTable.by_offset as it was built at once (arrays expanded in order)."""
    out = {}
    for offset, decl in module.METHODS.items():
        name, fdecl = decl[0], decl[1]
        if len(decl) > 2:
            stride, count = decl[2], decl[3]
            base = name.split("(")[0]
            for i in range(count):
                out[offset + i * stride] = M.MethodDef(f"{base}({i})", name, i,
                                                       M._fields(fdecl), info.name)
        else:
            out[offset] = M.MethodDef(name, name, None, M._fields(fdecl), info.name)
    return out


@pytest.mark.parametrize("class_id", sorted(M.CLASSES))
def test_lazy_method_table_equals_eager(class_id):
    info = M.CLASSES[class_id]
    module = M.class_module(class_id)
    want = _eager(info, module)
    lazy = M.MethodTable(info, module)
    for offset in (0x0, 0x4, 0x1B0C, 0x2B4, 0x320, 0x3800, 0x7FFC, 0x300):
        got, ref = lazy.get(offset), want.get(offset)
        assert (got is None) == (ref is None)
        if ref is not None:
            assert lazy.get(offset) is got              # made once
            assert (got.name, got.base, got.index, got.fields) == \
                (ref.name, ref.base, ref.index, ref.fields)
            assert [got.decode(v) for v in (0, 1, 0x12345678, 0xFFFFFFFF)] == \
                [ref.decode(v) for v in (0, 1, 0x12345678, 0xFFFFFFFF)]
    table = M.MethodTable(info, module).by_offset
    assert list(table) == list(want)
    for offset, mdef in table.items():
        ref = want[offset]
        assert (mdef.name, mdef.base, mdef.index, mdef.fields) == \
            (ref.name, ref.base, ref.index, ref.fields)
        assert mdef.render(0xA5A5A5A5) == ref.render(0xA5A5A5A5)
