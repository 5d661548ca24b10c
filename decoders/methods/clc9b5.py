"""BLACKWELL_DMA_COPY_A (0xC9B5) copy-engine methods, taken as HOPPER_DMA_COPY_A's (clc8b5).

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clc9b5.h
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf
  prefix:     NVC9B5_
hw-facts.md 3.4: method offsets identical across C7B5/C8B5/C9B5/CAB5. Field layouts were
not compared field by field with clc9b5.h: assumed equal to clc8b5 (UNVERIFIED).
"""
from decoders.methods import clc8b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clc9b5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC9B5_",
    "base": "clc8b5",
    "note": "offsets per hw-facts.md 3.4; fields assumed equal to clc8b5 (UNVERIFIED)",
}
CLASS_ID = 0xC9B5
METHODS = dict(clc8b5.METHODS)
