"""Method packet forms and the host method range: what a pushbuffer header says about its
data (decoders/pushbuf.py decodes headers into packets of these forms; decoders/launch
reads the packets). Their own module so that neither decoder imports the other.
Names from clc56f.h NVC56F_DMA_SEC_OP_* / NVC56F_DMA_TERT_OP_* (hw-facts.md 2.1/2.2)."""

INC, NON_INC, ONE_INC, IMMD = "INC", "NON_INC", "ONE_INC", "IMMD"
END_PB_SEGMENT, NOP = "END_PB_SEGMENT", "NOP"
SET_SUBDEVICE_MASK, STORE_SUBDEVICE_MASK, USE_SUBDEVICE_MASK = (
    "SET_SUBDEVICE_MASK", "STORE_SUBDEVICE_MASK", "USE_SUBDEVICE_MASK")

# Methods below this byte offset are host methods, decoded with the channel's host class
# whatever the subchannel (dev_pbdma.ref, NV_UDMA).
HOST_METHOD_LIMIT = 0x100
