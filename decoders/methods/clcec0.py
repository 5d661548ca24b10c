"""BLACKWELL_COMPUTE_B (0xCEC0) methods = BLACKWELL_COMPUTE_A's (clcdc0) plus the additions below.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clcec0.h
  commit:     c84b8d41b25d93d396f73ac03ef984c87eb5ea22 (stored index); method list checked
              against hw-facts.md Appendix A (c8607fe576b53ff821ffcf97e7548d2de11c4eaf)
  prefix:     NVCEC0_
UPDATE_ALL_COMPUTE_CONTROL fields from hw-facts.md 3.2. The *_BY_TAG, SET_WFI_FILTER_STATE
and SET_MME_TASK_EVENT_STATE field layouts were not transcribed: one 32-bit V field.
"""
from decoders.methods import clcdc0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clcec0.h",
    "commit": "c84b8d41b25d93d396f73ac03ef984c87eb5ea22",
    "prefix": "NVCEC0_",
    "base": "clcdc0",
}
CLASS_ID = 0xCEC0
V = (("V", 0, 32),)
TF = clcdc0.clcbc0.TF

METHODS = dict(clcdc0.METHODS)
METHODS.update({
    0x020C: ("UPDATE_ALL_COMPUTE_CONTROL", (("VALID", 0, 1, TF),
                                            ("STICK_IN_COMPUTE_IN_GRAPHICS_MODE", 4, 1, TF))),
    0x0F10: ("SET_WFI_FILTER_STATE", V),
    0x1458: ("INVALIDATE_SAMPLER_CACHE_BY_TAG", V),
    0x145C: ("INVALIDATE_TEXTURE_HEADER_CACHE_BY_TAG", V),
    0x1460: ("INVALIDATE_TEXTURE_DATA_CACHE_BY_TAG", V),
    0x1464: ("SET_MME_TASK_EVENT_STATE", V),
    0x1930: ("INVALIDATE_SAMPLER_CACHE_BY_TAG_NO_WFI", V),
    0x1934: ("INVALIDATE_TEXTURE_HEADER_CACHE_BY_TAG_NO_WFI", V),
    0x1938: ("INVALIDATE_TEXTURE_DATA_CACHE_BY_TAG_NO_WFI", V),
})
