"""AMPERE_DMA_COPY_A (0xC6B5) copy-engine methods = AMPERE_DMA_COPY_B's (clc7b5) less what C7B5 added.

Provenance:
  repository: NVIDIA/open-gpu-kernel-modules
  path:       kernel-open/nvidia-uvm/clc6b5.h
  commit:     1739a20efc4acb55fd1dc53dcc66057b70c2613c
  prefix:     NVC6B5_
Compared field by field with the header. Differences from C7B5: no
SET_MONITORED_FENCE_* (0x21C..0x224) and no SET_SEMAPHORE_PAYLOAD_UPPER (0x24C);
LAUNCH_DMA has no SEMAPHORE_PAYLOAD_SIZE (27:27), its SEMAPHORE_TYPE values 1/2 are named
RELEASE_ONE_WORD_SEMAPHORE / RELEASE_FOUR_WORD_SEMAPHORE, and SEMAPHORE_REDUCTION defines
only IMIN..DEC (0..7) and FADD (0xA). Every other method is C7B5's tuple.
"""
from decoders.methods import clc7b5

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "kernel-open/nvidia-uvm/clc6b5.h",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC6B5_",
    "base": "clc7b5",
}
CLASS_ID = 0xC6B5
SEMAPHORE_TYPE = ("SEMAPHORE_TYPE", 3, 2, {0: "NONE", 1: "RELEASE_ONE_WORD_SEMAPHORE",
                                           2: "RELEASE_FOUR_WORD_SEMAPHORE",
                                           3: "RELEASE_CONDITIONAL_INTR_SEMAPHORE"})
SEMAPHORE_REDUCTION = ("SEMAPHORE_REDUCTION", 14, 4, {0: "IMIN", 1: "IMAX", 2: "IXOR", 3: "IAND",
                                                      4: "IOR", 5: "IADD", 6: "INC", 7: "DEC",
                                                      0xA: "FADD"})
_REPLACE = {"SEMAPHORE_TYPE": SEMAPHORE_TYPE, "SEMAPHORE_REDUCTION": SEMAPHORE_REDUCTION}
LAUNCH_DMA_FIELDS = tuple(_REPLACE.get(f[0], f) for f in clc7b5.LAUNCH_DMA_FIELDS
                          if f[0] != "SEMAPHORE_PAYLOAD_SIZE")

METHODS = {k: v for k, v in clc7b5.METHODS.items()
           if k not in (0x021C, 0x0220, 0x0224, 0x024C)}
METHODS[0x0300] = ("LAUNCH_DMA", LAUNCH_DMA_FIELDS)
