"""BLACKWELL_DMA_COPY_B (0xCAB5) copy-engine methods = BLACKWELL_DMA_COPY_A's (clc9b5) + differences.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clcab5.h
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf
  prefix:     NVCAB5_
Compared field by field with the header: equal to C9B5 except LAUNCH_DMA's
DATA_TRANSFER_TYPE gains PREFETCH (3) and SET_DST/SRC_BLOCK_SIZE gain KIND_BPP (17:16).
"""
from decoders.methods import clc8b5, clc9b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clcab5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVCAB5_",
    "base": "clc9b5",
}
CLASS_ID = 0xCAB5
DATA_TRANSFER_TYPE = ("DATA_TRANSFER_TYPE", 0, 2, {0: "NONE", 1: "PIPELINED", 2: "NON_PIPELINED",
                                                   3: "PREFETCH"})
LAUNCH_DMA_FIELDS = tuple(DATA_TRANSFER_TYPE if f[0] == "DATA_TRANSFER_TYPE" else f
                          for f in clc9b5.LAUNCH_DMA_FIELDS)
BLOCK_SIZE = clc8b5.BLOCK_SIZE + (("KIND_BPP", 16, 2, {0: "BL_32", 1: "BL_8", 2: "BL_16",
                                                       3: "BL_24"}),)

METHODS = dict(clc9b5.METHODS)
METHODS.update({
    0x0300: ("LAUNCH_DMA", LAUNCH_DMA_FIELDS),
    0x070C: ("SET_DST_BLOCK_SIZE", BLOCK_SIZE),
    0x0728: ("SET_SRC_BLOCK_SIZE", BLOCK_SIZE),
})
