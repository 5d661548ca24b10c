"""HOPPER_COMPUTE_A (0xCBC0) methods = ADA_COMPUTE_A's (clc9c0) plus the differences below.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clcbc0.h
  commit:     5d957df1787982e35961ab2ee6834670c6684cb9
  prefix:     NVCBC0_
Every method not listed here was compared with clc9c0.h and is identical (same
offset, fields and values), so it is referenced from clc9c0, not redeclared.
"""
from decoders.methods import clc9c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clcbc0.h",
    "commit": "5d957df1787982e35961ab2ee6834670c6684cb9",
    "prefix": "NVCBC0_",
    "base": "clc9c0",
}
CLASS_ID = 0xCBC0
TF = clc9c0.TF

METHODS = dict(clc9c0.METHODS)
for _gone in (0x0270, 0x0290, 0x02A8):   # SET_SCG_CONTROL, CHECK_QMD_VERSION, SCG_HYSTERESIS_CONTROL
    del METHODS[_gone]
METHODS.update({
    # Address-upper fields widen from 7:0 / 16:0 to 24:0 on Hopper.
    0x0104: ("SET_NOTIFY_A", (("ADDRESS_UPPER", 0, 25),)),
    0x0164: ("SET_REPORT_SEMAPHORE_ADDRESS_UPPER", (("UPPER", 0, 25),)),
    0x0188: ("OFFSET_OUT_UPPER", (("VALUE", 0, 25),)),
    0x01DC: ("SET_I2M_SEMAPHORE_A", (("OFFSET_UPPER", 0, 25),)),
    0x02EC: ("SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C", (
        ("MAX_SM_COUNT", 0, 9), ("MAX_PLURAL_TPC_GPC_COUNT", 16, 8),
        ("MAX_SINGLETON_TPC_GPC_COUNT", 24, 8))),
    0x0318: ("SET_INLINE_QMD_ADDRESS_A", (
        ("QMD_ADDRESS_SHIFTED8_UPPER", 0, 9),
        ("INLINE_SIZE", 30, 1, {0: "INLINE_256", 1: "INLINE_384"}))),
    0x0550: ("SET_MME_MEM_ADDRESS_A", (("UPPER", 0, 25),)),
    0x0790: ("SET_SHADER_LOCAL_MEMORY_A", (("ADDRESS_UPPER", 0, 25),)),
    0x07AC: ("SET_TEXTURE_HEADER_VERSION", (("MAJOR", 0, 8),)),
    0x07B8: ("SET_MONITORED_FENCE_SIGNAL_ADDRESS_BASE_A", (("LOWER", 0, 32),)),
    0x07BC: ("SET_MONITORED_FENCE_SIGNAL_ADDRESS_BASE_B", (("UPPER", 0, 25),)),
    0x155C: ("SET_TEX_SAMPLER_POOL_A", (("OFFSET_UPPER", 0, 25),)),
    0x1574: ("SET_TEX_HEADER_POOL_A", (("OFFSET_UPPER", 0, 25),)),
    0x1B00: ("SET_REPORT_SEMAPHORE_A", (("OFFSET_UPPER", 0, 25),)),
    0x25F8: ("SET_TRAP_HANDLER_A", (("ADDRESS_UPPER", 0, 25),)),
})
