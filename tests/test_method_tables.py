"""Method tables against the NVIDIA headers they were read from: spot checks of offsets,
field bit ranges and enum values taken from the headers named in each module's PROVENANCE,
and a check that a table still marked UNVERIFIED says why."""
import inspect

import pytest

from decoders.methods import CLASSES, class_module, method_table


def field(cls, offset, name):
    for f in method_table(cls).get(offset).fields:
        if f.name == name:
            return f
    raise KeyError(f"{cls:#06x} {offset:#x} has no field {name}")


def span(cls, offset, name):
    f = field(cls, offset, name)
    return (f.lo + f.width - 1, f.lo)


@pytest.mark.parametrize("cls", [0xC6B5, 0xC7B5, 0xC8B5, 0xC9B5, 0xCAB5])
def test_copy_launch_dma_offset(cls):
    # NVC?B5_LAUNCH_DMA (0x00000300) in every copy header read.
    assert method_table(cls).get(0x300).name == "LAUNCH_DMA"
    assert span(cls, 0x300, "DATA_TRANSFER_TYPE") == (1, 0)
    assert span(cls, 0x300, "SEMAPHORE_REDUCTION") == (17, 14)


def test_copy_class_differences():
    # Upper-address fields: 16:0 on C6B5/C7B5, 24:0 from C8B5 (OFFSET_IN_UPPER_UPPER).
    assert span(0xC6B5, 0x400, "UPPER") == (16, 0) and span(0xC7B5, 0x400, "UPPER") == (16, 0)
    assert span(0xC8B5, 0x400, "UPPER") == (24, 0) and span(0xCAB5, 0x400, "UPPER") == (24, 0)
    assert span(0xC7B5, 0x254, "UPPER") == (7, 0)          # SET_RENDER_ENABLE_A_UPPER 7:0
    # VPRMODE 23:22 (four values) on Ampere, 22:22 from Hopper on.
    assert span(0xC7B5, 0x300, "VPRMODE") == (23, 22)
    assert field(0xC7B5, 0x300, "VPRMODE").values[3] == "VPR_SYS2VID"
    assert span(0xC8B5, 0x300, "VPRMODE") == (22, 22)
    # SET_PAGEOUT_START_PAUPPER (0x288, V 4:0) is Ampere-only.
    assert span(0xC6B5, 0x288, "V") == (4, 0) and method_table(0xC8B5).get(0x288) is None
    # C6B5 has no monitored fence, no payload upper, no SEMAPHORE_PAYLOAD_SIZE.
    assert method_table(0xC6B5).get(0x21C) is None and method_table(0xC6B5).get(0x24C) is None
    assert method_table(0xC7B5).get(0x24C).name == "SET_SEMAPHORE_PAYLOAD_UPPER"
    with pytest.raises(KeyError):
        field(0xC6B5, 0x300, "SEMAPHORE_PAYLOAD_SIZE")
    assert field(0xC6B5, 0x300, "SEMAPHORE_TYPE").values[1] == "RELEASE_ONE_WORD_SEMAPHORE"
    # FORCE_RMWDISABLE 11:11 is in clc8b5.h but not in clc9b5.h / clcab5.h.
    assert span(0xC8B5, 0x300, "FORCE_RMWDISABLE") == (11, 11)
    for cls in (0xC9B5, 0xCAB5):
        with pytest.raises(KeyError):
            field(cls, 0x300, "FORCE_RMWDISABLE")
    # CAB5: DATA_TRANSFER_TYPE_PREFETCH 3, SET_*_BLOCK_SIZE_KIND_BPP 17:16.
    assert field(0xCAB5, 0x300, "DATA_TRANSFER_TYPE").values[3] == "PREFETCH"
    assert 3 not in field(0xC9B5, 0x300, "DATA_TRANSFER_TYPE").values
    assert span(0xCAB5, 0x70C, "KIND_BPP") == (17, 16)
    assert field(0xCAB5, 0x728, "KIND_BPP").values[1] == "BL_8"
    # Secure copy (0x500..0x53C) and scrub parameters are C8B5+.
    assert method_table(0xC7B5).get(0x500) is None
    assert method_table(0xC9B5).get(0x500).name == "SET_SECURE_COPY_MODE"


def test_host_classes():
    # SEM_EXECUTE (0x6C) in clc56f.h / clc86f.h / clc96f.h.
    for cls in (0xC56F, 0xC86F, 0xC96F):
        assert method_table(cls).get(0x6C).name == "SEM_EXECUTE"
        assert span(cls, 0x6C, "OPERATION") == (2, 0)
        assert span(cls, 0x6C, "REDUCTION") == (30, 27)
        assert span(cls, 0x6C, "PAYLOAD_SIZE") == (24, 24)
    assert span(0xC96F, 0x6C, "ACQUIRE_RECHECK") == (18, 18)
    with pytest.raises(KeyError):
        field(0xC86F, 0x6C, "ACQUIRE_RECHECK")
    # MEM_OP_A_TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID: 6:0 on C56F, 8:0 on C86F/C96F.
    assert span(0xC56F, 0x28, "TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID") == (6, 0)
    assert span(0xC86F, 0x28, "TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID") == (8, 0)
    assert span(0xC96F, 0x28, "TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID") == (8, 0)
    # MEM_OP_D_MMU_OPERATION_TYPE 23:20 and OPERATION values per class.
    assert span(0xC86F, 0x34, "MMU_OPERATION_TYPE") == (23, 20)
    assert field(0xC86F, 0x34, "OPERATION").values[0xB] == "MMU_OPERATION"
    assert 0xB not in field(0xC56F, 0x34, "OPERATION").values
    assert field(0xC96F, 0x34, "OPERATION").values[0x12] == "L2_SYSMEM_COH_INVALIDATE"
    # clc96f.h declares no SEMAPHOREA..D, ILLEGAL or SET_REFERENCE: they print as unknown.
    for off in (0x04, 0x10, 0x14, 0x18, 0x1C, 0x50):
        assert method_table(0xC96F).get(off) is None
        assert method_table(0xC86F).get(off) is not None
    assert method_table(0xC96F).get(0x84).name == "CLEAR_FAULTED"


def test_compute_classes():
    # SEND_SIGNALING_PCAS2_B: C6C0 has PCAS_ACTION 3:0 up to 0xB only; C7C0 adds SELECT 13:8.
    assert max(field(0xC6C0, 0x2C0, "PCAS_ACTION").values) == 0xB
    assert span(0xC7C0, 0x2C0, "SELECT") == (13, 8)
    assert field(0xC7C0, 0x2C0, "PCAS_ACTION").values[0xD] == "INCREMENT_CWD_REF_COUNTER"
    # clc7c0.h is clc9c0.h method for method: the same tuples.
    assert class_module(0xC7C0).METHODS == class_module(0xC9C0).METHODS
    # C6C0 keeps SET_MME_SHADOW_SCRATCH(i) but has no CALL_MME_MACRO / THROTTLE_SM.
    assert method_table(0xC6C0).get(0x3400).name == "SET_MME_SHADOW_SCRATCH(0)"
    assert method_table(0xC6C0).get(0x7FC) is None
    assert method_table(0xC7C0).get(0x7FC).name == "THROTTLE_SM"
    # CBC0 dropped CHECK_QMD_VERSION (0x290); EVENT_START_TRIGGER (0x74C) is CDC0+, not CBC0.
    assert method_table(0xC9C0).get(0x290) is not None and method_table(0xCBC0).get(0x290) is None
    assert method_table(0xCBC0).get(0x74C) is None
    assert method_table(0xCDC0).get(0x74C).name == "EVENT_START_TRIGGER"


def test_inline_to_memory():
    # cla140.h: LAUNCH_DMA 0x1B0, OFFSET_OUT_UPPER_VALUE / SET_I2M_SEMAPHORE_A / SET_NOTIFY_A 24:0,
    # SET_FALCON00..31 at 0x200..0x27C, SET_RENDER_ENABLE_A 0x1550.
    t = method_table(0xA140)
    assert t.get(0x1B0).name == "LAUNCH_DMA" and span(0xA140, 0x1B0, "REDUCTION_OP") == (15, 13)
    assert span(0xA140, 0x188, "VALUE") == (24, 0)
    assert span(0xA140, 0x1DC, "OFFSET_UPPER") == (24, 0)
    assert span(0xA140, 0x104, "ADDRESS_UPPER") == (24, 0)
    assert t.get(0x200).name == "SET_FALCON00" and t.get(0x27C).name == "SET_FALCON31"
    assert t.get(0x1550).name == "SET_RENDER_ENABLE_A"
    assert t.get(0x2B4) is None                      # SEND_PCAS_A is compute-only


def test_unknown_method_keeps_raw_value():
    from decoders.methods import unknown_display
    assert method_table(0xC96F).get(0x10) is None
    assert unknown_display(0x10, 0x1234) == "UNKNOWN_0x0010: 0x00001234"


@pytest.mark.parametrize("class_id", sorted(CLASSES), ids=lambda c: f"{c:04X}")
def test_unverified_only_with_a_reason(class_id):
    module = class_module(class_id)
    if "UNVERIFIED" in inspect.getsource(module):
        reason = module.PROVENANCE.get("unverified", "")
        assert len(reason) > 20, f"{module.__name__} says UNVERIFIED without a reason"
