"""BLACKWELL_COMPUTE_A (0xCDC0) methods = HOPPER_COMPUTE_A's (clcbc0) plus the differences below.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clcdc0.h (not in the stored index: not read field by field)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVCDC0_
Method set: hw-facts.md Appendix A (171 methods): drops the block-linear I2M SET_DST_*
methods, SET_QMD_VIRTUALIZATION_* and SET_MME_DATA_FIFO_CONFIG; adds the EVENT_*
triggers. The EVENT_* field layouts were not read: they decode as one 32-bit V field.
"""
from decoders.methods import clcbc0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clcdc0.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVCDC0_",
    "base": "clcbc0",
    "note": "method set from hw-facts.md Appendix A; fields assumed equal to clcbc0 (UNVERIFIED)",
}
CLASS_ID = 0xCDC0
V = (("V", 0, 32),)

METHODS = dict(clcbc0.METHODS)
for _gone in (0x0194, 0x0198, 0x019C, 0x01A0, 0x01A4, 0x01A8, 0x01AC,
              0x0214, 0x0218, 0x029C, 0x0574):
    del METHODS[_gone]
METHODS.update({
    0x074C: ("EVENT_START_TRIGGER", V),
    0x075C: ("EVENT_STOP_TRIGGER", V),
    0x0FFC: ("EVENT_STOP_TRIGGER_WFI", V),
})
