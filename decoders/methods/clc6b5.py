"""AMPERE_DMA_COPY_A (0xC6B5) copy-engine methods, taken as AMPERE_DMA_COPY_B's (clc7b5).

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/dma-copy/clc6b5.h (not in the stored index: not read)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVC6B5_
No public listing of the C6B5 methods was read; the table is C7B5's (UNVERIFIED).
"""
from decoders.methods import clc7b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/dma-copy/clc6b5.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC6B5_",
    "base": "clc7b5",
    "note": "assumed equal to clc7b5 (UNVERIFIED)",
}
CLASS_ID = 0xC6B5
METHODS = dict(clc7b5.METHODS)
