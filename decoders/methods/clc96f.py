"""BLACKWELL_CHANNEL_GPFIFO_A (0xC96F) host methods, from the full UVM copy of clc96f.h.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       kernel-open/nvidia-uvm/clc96f.h
  commit:     448d5cc65624d3aa69015efa0d3fb50fd9729f41
  prefix:     NVC96F_
Every method the header declares was compared field by field. Identical to C86F's
(hence referenced): SET_OBJECT, NOP, NON_STALL_INTERRUPT, FB_FLUSH, MEM_OP_A..C,
SEM_ADDR_LO/HI, SEM_PAYLOAD_LO/HI, WFI, YIELD, CLEAR_FAULTED. Differences: MEM_OP_D adds
OPERATION 0x11 L2_SYSMEM_NCOH_INVALIDATE and 0x12 L2_SYSMEM_COH_INVALIDATE; SEM_EXECUTE
adds ACQUIRE_RECHECK (18:18). The header declares no ILLEGAL (0x04), SEMAPHOREA..D
(0x10..0x1C) or SET_REFERENCE (0x50): they are left out, so they print as unknown with
their raw value.
"""
from decoders.methods import clc56f, clc86f

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "kernel-open/nvidia-uvm/clc96f.h",
    "commit": "448d5cc65624d3aa69015efa0d3fb50fd9729f41",
    "prefix": "NVC96F_",
    "base": "clc86f",
}
CLASS_ID = 0xC96F
OVERLAPS = clc86f.OVERLAPS
MEM_OP_D_OPERATION = {**clc86f.MEM_OP_D_OPERATION, 0x11: "L2_SYSMEM_NCOH_INVALIDATE",
                      0x12: "L2_SYSMEM_COH_INVALIDATE"}
SEM_EXECUTE = ("SEM_EXECUTE", tuple(
    f for g in clc56f.SEM_EXECUTE[1] for f in (
        (g, ("ACQUIRE_RECHECK", 18, 1, {0: "DIS", 1: "EN"})) if g[0] == "ACQUIRE_SWITCH_TSG"
        else (g,))))

METHODS = {k: v for k, v in clc86f.METHODS.items()
           if k not in (0x0004, 0x0010, 0x0014, 0x0018, 0x001C, 0x0050)}
METHODS.update({
    0x0034: clc56f.mem_op_d(MEM_OP_D_OPERATION, (clc86f.MMU_OPERATION_TYPE,)),
    0x006C: SEM_EXECUTE,
})
