"""HOPPER_CHANNEL_GPFIFO_A (0xC86F) host methods = AMPERE_CHANNEL_GPFIFO_A's (clc56f) + differences.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       kernel-open/nvidia-uvm/clc86f.h
  commit:     41595798880394d9c6fa5e76b37ffc1bc428cfb2
  prefix:     NVC86F_
Also read: src/common/sdk/nvidia/inc/class/clc86f.h at 448d5cc65624d3aa69015efa0d3fb50fd9729f41
(a subset of the same defines). Both are trimmed: they declare SET_OBJECT, MEM_OP_A..D,
SEM_ADDR_LO..SEM_EXECUTE and WFI only. Those methods were compared field by field:
MEM_OP_A's CANCEL_MMU_ENGINE_ID widens to 8:0 and MEM_OP_D gains MMU_OPERATION (0xB) and
the MMU_OPERATION_TYPE field 23:20; every other field and value read equals C56F's.
The SEM_EXECUTE values the trimmed header leaves out are taken from C56F (the same bits).

UNVERIFIED: no public C86F header declares the methods in FROM_C56F (NOP, NON_STALL_INTERRUPT,
SET_REFERENCE, YIELD, ...). They are C56F's tuples at the same offsets, kept because UVM
emits them on Hopper (hw-facts.md 8.5); a full clc86f.h is not in the stored index.
"""
from decoders.methods import clc56f

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "kernel-open/nvidia-uvm/clc86f.h",
    "commit": "41595798880394d9c6fa5e76b37ffc1bc428cfb2",
    "prefix": "NVC86F_",
    "base": "clc56f",
    "unverified": "methods in FROM_C56F: the public clc86f.h headers are trimmed and omit them",
}
CLASS_ID = 0xC86F
MEM_OP_D_OPERATION = {**clc56f.MEM_OP_D_OPERATION, 0xB: "MMU_OPERATION"}
MMU_OPERATION_TYPE = ("MMU_OPERATION_TYPE", 20, 4, {0: "RESERVED", 1: "VIDMEM_ACCESS_BIT_DUMP"})
MEM_OP_A = ("MEM_OP_A", tuple(
    ("TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID", 0, 9) if f[0] == "TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID"
    else f for f in clc56f.METHODS[0x0028][1]))

OVERLAPS = {**clc56f.OVERLAPS,
            "MEM_OP_D": clc56f.OVERLAPS["MEM_OP_D"] | {"MMU_OPERATION_TYPE"}}

METHODS = dict(clc56f.METHODS)
METHODS.update({
    0x0028: MEM_OP_A,
    0x0034: clc56f.mem_op_d(MEM_OP_D_OPERATION, (MMU_OPERATION_TYPE,)),
    0x0060: clc56f.sem_addr_hi(25),
})
# Declared in the header read (SET_OBJECT..WFI); the rest come from C56F unverified.
FROM_HEADER = {0x0000, 0x0028, 0x002C, 0x0030, 0x0034, 0x005C, 0x0060, 0x0064, 0x0068,
               0x006C, 0x0078}
FROM_C56F = set(METHODS) - FROM_HEADER
