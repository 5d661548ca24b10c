"""Method tables: registry, rendering, arrays, unknown methods, and the compute method
sets against hw-facts.md Appendix A (offsets extracted mechanically from the headers)."""
import os
import re

import pytest

from decoders.methods import CLASSES, GPU_DEFAULTS, class_module, gpu_defaults, method_table

HW_FACTS = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "reference", "hw-facts.md")


def render(cls, offset, value):
    return method_table(cls).get(offset).render(value)


def test_registry_entries_resolve():
    for cid, info in CLASSES.items():
        assert method_table(cid).info is info
        assert info.engine in ("host", "compute", "copy", "i2m")
    for fam in GPU_DEFAULTS:
        d = gpu_defaults(fam)
        assert CLASSES[d["compute"]].engine == "compute" and CLASSES[d["host"]].engine == "host"
    assert gpu_defaults("hopper")["compute"] == 0xCBC0


def test_rendering_examples():
    assert render(0xCBC0, 0x2C0, 3).startswith("SEND_SIGNALING_PCAS2_B: PCAS_ACTION = INVALIDATE_COPY_SCHEDULE")
    assert render(0xCBC0, 0x1B0, 0x41).startswith(
        "LAUNCH_DMA: DST_MEMORY_LAYOUT = PITCH, ")
    assert "SYSMEMBAR_DISABLE = TRUE" in render(0xCBC0, 0x1B0, 0x41)
    assert render(0xC8B5, 0x300, 0x182).startswith(
        "LAUNCH_DMA: DATA_TRANSFER_TYPE = NON_PIPELINED")
    assert "OPERATION = RELEASE" in render(0xC86F, 0x6C, 0x01000001)
    assert "PAYLOAD_SIZE = 64BIT" in render(0xC86F, 0x6C, 0x01000001)


def test_unknown_enum_value_keeps_number():
    assert "0xf PCAS_ACTION_???" in render(0xCBC0, 0x2C0, 0xF)


def test_array_methods_expand():
    t = method_table(0xCBC0)
    assert t.get(0x320).name == "LOAD_INLINE_QMD_DATA(0)"
    assert t.get(0x320 + 4 * 95).name == "LOAD_INLINE_QMD_DATA(95)"
    assert t.get(0x3800 + 8 * 5).name == "CALL_MME_MACRO(5)"
    assert t.get(0x3804 + 8 * 5).name == "CALL_MME_DATA(5)"
    assert method_table(0xC6C0).get(0x3800) is None   # CALL_MME_MACRO is C7C0+
    assert t.get(0x0104 + 0x2) is None                # not a method address


def test_field_differences_between_classes():
    assert method_table(0xC9C0).get(0x188).fields[0].width == 17
    assert method_table(0xCBC0).get(0x188).fields[0].width == 25
    assert [f.name for f in method_table(0xCBC0).get(0x318).fields] == [
        "QMD_ADDRESS_SHIFTED8_UPPER", "INLINE_SIZE"]
    assert method_table(0xC86F).get(0x60).fields[0].width == 25
    assert method_table(0xC56F).get(0x60).fields[0].width == 8


def test_identical_methods_are_referenced_not_redeclared():
    c9, cb = class_module(0xC9C0).METHODS, class_module(0xCBC0).METHODS
    assert cb[0x2B4] is c9[0x2B4]           # SEND_PCAS_A unchanged: same tuple
    assert cb[0x188] is not c9[0x188]       # OFFSET_OUT_UPPER widened on Hopper
    assert class_module(0xC86F).METHODS[0x6C] is class_module(0xC56F).METHODS[0x6C]


def _appendix_a():
    text = open(HW_FACTS).read()
    body = text.split("## Appendix A", 1)[1].split("## Appendix B", 1)[0]
    rows = [l.strip().strip("|").split("|") for l in body.splitlines() if l.startswith("| ") and
            not l.startswith("| method") and not l.startswith("|--")]
    return [[c.strip() for c in r] for r in rows if len(r) == 7 and r[0].strip()[:1].isalpha()]


@pytest.mark.skipif(not os.path.exists(HW_FACTS), reason="shared/reference not checked out beside the repo")
@pytest.mark.parametrize("col,class_id", list(enumerate((0xC6C0, 0xC7C0, 0xC9C0, 0xCBC0, 0xCDC0, 0xCEC0), 1)))
def test_compute_method_sets_match_appendix_a(col, class_id):
    want = {}
    for row in _appendix_a():
        if row[col] == "—":
            continue
        want[int(re.search(r"0x[0-9a-f]+", row[col]).group(0), 16)] = row[0]
    have = {off: decl[0] for off, decl in class_module(class_id).METHODS.items()}
    assert have == want
