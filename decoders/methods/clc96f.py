"""BLACKWELL_CHANNEL_GPFIFO_A (0xC96F) host methods = HOPPER_CHANNEL_GPFIFO_A's (clc86f) + differences.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       src/common/sdk/nvidia/inc/class/clc96f.h (trimmed header), read through
              shared/reference/hw-facts.md 2.8
  commit:     df1c9a3de2be4b130f4fc7680f7198193d8ac6ad (tag 595.45.04)
  prefix:     NVC96F_
"""
from decoders.methods import clc86f

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc96f.h",
    "commit": "df1c9a3de2be4b130f4fc7680f7198193d8ac6ad",
    "prefix": "NVC96F_",
    "base": "clc86f",
}
CLASS_ID = 0xC96F
OVERLAPS = clc86f.OVERLAPS
MEM_OP_D_OPERATION = {**clc86f.MEM_OP_D_OPERATION, 0x11: "L2_SYSMEM_NCOH_INVALIDATE"}

METHODS = dict(clc86f.METHODS)
METHODS[0x0034] = clc86f.clc56f.mem_op_d(MEM_OP_D_OPERATION)
