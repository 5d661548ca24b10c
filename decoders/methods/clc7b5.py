"""AMPERE_DMA_COPY_B (0xC7B5) copy-engine methods = HOPPER_DMA_COPY_A's (clc8b5) less Hopper additions.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clc7b5.h (not in the stored index: not read)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVC7B5_
hw-facts.md 3.4: offsets identical across C7B5..CAB5; the secure-copy methods
(0x500-0x53C) and SET_MEMORY_SCRUB_PARAMETERS (0x6FC) are C8B5+. Other fields assumed
equal to clc8b5 (UNVERIFIED).
"""
from decoders.methods import clc8b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clc7b5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC7B5_",
    "base": "clc8b5",
    "note": "derived from hw-facts.md 3.4; fields assumed equal to clc8b5 (UNVERIFIED)",
}
CLASS_ID = 0xC7B5
METHODS = {k: v for k, v in clc8b5.METHODS.items()
           if not (0x0500 <= k <= 0x053C or k == 0x06FC)}
