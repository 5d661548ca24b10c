"""AMPERE_CHANNEL_GPFIFO_A (0xC56F) host methods (byte offsets < 0x100, any subchannel).

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       src/common/sdk/nvidia/inc/class/clc56f.h
  commit:     1739a20efc4acb55fd1dc53dcc66057b70c2613c
  prefix:     NVC56F_
Fields that the header defines twice over the same bits (MEM_OP_A/C meanings that
depend on MEM_OP_D's OPERATION) are kept; the overlapping pairs are listed in OVERLAPS.
"""
PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc56f.h",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC56F_",
}
CLASS_ID = 0xC56F
V = (("HANDLE", 0, 32),)

SEM_EXECUTE = ("SEM_EXECUTE", (
    ("OPERATION", 0, 3, {0: "ACQUIRE", 1: "RELEASE", 2: "ACQ_STRICT_GEQ", 3: "ACQ_CIRC_GEQ",
                         4: "ACQ_AND", 5: "ACQ_NOR", 6: "REDUCTION"}),
    ("ACQUIRE_SWITCH_TSG", 12, 1, {0: "DIS", 1: "EN"}),
    ("RELEASE_WFI", 20, 1, {0: "DIS", 1: "EN"}),
    ("PAYLOAD_SIZE", 24, 1, {0: "32BIT", 1: "64BIT"}),
    ("RELEASE_TIMESTAMP", 25, 1, {0: "DIS", 1: "EN"}),
    ("REDUCTION", 27, 4, {0: "IMIN", 1: "IMAX", 2: "IXOR", 3: "IAND", 4: "IOR", 5: "IADD",
                          6: "INC", 7: "DEC"}),
    ("REDUCTION_FORMAT", 31, 1, {0: "SIGNED", 1: "UNSIGNED"})))
MEM_OP_D_OPERATION = {5: "MEMBAR", 9: "MMU_TLB_INVALIDATE", 0xA: "MMU_TLB_INVALIDATE_TARGETED",
                      0xD: "L2_PEERMEM_INVALIDATE", 0xE: "L2_SYSMEM_INVALIDATE",
                      0xF: "L2_CLEAN_COMPTAGS", 0x10: "L2_FLUSH_DIRTY",
                      0x15: "L2_WAIT_FOR_SYS_PENDING_READS", 0x16: "ACCESS_COUNTER_CLR"}


def mem_op_d(operations, extra=()):
    """MEM_OP_D with the class's OPERATION values; `extra` fields a later class adds."""
    return ("MEM_OP_D", (
        ("TLB_INVALIDATE_PDB_ADDR_HI", 0, 27),
        ("ACCESS_COUNTER_CLR_TYPE", 0, 2, {0: "MIMC", 1: "MOMC", 2: "ALL", 3: "TARGETED"}),
        ("ACCESS_COUNTER_CLR_TARGETED_TYPE", 2, 1, {0: "MIMC", 1: "MOMC"}),
        ("ACCESS_COUNTER_CLR_TARGETED_BANK", 3, 4),
        *extra,
        ("OPERATION", 27, 5, operations)))


def sem_addr_hi(width):
    return ("SEM_ADDR_HI", (("OFFSET", 0, width),))


METHODS = {
    0x0000: ("SET_OBJECT", (("NVCLASS", 0, 16), ("ENGINE", 16, 5, {0x1F: "SW"}))),
    0x0004: ("ILLEGAL", V),
    0x0008: ("NOP", V),
    0x0010: ("SEMAPHOREA", (("OFFSET_UPPER", 0, 8),)),
    0x0014: ("SEMAPHOREB", (("OFFSET_LOWER", 2, 30),)),
    0x0018: ("SEMAPHOREC", (("PAYLOAD", 0, 32),)),
    0x001C: ("SEMAPHORED", (
        ("OPERATION", 0, 5, {1: "ACQUIRE", 2: "RELEASE", 4: "ACQ_GEQ", 8: "ACQ_AND",
                             0x10: "REDUCTION"}),
        ("ACQUIRE_SWITCH", 12, 1, {0: "DISABLED", 1: "ENABLED"}),
        ("RELEASE_WFI", 20, 1, {0: "EN", 1: "DIS"}),
        ("RELEASE_SIZE", 24, 1, {0: "16BYTE", 1: "4BYTE"}),
        ("REDUCTION", 27, 4, {0: "MIN", 1: "MAX", 2: "XOR", 3: "AND", 4: "OR", 5: "ADD",
                              6: "INC", 7: "DEC"}),
        ("FORMAT", 31, 1, {0: "SIGNED", 1: "UNSIGNED"}))),
    0x0020: ("NON_STALL_INTERRUPT", V),
    0x0024: ("FB_FLUSH", V),
    0x0028: ("MEM_OP_A", (
        ("TLB_INVALIDATE_INVALIDATION_SIZE", 0, 6),
        ("TLB_INVALIDATE_CANCEL_TARGET_CLIENT_UNIT_ID", 0, 6),
        ("TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID", 0, 7),
        ("TLB_INVALIDATE_INVAL_SCOPE", 6, 2, {0: "ALL_TLBS", 1: "LINK_TLBS", 2: "NON_LINK_TLBS",
                                              3: "RSVRVD"}),
        ("TLB_INVALIDATE_CANCEL_TARGET_GPC_ID", 6, 5),
        ("TLB_INVALIDATE_SYSMEMBAR", 11, 1, {0: "DIS", 1: "EN"}),
        ("TLB_INVALIDATE_TARGET_ADDR_LO", 12, 20))),
    0x002C: ("MEM_OP_B", (("TLB_INVALIDATE_TARGET_ADDR_HI", 0, 32),)),
    0x0030: ("MEM_OP_C", (
        ("MEMBAR_TYPE", 0, 3, {0: "SYS_MEMBAR", 1: "MEMBAR"}),
        ("TLB_INVALIDATE_PDB", 0, 1, {0: "ONE", 1: "ALL"}),
        ("TLB_INVALIDATE_GPC", 1, 1, {0: "ENABLE", 1: "DISABLE"}),
        ("TLB_INVALIDATE_REPLAY", 2, 3, {0: "NONE", 1: "START", 2: "START_ACK_ALL",
                                         3: "CANCEL_TARGETED", 4: "CANCEL_GLOBAL",
                                         5: "CANCEL_VA_GLOBAL"}),
        ("TLB_INVALIDATE_ACK_TYPE", 5, 2, {0: "NONE", 1: "GLOBALLY", 2: "INTRANODE"}),
        ("TLB_INVALIDATE_PAGE_TABLE_LEVEL", 7, 3, {0: "ALL", 1: "PTE_ONLY", 2: "UP_TO_PDE0",
                                                   3: "UP_TO_PDE1", 4: "UP_TO_PDE2",
                                                   5: "UP_TO_PDE3", 6: "UP_TO_PDE4",
                                                   7: "UP_TO_PDE5"}),
        ("TLB_INVALIDATE_ACCESS_TYPE", 7, 3, {0: "VIRT_READ", 1: "VIRT_WRITE",
                                              2: "VIRT_ATOMIC_STRONG", 3: "VIRT_RSVRVD",
                                              4: "VIRT_ATOMIC_WEAK", 5: "VIRT_ATOMIC_ALL",
                                              6: "VIRT_WRITE_AND_ATOMIC", 7: "VIRT_ALL"}),
        ("TLB_INVALIDATE_PDB_APERTURE", 10, 2, {0: "VID_MEM", 2: "SYS_MEM_COHERENT",
                                                3: "SYS_MEM_NONCOHERENT"}),
        ("TLB_INVALIDATE_PDB_ADDR_LO", 12, 20),
        ("ACCESS_COUNTER_CLR_TARGETED_NOTIFY_TAG", 0, 20))),
    0x0034: mem_op_d(MEM_OP_D_OPERATION),
    0x0050: ("SET_REFERENCE", (("COUNT", 0, 32),)),
    0x005C: ("SEM_ADDR_LO", (("OFFSET", 2, 30),)),
    0x0060: sem_addr_hi(8),
    0x0064: ("SEM_PAYLOAD_LO", (("PAYLOAD", 0, 32),)),
    0x0068: ("SEM_PAYLOAD_HI", (("PAYLOAD", 0, 32),)),
    0x006C: SEM_EXECUTE,
    0x0078: ("WFI", (("SCOPE", 0, 1, {0: "CURRENT_SCG_TYPE", 1: "ALL"}),)),
    0x0080: ("YIELD", (("OP", 0, 2, {0: "NOP", 3: "TSG"}),)),
    0x0084: ("CLEAR_FAULTED", (("HANDLE", 0, 31),
                               ("TYPE", 31, 1, {0: "PBDMA_FAULTED", 1: "ENG_FAULTED"}))),
}

# Fields the header declares over the same bits; which one applies depends on MEM_OP_D.
OVERLAPS = {
    "MEM_OP_A": {"TLB_INVALIDATE_INVALIDATION_SIZE", "TLB_INVALIDATE_CANCEL_TARGET_CLIENT_UNIT_ID",
                 "TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID", "TLB_INVALIDATE_INVAL_SCOPE",
                 "TLB_INVALIDATE_CANCEL_TARGET_GPC_ID"},
    "MEM_OP_C": {"MEMBAR_TYPE", "TLB_INVALIDATE_PDB", "TLB_INVALIDATE_GPC", "TLB_INVALIDATE_REPLAY",
                 "TLB_INVALIDATE_PAGE_TABLE_LEVEL", "TLB_INVALIDATE_ACCESS_TYPE",
                 "TLB_INVALIDATE_ACK_TYPE", "TLB_INVALIDATE_PDB_APERTURE", "TLB_INVALIDATE_PDB_ADDR_LO",
                 "ACCESS_COUNTER_CLR_TARGETED_NOTIFY_TAG"},
    "MEM_OP_D": {"TLB_INVALIDATE_PDB_ADDR_HI", "ACCESS_COUNTER_CLR_TYPE",
                 "ACCESS_COUNTER_CLR_TARGETED_TYPE", "ACCESS_COUNTER_CLR_TARGETED_BANK"},
}
