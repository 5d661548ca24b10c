"""HOPPER_CHANNEL_GPFIFO_A (0xC86F) host methods = AMPERE_CHANNEL_GPFIFO_A's (clc56f) + differences.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       src/common/sdk/nvidia/inc/class/clc86f.h (a trimmed header: SET_OBJECT, MEM_OP_A..D,
              SEM_ADDR_LO..SEM_EXECUTE, WFI), read through shared/reference/hw-facts.md 2.8
  commit:     df1c9a3de2be4b130f4fc7680f7198193d8ac6ad (tag 595.45.04)
  prefix:     NVC86F_
Methods the trimmed header omits (NOP, NON_STALL_INTERRUPT, SET_REFERENCE, YIELD, ...)
are taken from C56F at the same offsets (UVM emits them on Hopper; hw-facts.md 8.5).
"""
from decoders.methods import clc56f

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc86f.h",
    "commit": "df1c9a3de2be4b130f4fc7680f7198193d8ac6ad",
    "prefix": "NVC86F_",
    "base": "clc56f",
}
CLASS_ID = 0xC86F
OVERLAPS = clc56f.OVERLAPS
MEM_OP_D_OPERATION = {**clc56f.MEM_OP_D_OPERATION, 0xB: "MMU_OPERATION"}

METHODS = dict(clc56f.METHODS)
METHODS.update({
    0x0034: clc56f.mem_op_d(MEM_OP_D_OPERATION),
    0x0060: clc56f.sem_addr_hi(25),
})
