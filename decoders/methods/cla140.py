"""KEPLER_INLINE_TO_MEMORY_B (0xA140) methods: the inline-to-memory subset of the compute class.

Provenance:
  repository: NVIDIA/open-gpu-doc
  path:       classes/inline-to-memory/cla140.h (offsets read through hw-facts.md 3.4)
  commit:     bedefb1adb60ac1fddcd2b55645acf1d59c90f97
  prefix:     NVA140_
hw-facts.md 3.4: A140 uses the compute class's I2M offsets (0x180..0x1E4). Field
layouts are referenced from ADA_COMPUTE_A (clc9c0), whose I2M methods carry the
Kepler-era 17-bit / 8-bit upper-address widths; not compared field by field with cla140.h.
"""
from decoders.methods import clc9c0

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-doc",
    "path": "classes/inline-to-memory/cla140.h",
    "commit": "bedefb1adb60ac1fddcd2b55645acf1d59c90f97",
    "prefix": "NVA140_",
    "base": "clc9c0",
    "note": "I2M offsets per hw-facts.md 3.4; fields referenced from clc9c0 (UNVERIFIED)",
}
CLASS_ID = 0xA140
METHODS = {k: clc9c0.METHODS[k] for k in (
    0x0100, 0x0180, 0x0184, 0x0188, 0x018C, 0x0190, 0x0194, 0x0198, 0x019C, 0x01A0,
    0x01A4, 0x01A8, 0x01AC, 0x01B0, 0x01B4, 0x01DC, 0x01E0, 0x01E4)}
