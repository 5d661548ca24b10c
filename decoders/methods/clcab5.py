"""BLACKWELL_DMA_COPY_B (0xCAB5) copy-engine methods, taken as BLACKWELL_DMA_COPY_A's (clc9b5).

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clcab5.h
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf
  prefix:     NVCAB5_
hw-facts.md 3.4: method offsets identical across C7B5/C8B5/C9B5/CAB5. Fields assumed
equal to clc9b5 (UNVERIFIED).
"""
from decoders.methods import clc9b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clcab5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVCAB5_",
    "base": "clc9b5",
    "note": "offsets per hw-facts.md 3.4; fields assumed equal to clc9b5 (UNVERIFIED)",
}
CLASS_ID = 0xCAB5
METHODS = dict(clc9b5.METHODS)
