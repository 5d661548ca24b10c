"""AMPERE_DMA_COPY_B (0xC7B5) copy-engine methods, compared field by field with clc7b5.h.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       kernel-open/nvidia-uvm/clc7b5.h
  commit:     1739a20efc4acb55fd1dc53dcc66057b70c2613c
  prefix:     NVC7B5_
Methods identical to HOPPER_DMA_COPY_A's (clc8b5) are referenced. Differences from C8B5:
the upper-address fields are 16:0 (17 bits; C8B5 24:0) and SET_RENDER_ENABLE_A's is 7:0;
SET_GLOBAL_COUNTER_UPPER/LOWER and SET_PAGEOUT_START_PAUPPER/PALOWER (0x280..0x28C)
exist here only; LAUNCH_DMA has no COPY_TYPE or MEMORY_SCRUB_ENABLE and its VPRMODE is
23:22 with four values; the secure-copy methods (0x500..0x53C) and
SET_MEMORY_SCRUB_PARAMETERS (0x6FC) are absent. Where the header gives two names to one
SEMAPHORE_TYPE value the first-declared name is kept.
"""
from decoders.methods import clc8b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "kernel-open/nvidia-uvm/clc7b5.h",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC7B5_",
    "base": "clc8b5",
}
CLASS_ID = 0xC7B5
TF = clc8b5.TF
V = clc8b5.V
UPPER17 = (("UPPER", 0, 17),)
VPRMODE = ("VPRMODE", 22, 2, {0: "VPR_NONE", 1: "VPR_VID2VID", 2: "VPR_VID2SYS", 3: "VPR_SYS2VID"})


def launch_dma_fields(base_fields):
    """C8B5's LAUNCH_DMA without COPY_TYPE/MEMORY_SCRUB_ENABLE, VPRMODE widened to 23:22."""
    out = []
    for f in base_fields:
        if f[0] in ("COPY_TYPE", "MEMORY_SCRUB_ENABLE"):
            continue
        out.append(VPRMODE if f[0] == "VPRMODE" else f)
    return tuple(out)


LAUNCH_DMA_FIELDS = launch_dma_fields(clc8b5.LAUNCH_DMA_FIELDS)

METHODS = {k: v for k, v in clc8b5.METHODS.items()
           if not (0x0500 <= k <= 0x053C or k == 0x06FC)}
METHODS.update({
    0x0220: ("SET_MONITORED_FENCE_SIGNAL_ADDR_BASE_UPPER", UPPER17),
    0x0240: ("SET_SEMAPHORE_A", UPPER17),
    0x0254: ("SET_RENDER_ENABLE_A", (("UPPER", 0, 8),)),
    0x0280: ("SET_GLOBAL_COUNTER_UPPER", V),
    0x0284: ("SET_GLOBAL_COUNTER_LOWER", V),
    0x0288: ("SET_PAGEOUT_START_PAUPPER", (("V", 0, 5),)),
    0x028C: ("SET_PAGEOUT_START_PALOWER", V),
    0x0300: ("LAUNCH_DMA", LAUNCH_DMA_FIELDS),
    0x0400: ("OFFSET_IN_UPPER", UPPER17),
    0x0408: ("OFFSET_OUT_UPPER", UPPER17),
})
