"""BLACKWELL_COMPUTE_A (0xCDC0) methods = HOPPER_COMPUTE_A's (clcbc0) plus the differences below.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clcdc0.h (not in the stored index: not read field by field)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVCDC0_
Method set: hw-facts.md Appendix A (171 methods): drops the block-linear I2M SET_DST_*
methods, SET_QMD_VIRTUALIZATION_* and SET_MME_DATA_FIFO_CONFIG; adds the EVENT_*
triggers. The EVENT_* field layouts were not read: they decode as one 32-bit V field.

UNVERIFIED: open-gpu-kernel-modules' src/common/sdk/nvidia/inc/class/clcdc0.h
(448d5cc65624d3aa69015efa0d3fb50fd9729f41) defines only the class id, and open-gpu-doc in
the stored index has clcdc0qmd.h but no clcdc0.h. The index holds one full copy of the
header (67,225 characters) whose repository and path it does not report; its first
16,000 characters were read and agree with this table (SET_NOTIFY_A, OFFSET_OUT_UPPER and
SET_REPORT_SEMAPHORE_ADDRESS_UPPER 24:0; nothing between PITCH_OUT 0x190 and LAUNCH_DMA
0x1B0), the rest was not compared.
"""
from decoders.methods import clcbc0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clcdc0.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVCDC0_",
    "base": "clcbc0",
    "note": "method set from hw-facts.md Appendix A; fields assumed equal to clcbc0",
    "unverified": "no full clcdc0.h with a known repository/path in the stored index; "
                  "only its first 16,000 characters compared (see docstring)",
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
