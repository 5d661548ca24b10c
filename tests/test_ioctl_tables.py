"""Lint and fact checks of the ioctl decoder tables (STYLE.md 21): provenance, sizes, branches."""
import importlib
from pathlib import Path

import pytest

from decoders.escapes import numbers as ESC
from decoders.rm import allocparams as AP
from decoders.rm import classes, controls, ctrlparams, nvos, status
from decoders.rm.gen_controls import find_tsv, generate
from decoders.uvm import ioctls as U
from decoders.uvm.sizes import UVM_PARAM_SIZE_580

TABLE_MODULES = ("decoders.rm.status", "decoders.rm.classes", "decoders.rm.controls",
                 "decoders.rm.controls_data", "decoders.rm.allocparams", "decoders.rm.ctrlparams",
                 "decoders.rm.ctrlparams_p2p",
                 "decoders.escapes.numbers", "decoders.escapes.structs", "decoders.uvm.ioctls",
                 "decoders.uvm.sizes")


@pytest.mark.parametrize("name", TABLE_MODULES)
def test_provenance_block(name):
    doc = importlib.import_module(name).__doc__ or ""
    assert "Provenance" in doc and ("NVIDIA/open-gpu-kernel-modules" in doc or "decoders/" in doc)


def test_controls_data_is_generated_from_tsv():
    tsv = find_tsv()
    if tsv is None:
        pytest.skip("shared/reference/rm-ctrl-cmds.tsv not beside this checkout")
    text = Path(controls.__file__).with_name("controls_data.py").read_text()
    assert text == generate(tsv.read_text())


def test_controls_branch_columns():
    assert len(controls.CONTROLS["595"]) == 1533 + len(controls.EXTRA_PUBLIC)  # TSV + hand-added
    # 580 lacks the 66 "absent" rows; the two "differs" rows move.
    assert controls.CONTROLS["580"][0x208081EA] == "NV2080_CTRL_CMD_RUSD_GET_SUPPORTED_FEATURES"
    assert controls.CONTROLS["580"][0x208001EB] == "NV2080_CTRL_CMD_GPU_FORCE_GSP_UNLOAD"
    assert 0x208001EA not in controls.CONTROLS["580"]
    assert controls.CONTROLS["580"][0x00000101] == "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION"
    assert "GPS" in controls.CONTROL_ALIASES["580"][0x00000101][0]


def test_nonpublic_controls_show_numbers():
    # h100-measured.md 3 listed 7 numbers as non-public; two of them are public after all
    # (ctrl906f.h NV906F_CTRL_GET_CLASS_ENGINEID, ctrlcb33.h
    # NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES: names without the _CTRL_CMD_ pattern
    # the TSV extraction matched). The other five have no SDK define.
    for cmd in (0x20810108, 0x20808159, 0x20808162, 0x20800145, 0x20809038):
        info = controls.control_info(cmd, "580")
        assert not info.public
        assert cmd in controls.NON_PUBLIC
        text = controls.control_display(cmd, "580")
        assert "non-public" in text and f"idx {cmd & 0xff:#04x}" in text


def test_public_controls_missed_by_the_tsv_are_named():
    for branch in ("580", "595"):
        assert controls.control_info(0x906F0101, branch).name == "NV906F_CTRL_GET_CLASS_ENGINEID"
        assert (controls.control_info(0xCB330101, branch).name
                == "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES")


def test_unknown_branch_names_only_where_580_and_595_agree():
    assert controls.control_info(0xC36F0108, "610").name
    assert controls.control_info(0x208081EA, "610").name is None


def test_classes_per_branch():
    assert len(classes.CLASSES_595) == 214
    c580, c595 = classes.CLASSES["580"], classes.CLASSES["595"]
    assert c580[0x0042] == "NV_MEMORY_EXTENDED_USER" and 0x0042 not in c595
    assert 0x008F not in c580 and c595[0x008F] == "KERNEL_WATCHDOG"
    assert c580[0xC86F] == "HOPPER_CHANNEL_GPFIFO_A"
    assert classes.class_name(0x008F, "580")[1].startswith("not in the 580")
    assert classes.ROLE[0xCBC0] == "compute" and classes.ROLE[0xC8B5] == "copy"
    assert classes.ROLE[0xC86F] == "channel" and classes.ROLE[0x0040] == "memory"
    values = [v for v, _ in classes.CLASSES_595]
    assert len(values) == len(set(values))


def test_status_names():
    assert status.status_name(0) == "NV_OK"
    assert status.status_name(0x1F) == "NV_ERR_INVALID_ARGUMENT"
    assert status.status_name(0x56) == "NV_ERR_NOT_SUPPORTED"
    assert status.status_name(0x12345) == "0x12345 NV_STATUS_???"
    assert not status.is_error(0x00010006) and status.is_error(0x1F)


@pytest.mark.parametrize("st,size", [
    (nvos.NVOS05_PARAMETERS, 20), (nvos.NVOS55_PARAMETERS, 28), (nvos.NVOS57_PARAMETERS, 24),
    (nvos.NVOS30_PARAMETERS, 56), (nvos.NVOS41_PARAMETERS, 16), (nvos.NVOS39_PARAMETERS, 56),
    (nvos.NVOS49_PARAMETERS, 16), (nvos.NVOS56_PARAMETERS, 40), (nvos.NV_CHANNEL_ALLOC_PARAMS, 368),
    (AP.NV0000_ALLOC_PARAMETERS, 120), (AP.NV0080_ALLOC_PARAMETERS, 56),
    (AP.NV_MEMORY_ALLOCATION_PARAMS, 128), (AP.NV_VASPACE_ALLOCATION_PARAMETERS, 56),
    (AP.NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS, 20), (AP.NV_CTXSHARE_ALLOCATION_PARAMETERS, 12),
    (AP.NV_GR_ALLOCATION_PARAMETERS, 16), (AP.NVB0B5_ALLOCATION_PARAMETERS, 8),
    (AP.NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, 24), (AP.NV83DE_ALLOC_PARAMETERS, 12),
    (AP.NV0005_ALLOC_PARAMETERS, 24),
    (ctrlparams.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS, 3),
    (ctrlparams.NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS, 16),
    (ctrlparams.NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS, 132),
])
def test_struct_sizes_match_hw_facts(st, size):
    """Sizes from shared/reference/hw-facts.md 6.3/7.2 (gdb) and the headers read."""
    assert st.sizeof() == size
    assert len(st.build(st.parse(bytes(size)))) == size       # round trip on zero bytes


def test_escape_requests_match_hw_facts():
    """hw-facts.md 6.2: request = 0xC0000000 | size<<16 | 0x46<<8 | nr."""
    expected = {0x27: 0xC0384627, 0x29: 0xC0104629, 0x2A: 0xC020462A, 0x4E: 0xC038464E,
                0x57: 0xC0404657, 0x58: 0xC0304658, 0xC9: 0xC00446C9, 0xCE: 0xC01046CE,
                0xD2: 0xC04846D2, 0xD3: 0xC01046D3, 0xD6: 0xC00846D6, 0xD7: 0xC23046D7,
                0xDA: 0xC00846DA}
    for nr, request in expected.items():
        structs = ESC.ESCAPES[nr][1]
        size = (request >> 16) & 0x3FFF
        assert size in structs and structs[size].sizeof() == size, hex(nr)
    names = [row[0] for row in ESC.ESCAPES.values()]
    assert len(names) == len(set(names))
    for name in ("NV_ESC_CARD_INFO", "NV_ESC_REGISTER_FD", "NV_ESC_ALLOC_OS_EVENT",
                 "NV_ESC_FREE_OS_EVENT", "NV_ESC_STATUS_CODE", "NV_ESC_CHECK_VERSION_STR",
                 "NV_ESC_IOCTL_XFER_CMD", "NV_ESC_ATTACH_GPUS_TO_FD", "NV_ESC_QUERY_DEVICE_INTR",
                 "NV_ESC_SYS_PARAMS", "NV_ESC_NUMA_INFO", "NV_ESC_SET_NUMA_STATUS",
                 "NV_ESC_EXPORT_TO_DMABUF_FD", "NV_ESC_WAIT_OPEN_COMPLETE"):
        assert name in ESC.ESCAPE_BY_NAME


def test_uvm_sizes_table_matches_structs():
    for number, size in UVM_PARAM_SIZE_580.items():
        name, st, _ = U.uvm_command(number, "580")
        assert st is not None and st.sizeof() == size, name
    assert all(isinstance(k, int) and isinstance(v, int) for k, v in UVM_PARAM_SIZE_580.items())


def test_uvm_sizes_hw_facts():
    """hw-facts.md 6.4 ([gdb]); UVM_FREE is 24 B on 580, 16 B on 595."""
    expected = {0x30000001: 16, 37: 40, 25: 32, 27: 56, 33: 9264, 23: 16, 39: 8, 75: 8, 73: 24,
                34: 24, 29: 36, 66: 40, 68: 9248}
    for number, size in expected.items():
        assert UVM_PARAM_SIZE_580[number] == size, number
    assert U.uvm_command(34, "595")[1].sizeof() == 16
    assert U.uvm_command(34, "610")[1] is None          # unknown: say so, do not guess
    assert 0x50 not in UVM_PARAM_SIZE_580               # UVM_DISCARD: 595 only here
    assert U.uvm_command(9, "595")[2].startswith("not defined on 595")
