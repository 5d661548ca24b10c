"""AMPERE_COMPUTE_A (0xC6C0) methods = AMPERE_COMPUTE_B's (clc7c0) less the methods C7C0 added.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/compute/clc6c0.h (not in the stored index: not read field by field)
  commit:     c8607fe576b53ff821ffcf97e7548d2de11c4eaf (hw-facts.md section 0)
  prefix:     NVC6C0_
Method set: hw-facts.md Appendix A (154 methods; the 25 MME / report-semaphore /
THROTTLE_SM methods below are C7C0+). SEND_SIGNALING_PCAS2_B actions 0xC/0xD and its
SELECT / OFFSET_MINUS_ONE fields are C7C0+ (hw-facts.md 3.2). Other fields assumed
equal to C7C0's (UNVERIFIED).
"""
from decoders.methods import clc7c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/compute/clc6c0.h",
    "commit": "c8607fe576b53ff821ffcf97e7548d2de11c4eaf",
    "prefix": "NVC6C0_",
    "base": "clc7c0",
    "note": "method set from hw-facts.md Appendix A; fields assumed equal to clc7c0 (UNVERIFIED)",
}
CLASS_ID = 0xC6C0

METHODS = dict(clc7c0.METHODS)
for _gone in (0x0114, 0x0118, 0x011C, 0x0120, 0x0124,        # LOAD_MME_*, SET_MME_SHADOW_RAM_CONTROL
              0x0158, 0x015C, 0x0160, 0x0164, 0x0168,        # SET_REPORT_SEMAPHORE_*, REPORT_SEMAPHORE_EXECUTE
              0x01EC,                                        # SET_MME_SWITCH_STATE
              0x0550, 0x0554, 0x0558, 0x055C, 0x0560, 0x0564, 0x0568, 0x056C, 0x0570, 0x0574,
              0x07FC, 0x0DEC, 0x3800, 0x3804):
    del METHODS[_gone]
METHODS[0x02C0] = ("SEND_SIGNALING_PCAS2_B", (("PCAS_ACTION", 0, 4, {
    k: v for k, v in clc7c0.clc9c0.PCAS_ACTION.items() if k < 0xC}),))
