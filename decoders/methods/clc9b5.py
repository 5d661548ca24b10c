"""BLACKWELL_DMA_COPY_A (0xC9B5) copy-engine methods = HOPPER_DMA_COPY_A's (clc8b5) less FORCE_RMWDISABLE.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clc9b5.h
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf
  prefix:     NVC9B5_
Compared field by field with the header: every method, offset, field and value equals
C8B5's except LAUNCH_DMA, which no longer declares FORCE_RMWDISABLE (bit 11).
"""
from decoders.methods import clc8b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clc9b5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC9B5_",
    "base": "clc8b5",
}
CLASS_ID = 0xC9B5
LAUNCH_DMA_FIELDS = tuple(f for f in clc8b5.LAUNCH_DMA_FIELDS if f[0] != "FORCE_RMWDISABLE")

METHODS = dict(clc8b5.METHODS)
METHODS[0x0300] = ("LAUNCH_DMA", LAUNCH_DMA_FIELDS)
