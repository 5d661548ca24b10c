"""Launch reconstruction: method packets -> GPU memory image -> QMDs -> launch summaries.

Follows inline-to-memory uploads (OFFSET_OUT_UPPER/OFFSET_OUT, LINE_LENGTH_IN,
LINE_COUNT, PITCH_OUT, LAUNCH_DMA, LOAD_INLINE_DATA) of the compute and I2M classes
and copy-engine transfers whose source bytes are known, into a sparse GPU VA image.
A QMD is found from SEND_PCAS_A (VA >> 8), from an inline QMD load
(SET_INLINE_QMD_ADDRESS_A/B + LOAD_INLINE_QMD_DATA(i)), or from a DEPENDENT_QMDn_POINTER.
Facts used: h100-measured.md section 1 (launch order, cbank0 layout, +1 KiB shared
memory, cluster QMDs); hw-facts.md sections 3, 4, 5.

  memory.py   SparseMemory: the GPU VA image
  channel.py  per-channel state, per-class handler plans, shared helpers
  decoder.py  LaunchDecoder: the method handlers (packets -> memory, semaphores, QMDs)
  ops.py      the same handlers as word-level ops for replayed pushbuffer templates
  qmds.py     QMD -> Launch, dependent QMD chains (graph replays)
  summary.py  Launch, its summary parts (_SummaryPlan), driver constants, node tree
Whole captures (SUBMISSION records per channel) are decoded by decoders/submissions.py.
"""
from decoders.launch.decoder import LaunchDecoder
from decoders.launch.memory import PAGE, SparseMemory
from decoders.launch.summary import (ARCH_CBANK0, DRIVER_SMEM_RESERVED, FAMILY_ARCH,
                                     MAX_DEPENDENT_CHAIN, QMD_TYPE_NAMES, SMEM_GRANULE, Launch,
                                     build_node, driver_constants, family_of_sm)

__all__ = ["LaunchDecoder", "PAGE", "SparseMemory", "ARCH_CBANK0", "DRIVER_SMEM_RESERVED",
           "FAMILY_ARCH", "MAX_DEPENDENT_CHAIN", "QMD_TYPE_NAMES", "SMEM_GRANULE", "Launch",
           "build_node", "driver_constants", "family_of_sm"]
