"""RM control numbers -> names, per driver branch; class/category/index for the rest.

Provenance: the numbers are in controls_data.py (generated from shared/reference/
rm-ctrl-cmds.tsv: NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/ctrl/** at
595.45.04 with the 580.105.08 comparison). Encoding and category names: ctrl/ctrlxxxx.h,
ctrl0000/ctrl0000base.h, ctrl0080/ctrl0080base.h, ctrl2080/ctrl2080base.h as quoted in
shared/reference/hw-facts.md 7.3. Name prefix NVxxxx_CTRL_CMD_.

cmd = class 31:16 | reserved/legacy-privilege 15:14 | category 13:8 | index 7:0.
A number the branch's public headers do not define (h100-measured.md 3 lists several that
CUDA issues on 580) is shown as class/category/index and flagged non-public.
"""
from collections import namedtuple

from decoders.fields import bits
from decoders.rm.classes import class_name
from decoders.rm.controls_data import ROWS

# Field table of a control number (STYLE.md 5: positions declared once).
CMD_CLASS = (16, 16)
CMD_LEGACY = (14, 2)
CMD_CATEGORY = (8, 6)
CMD_INDEX = (0, 8)
LEGACY = {0: "", 2: "LEGACY_NON_PRIVILEGED", 3: "LEGACY_PRIVILEGED", 1: "LEGACY_1_???"}

# Words in generated names that mark a sub-function code, not a control (they share numbers
# with real controls: NV0000_CTRL_CMD_SYSTEM_GPS_* are arguments of SYSTEM_GPS_CONTROL).
_SUBFUNCTION_MARKERS = ("_GPS_", "_PFM_REQ_HNDLR_")

CATEGORIES = {
    0x0000: {0x01: "SYSTEM", 0x02: "GPU", 0x03: "GSYNC", 0x04: "DIAG", 0x05: "EVENT", 0x06: "NVD",
             0x07: "SWINSTR", 0x09: "PROC", 0x0A: "SYNC_GPU_BOOST", 0x0B: "GPUACCT", 0x0C: "VGPU",
             0x0D: "CLIENT", 0x3D: "OS_UNIX", 0x3E: "OS_MACOS", 0x3F: "OS_WINDOWS"},
    0x0080: {0x01: "BIF", 0x02: "GPU", 0x10: "CLK", 0x11: "GR", 0x12: "CIPHER", 0x13: "FB",
             0x14: "HOST", 0x15: "VIDEO", 0x17: "FIFO", 0x18: "DMA", 0x19: "PERF", 0x1B: "MSENC",
             0x1C: "BSP", 0x1D: "RC", 0x1E: "OS_UNIX", 0x1F: "NVJPG", 0x20: "INTERNAL",
             0x21: "NVLINK"},
    0x2080: {0x01: "GPU", 0x02: "FUSE", 0x03: "EVENT", 0x04: "TIMER", 0x05: "THERMAL", 0x06: "I2C",
             0x07: "EXTI2C", 0x08: "BIOS", 0x09: "CIPHER", 0x0A: "INTERNAL", 0x10: "CLK",
             0x11: "FIFO", 0x12: "GR", 0x13: "FB", 0x17: "MC", 0x18: "BUS", 0x20: "PERF",
             0x21: "NVIF", 0x22: "RC", 0x23: "GPIO", 0x24: "NVD", 0x25: "DMA", 0x26: "PMGR",
             0x27: "POWER", 0x28: "LPWR", 0x29: "ACR", 0x2A: "CE", 0x2B: "SPI", 0x30: "NVLINK",
             0x31: "FLCN", 0x32: "VOLT", 0x33: "FAS", 0x34: "ECC", 0x35: "FLA", 0x36: "GSP",
             0x37: "NNE", 0x38: "GRMGR", 0x39: "UCODE_FUZZER", 0x3A: "DMABUF", 0x3B: "BIF",
             0x3D: "OS_UNIX"},
}

BRANCHES_KNOWN = ("580", "595")


def _build():
    tables = {"595": {}, "580": {}}
    aliases = {"595": {}, "580": {}}
    headers = {}
    for value, name, in580, header in ROWS:
        headers[name] = header
        targets = [("595", value)]
        if in580 == "same":
            targets.append(("580", value))
        elif isinstance(in580, int):
            targets.append(("580", in580))
        for branch, number in targets:
            table, alias = tables[branch], aliases[branch]
            sub = any(m in name for m in _SUBFUNCTION_MARKERS)
            if number not in table or (not sub and any(m in table[number] for m in _SUBFUNCTION_MARKERS)):
                if number in table:
                    alias.setdefault(number, []).append(table[number])
                table[number] = name
            else:
                alias.setdefault(number, []).append(name)
    return tables, aliases, headers


# Public controls the TSV extraction missed: their names do not follow the NVxxxx_CTRL_CMD_
# pattern it matched. Hand-added; each read in NVIDIA/open-gpu-kernel-modules
# src/common/sdk/nvidia/inc/ctrl/ (ctrl906f.h at 1739a20e; ctrlcb33.h at 18b7303c and a later
# copy with multiGpuMode) and seen on the H100 in captures/builtin-vadd (28 and 1 calls).
# Both are in the NVOC export tables of 580 and 595 (g_kernel_channel_nvoc.c,
# g_conf_compute_api_nvoc.c), so they are named on both branches.
EXTRA_PUBLIC = (
    (0x906F0101, "NV906F_CTRL_GET_CLASS_ENGINEID", "ctrl906f.h"),
    (0xCB330101, "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES", "ctrlcb33.h"),
    # ctrl00de.h defines it as (0xde0001U), a form the TSV extraction did not match; the same
    # at 580.142 and 595.45.04. JAX issues it on its RM_USER_SHARED_DATA object (issue 18).
    (0x00DE0001, "NV00DE_CTRL_CMD_REQUEST_DATA_POLL", "ctrl00de.h"),
)

# Bit 15 of a command is RM_GSS_LEGACY_MASK (0x8000; 0xC000 = the privileged form), from
# NVIDIA/open-gpu-kernel-modules src/nvidia/interface/deprecated/rmapi_deprecated.h. On a GSP
# client RmDeprecatedGetControlHandler (rmapi_deprecated_control.c) sends every such command
# to RmGssLegacyRpcCmd (rmapi_gss_legacy_control.c): "We no longer support these in RM ...
# just forward all of them to GSP", i.e. the params are copied in, passed to the GSP firmware
# unchanged and copied out. No header under src/common/sdk/nvidia/inc/ctrl/** (580.105.08,
# 595.45.04) defines these numbers, with bit 15 set or with it cleared (the public
# ctrl2080clk.h defines no command at all; ctrl2080perf.h has no index 0x26 or 0x84), so
# neither their names nor their params layouts are public. Re-read for issue 18 at tag 580.142:
# rmapi_deprecated.h defines RM_GSS_LEGACY_MASK 0x8000 (NON_PRIVILEGED) and 0xC000
# (PRIVILEGED, needs RS_PRIV_LEVEL_USER_ROOT); rmapi_deprecated_control.c IsGssLegacyCall()
# tests cmd & 0x8000 and, on a GSP client (or vGPU), hands the call to RmGssLegacyRpcCmd
# (rmapi_gss_legacy_control.c), which copies paramsSize bytes in and calls the physical RM
# (GSP) Control with the same cmd; none of the numbers appears anywhere in the 580.142 tree.
# The decoder shows their params as opaque: size, and words that match a handle or a mapped
# GPU VA of the capture, marked as guesses (decoders/rm/opaque.py).
_GSS_LEGACY = ("legacy GSS control (bit 15 = RM_GSS_LEGACY_MASK): kernel RM forwards it "
               "unchanged to the GSP firmware (RmGssLegacyRpcCmd); no SDK define with or "
               "without bit 15, params layout not public")

# Controls CUDA issues on 580 that no public SDK header defines, with what is known of them.
# They decode as class/category/index, flagged non-public, with this note.
NON_PUBLIC = {
    0x20800145: "no SDK define; NVOC export subdeviceCtrlCmdGpuAcquireComputeModeReservation, "
                "paramSize 0 (src/nvidia/generated/g_subdevice_nvoc.c)",
    0x20808159: _GSS_LEGACY,
    0x20808162: _GSS_LEGACY,
    0x20809038: _GSS_LEGACY,
    # Seen in captures/torch-small, each called twice, all NV_OK (paramsSize in the note).
    0x20809001: _GSS_LEGACY + "; 8 B in torch-small",
    0x20809009: _GSS_LEGACY + "; 8 B in torch-small",
    0x20809064: _GSS_LEGACY + "; 520 B in torch-small",
    0x2080A026: _GSS_LEGACY + "; 532 B in torch-small",
    0x2080A084: _GSS_LEGACY + "; 4 B in torch-small",
    0x20810108: "NV2081_BINAPI control: binapiControl_IMPL (src/nvidia/src/kernel/rmapi/"
                "binary_api.c, 580.142) passes cmd, params and paramsSize unchanged to the "
                "physical RM (GSP) Control; no params struct is public",
}


def _build_all():
    tables, aliases, headers = _build()
    for value, name, header in EXTRA_PUBLIC:
        headers[name] = header
        for branch in tables:
            tables[branch].setdefault(value, name)
    return tables, aliases, headers


CONTROLS, CONTROL_ALIASES, CONTROL_HEADERS = _build_all()
CONTROLS_BY_NAME = {b: {n: v for v, n in t.items()} for b, t in CONTROLS.items()}

Control = namedtuple("Control", "cmd name public cls cls_name category category_name legacy index note")


def split_cmd(cmd):
    return (bits(cmd, *CMD_CLASS), bits(cmd, *CMD_LEGACY), bits(cmd, *CMD_CATEGORY),
            bits(cmd, *CMD_INDEX))


def control_info(cmd, branch="580"):
    """What the branch's public headers say about control `cmd` (a Control tuple)."""
    cls, legacy, category, index = split_cmd(cmd)
    cname, _ = class_name(cls, branch)
    cat_name = CATEGORIES.get(cls, {}).get(category)
    note = ""
    table = CONTROLS.get(branch)
    if table is None:
        # Unknown branch: a name is used only where 580 and 595 agree.
        name = CONTROLS["580"].get(cmd)
        if name is not None and CONTROLS["595"].get(cmd) != name:
            name, note = None, f"branch {branch}: 580 and 595 differ here, name unknown"
        elif name is not None:
            note = f"branch {branch}: name from 580/595 (same number in both)"
    else:
        name = table.get(cmd)
        if name is None:
            others = [b for b in BRANCHES_KNOWN if b != branch and cmd in CONTROLS[b]]
            if others:
                note = f"not in the {branch} headers ({'/'.join(others)} name: {CONTROLS[others[0]][cmd]})"
    if name is None and not note:
        note = "non-public: not in the public headers of this branch"
        if cmd in NON_PUBLIC:
            note += f"; {NON_PUBLIC[cmd]}"
    return Control(cmd, name, name is not None, cls, cname, category, cat_name,
                   LEGACY.get(legacy, ""), index, note)


def control_display(cmd, branch="580"):
    """One token for a control: its name, or `NV2080 cat 0x81(GPU|LEGACY_..) idx 0x59 (non-public)`."""
    info = control_info(cmd, branch)
    if info.name:
        return info.name
    return f"{cmd:#010x} {numbers_display(info)} (non-public)"


def numbers_display(info):
    cat = f"{info.category:#04x}"
    labels = [x for x in (info.category_name, info.legacy) if x]
    if labels:
        cat += "(" + "|".join(labels) + ")"
    cls = f"NV{info.cls:04X}" + (f"={info.cls_name}" if info.cls_name else "")
    return f"class {cls} cat {cat} idx {info.index:#04x}"
