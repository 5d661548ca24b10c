"""KEPLER_INLINE_TO_MEMORY_B (0xA140) methods, compared field by field with cla140.h.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/inline-to-memory/cla140.h
  commit:     bedefb1adb60ac1fddcd2b55645acf1d59c90f97
  prefix:     NVA140_
(open-gpu-kernel-modules' src/common/sdk/nvidia/inc/class/cla140.h at
1739a20efc4acb55fd1dc53dcc66057b70c2613c defines only the class id.)
A140 declares its own method set, a subset of the compute class's at the same offsets.
Methods whose fields equal ADA_COMPUTE_A's (clc9c0) reference that tuple; the three
upper-address fields that are 24:0 here (SET_NOTIFY_A, OFFSET_OUT_UPPER,
SET_I2M_SEMAPHORE_A; 7:0 or 16:0 on C9C0) reference HOPPER_COMPUTE_A's (clcbc0), whose
fields are the same 24:0. SET_FALCON00..31 sit at 0x200..0x27C here (0x500.. on compute).
The header gives SET_MME_SHADOW_SCRATCH(i) no count; 256 is the compute class's.
"""
from decoders.methods import clc9c0, clcbc0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/inline-to-memory/cla140.h",
    "commit": "bedefb1adb60ac1fddcd2b55645acf1d59c90f97",
    "prefix": "NVA140_",
    "base": "clc9c0",
}
CLASS_ID = 0xA140
V = clc9c0.V

METHODS = {k: clc9c0.METHODS[k] for k in (
    0x0000, 0x0100, 0x0108, 0x010C, 0x0110, 0x0130, 0x0134, 0x0138, 0x013C, 0x0140, 0x0144,
    0x0150, 0x0154, 0x0180, 0x0184, 0x018C, 0x0190, 0x0194, 0x0198, 0x019C, 0x01A0, 0x01A4,
    0x01A8, 0x01AC, 0x01B0, 0x01B4, 0x01E0, 0x01E4, 0x01F0, 0x01F4, 0x01F8, 0x01FC,
    0x1550, 0x1554, 0x1558, 0x1944, 0x3400)}
METHODS.update({k: clcbc0.METHODS[k] for k in (0x0104, 0x0188, 0x01DC)})
METHODS.update({0x0200 + 4 * k: (f"SET_FALCON{k:02d}", V) for k in range(32)})
