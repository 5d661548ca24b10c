"""AMPERE_COMPUTE_B (0xC7C0) methods: identical to ADA_COMPUTE_A's (clc9c0), so the same tuples.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       src/common/sdk/nvidia/inc/class/clc7c0.h
  commit:     1739a20efc4acb55fd1dc53dcc66057b70c2613c
  prefix:     NVC7C0_
The header was read in full and every method offset, field bit range and enum value
compared with clc9c0: the same 179 methods (hw-facts.md Appendix A agrees), the same
fields and values, so the table is C9C0's dict. Array counts are not in the header;
they are clc9c0's (slots up to the next declared method).
"""
from decoders.methods import clc9c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc7c0.h",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC7C0_",
    "base": "clc9c0",
}
CLASS_ID = 0xC7C0
METHODS = dict(clc9c0.METHODS)
