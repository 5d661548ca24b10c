"""AMPERE_COMPUTE_A (0xC6C0) methods = AMPERE_COMPUTE_B's (clc7c0) less the methods C7C0 added.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       src/common/sdk/nvidia/inc/class/clc6c0.h
  commit:     1739a20efc4acb55fd1dc53dcc66057b70c2613c
  prefix:     NVC6C0_
The header was read in full and compared with clc7c0.h at the same commit. C6C0 lacks
the 25 methods removed below (MME load/shadow-RAM control, report semaphore,
SET_MME_SWITCH_STATE, SET_MME_MEM_ADDRESS..SET_MME_DATA_FIFO_CONFIG, THROTTLE_SM,
MME_DMA_WRITE_METHOD_BARRIER, CALL_MME_MACRO/DATA); SEND_SIGNALING_PCAS2_B has only
PCAS_ACTION 3:0 with values up to 0xB (no SELECT / OFFSET_MINUS_ONE). Every other method,
field and value is identical, so C7C0's tuple is referenced. SET_MME_SHADOW_SCRATCH(i)
keeps C7C0's count of 256 (the header gives none).
"""
from decoders.methods import clc7c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc6c0.h",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC6C0_",
    "base": "clc7c0",
}
CLASS_ID = 0xC6C0

METHODS = dict(clc7c0.METHODS)
for _gone in (0x0114, 0x0118, 0x011C, 0x0120, 0x0124,        # LOAD_MME_*, SET_MME_SHADOW_RAM_CONTROL
              0x0158, 0x015C, 0x0160, 0x0164, 0x0168,        # SET_REPORT_SEMAPHORE_*, REPORT_SEMAPHORE_EXECUTE
              0x01EC,                                        # SET_MME_SWITCH_STATE
              0x0550, 0x0554, 0x0558, 0x055C, 0x0560, 0x0564, 0x0568, 0x056C, 0x0570, 0x0574,
              0x07FC, 0x0DEC, 0x3800, 0x3804):
    del METHODS[_gone]
METHODS[0x02C0] = ("SEND_SIGNALING_PCAS2_B", (("PCAS_ACTION", 0, 4, {
    k: v for k, v in clc7c0.clc9c0.PCAS_ACTION.items() if k < 0xC}),))
