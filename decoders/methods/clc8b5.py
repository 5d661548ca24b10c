"""HOPPER_DMA_COPY_A (0xC8B5) copy-engine methods: the full copy table the other copy classes build on.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clc8b5.h
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf
  prefix:     NVC8B5_
Where the header gives two names to one value (SEMAPHORE_TYPE 1/2, COPY_TYPE 0) the
first-declared name is kept.
"""
PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clc8b5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC8B5_",
}
CLASS_ID = 0xC8B5
TF = {0: "FALSE", 1: "TRUE"}
V = (("V", 0, 32),)
RENDER_MODE = {0: "FALSE", 1: "TRUE", 2: "CONDITIONAL", 3: "RENDER_IF_EQUAL",
               4: "RENDER_IF_NOT_EQUAL"}
PHYS_MODE = (("TARGET", 0, 2, {0: "LOCAL_FB", 1: "COHERENT_SYSMEM", 2: "NONCOHERENT_SYSMEM",
                               3: "PEERMEM"}),
             ("BASIC_KIND", 2, 4), ("PEER_ID", 6, 3), ("FLA", 9, 1))
REMAP_SRC = {0: "SRC_X", 1: "SRC_Y", 2: "SRC_Z", 3: "SRC_W", 4: "CONST_A", 5: "CONST_B",
             6: "NO_WRITE"}
COUNT4 = {0: "ONE", 1: "TWO", 2: "THREE", 3: "FOUR"}
GOBS = {0: "ONE_GOB", 1: "TWO_GOBS", 2: "FOUR_GOBS", 3: "EIGHT_GOBS", 4: "SIXTEEN_GOBS",
        5: "THIRTYTWO_GOBS"}
BLOCK_SIZE = (("WIDTH", 0, 4, {0: "ONE_GOB"}), ("HEIGHT", 4, 4, GOBS), ("DEPTH", 8, 4, GOBS),
              ("GOB_HEIGHT", 12, 4, {1: "GOB_HEIGHT_FERMI_8"}))
ORIGIN = (("X", 0, 16), ("Y", 16, 16))

LAUNCH_DMA_FIELDS = (
    ("DATA_TRANSFER_TYPE", 0, 2, {0: "NONE", 1: "PIPELINED", 2: "NON_PIPELINED"}),
    ("FLUSH_ENABLE", 2, 1, TF),
    ("SEMAPHORE_TYPE", 3, 2, {0: "NONE", 1: "RELEASE_SEMAPHORE_NO_TIMESTAMP",
                              2: "RELEASE_SEMAPHORE_WITH_TIMESTAMP",
                              3: "RELEASE_CONDITIONAL_INTR_SEMAPHORE"}),
    ("INTERRUPT_TYPE", 5, 2, {0: "NONE", 1: "BLOCKING", 2: "NON_BLOCKING"}),
    ("SRC_MEMORY_LAYOUT", 7, 1, {0: "BLOCKLINEAR", 1: "PITCH"}),
    ("DST_MEMORY_LAYOUT", 8, 1, {0: "BLOCKLINEAR", 1: "PITCH"}),
    ("MULTI_LINE_ENABLE", 9, 1, TF),
    ("REMAP_ENABLE", 10, 1, TF),
    ("FORCE_RMWDISABLE", 11, 1, TF),
    ("SRC_TYPE", 12, 1, {0: "VIRTUAL", 1: "PHYSICAL"}),
    ("DST_TYPE", 13, 1, {0: "VIRTUAL", 1: "PHYSICAL"}),
    ("SEMAPHORE_REDUCTION", 14, 4, {0: "IMIN", 1: "IMAX", 2: "IXOR", 3: "IAND", 4: "IOR",
                                    5: "IADD", 6: "INC", 7: "DEC", 8: "INVALIDA",
                                    9: "INVALIDB", 0xA: "FADD", 0xB: "FMIN", 0xC: "FMAX",
                                    0xD: "INVALIDC", 0xE: "INVALIDD", 0xF: "INVALIDE"}),
    ("SEMAPHORE_REDUCTION_SIGN", 18, 1, {0: "SIGNED", 1: "UNSIGNED"}),
    ("SEMAPHORE_REDUCTION_ENABLE", 19, 1, TF),
    ("COPY_TYPE", 20, 2, {0: "PROT2PROT", 1: "SECURE", 2: "NONPROT2NONPROT", 3: "RESERVED"}),
    ("VPRMODE", 22, 1, {0: "VPR_NONE", 1: "VPR_VID2VID"}),
    ("MEMORY_SCRUB_ENABLE", 23, 1, TF),
    ("RESERVED_START_OF_COPY", 24, 1),
    ("FLUSH_TYPE", 25, 1, {0: "SYS", 1: "GL"}),
    ("DISABLE_PLC", 26, 1, TF),
    ("SEMAPHORE_PAYLOAD_SIZE", 27, 1, {0: "ONE_WORD", 1: "TWO_WORD"}),
    ("RESERVED_ERR_CODE", 28, 4),
)

METHODS = {
    0x0100: ("NOP", (("PARAMETER", 0, 32),)),
    0x0140: ("PM_TRIGGER", V),
    0x021C: ("SET_MONITORED_FENCE_TYPE", (("TYPE", 0, 1, {0: "MONITORED_FENCE",
                                                          1: "MONITORED_FENCE_EXT"}),)),
    0x0220: ("SET_MONITORED_FENCE_SIGNAL_ADDR_BASE_UPPER", (("UPPER", 0, 25),)),
    0x0224: ("SET_MONITORED_FENCE_SIGNAL_ADDR_BASE_LOWER", (("LOWER", 0, 32),)),
    0x0240: ("SET_SEMAPHORE_A", (("UPPER", 0, 25),)),
    0x0244: ("SET_SEMAPHORE_B", (("LOWER", 0, 32),)),
    0x0248: ("SET_SEMAPHORE_PAYLOAD", (("PAYLOAD", 0, 32),)),
    0x024C: ("SET_SEMAPHORE_PAYLOAD_UPPER", (("PAYLOAD", 0, 32),)),
    0x0254: ("SET_RENDER_ENABLE_A", (("UPPER", 0, 25),)),
    0x0258: ("SET_RENDER_ENABLE_B", (("LOWER", 0, 32),)),
    0x025C: ("SET_RENDER_ENABLE_C", (("MODE", 0, 3, RENDER_MODE),)),
    0x0260: ("SET_SRC_PHYS_MODE", PHYS_MODE),
    0x0264: ("SET_DST_PHYS_MODE", PHYS_MODE),
    0x0300: ("LAUNCH_DMA", LAUNCH_DMA_FIELDS),
    0x0400: ("OFFSET_IN_UPPER", (("UPPER", 0, 25),)),
    0x0404: ("OFFSET_IN_LOWER", (("VALUE", 0, 32),)),
    0x0408: ("OFFSET_OUT_UPPER", (("UPPER", 0, 25),)),
    0x040C: ("OFFSET_OUT_LOWER", (("VALUE", 0, 32),)),
    0x0410: ("PITCH_IN", (("VALUE", 0, 32),)),
    0x0414: ("PITCH_OUT", (("VALUE", 0, 32),)),
    0x0418: ("LINE_LENGTH_IN", (("VALUE", 0, 32),)),
    0x041C: ("LINE_COUNT", (("VALUE", 0, 32),)),
    0x0500: ("SET_SECURE_COPY_MODE", (("MODE", 0, 1, {0: "ENCRYPT", 1: "DECRYPT"}),)),
    0x0514: ("SET_DECRYPT_AUTH_TAG_COMPARE_ADDR_UPPER", (("UPPER", 0, 25),)),
    0x0518: ("SET_DECRYPT_AUTH_TAG_COMPARE_ADDR_LOWER", (("LOWER", 0, 32),)),
    0x0530: ("SET_ENCRYPT_AUTH_TAG_ADDR_UPPER", (("UPPER", 0, 25),)),
    0x0534: ("SET_ENCRYPT_AUTH_TAG_ADDR_LOWER", (("LOWER", 0, 32),)),
    0x0538: ("SET_ENCRYPT_IV_ADDR_UPPER", (("UPPER", 0, 25),)),
    0x053C: ("SET_ENCRYPT_IV_ADDR_LOWER", (("LOWER", 0, 32),)),
    0x06FC: ("SET_MEMORY_SCRUB_PARAMETERS", (("DISCARDABLE", 0, 1, TF),)),
    0x0700: ("SET_REMAP_CONST_A", V),
    0x0704: ("SET_REMAP_CONST_B", V),
    0x0708: ("SET_REMAP_COMPONENTS", (
        ("DST_X", 0, 3, REMAP_SRC), ("DST_Y", 4, 3, REMAP_SRC), ("DST_Z", 8, 3, REMAP_SRC),
        ("DST_W", 12, 3, REMAP_SRC), ("COMPONENT_SIZE", 16, 2, COUNT4),
        ("NUM_SRC_COMPONENTS", 20, 2, COUNT4), ("NUM_DST_COMPONENTS", 24, 2, COUNT4))),
    0x070C: ("SET_DST_BLOCK_SIZE", BLOCK_SIZE),
    0x0710: ("SET_DST_WIDTH", V),
    0x0714: ("SET_DST_HEIGHT", V),
    0x0718: ("SET_DST_DEPTH", V),
    0x071C: ("SET_DST_LAYER", V),
    0x0720: ("SET_DST_ORIGIN", ORIGIN),
    0x0728: ("SET_SRC_BLOCK_SIZE", BLOCK_SIZE),
    0x072C: ("SET_SRC_WIDTH", V),
    0x0730: ("SET_SRC_HEIGHT", V),
    0x0734: ("SET_SRC_DEPTH", V),
    0x0738: ("SET_SRC_LAYER", V),
    0x073C: ("SET_SRC_ORIGIN", ORIGIN),
    0x0744: ("SRC_ORIGIN_X", (("VALUE", 0, 32),)),
    0x0748: ("SRC_ORIGIN_Y", (("VALUE", 0, 32),)),
    0x074C: ("DST_ORIGIN_X", (("VALUE", 0, 32),)),
    0x0750: ("DST_ORIGIN_Y", (("VALUE", 0, 32),)),
    0x1114: ("PM_TRIGGER_END", V),
}
