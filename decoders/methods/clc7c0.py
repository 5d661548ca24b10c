"""AMPERE_COMPUTE_B (0xC7C0) methods, taken as ADA_COMPUTE_A's (clc9c0).

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clc7c0.h (not in the stored index: not read field by field)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVC7C0_
Method set: shared/reference/hw-facts.md Appendix A (mechanically extracted from the
header at the commit above) lists exactly the same 179 methods at the same offsets
for C7C0 and C9C0. Field layouts are assumed equal to clc9c0.h. UNVERIFIED: check
against clc7c0.h or a capture before relying on a field of a C7C0 method.
"""
from decoders.methods import clc9c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clc7c0.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC7C0_",
    "base": "clc9c0",
    "note": "method set from hw-facts.md Appendix A; fields assumed equal to clc9c0 (UNVERIFIED)",
}
CLASS_ID = 0xC7C0
METHODS = dict(clc9c0.METHODS)
