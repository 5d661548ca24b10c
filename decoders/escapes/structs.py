"""Argument structs of the nv-ioctl escapes (NV_IOCTL_BASE + k, 'F').

Provenance: NVIDIA/open-gpu-kernel-modules, kernel-open/common/inc/nv-ioctl.h and
nv-ioctl-numa.h; layouts as measured with gdb in shared/reference/hw-facts.md 6.2/6.3
(595.45.04 headers, identical at 580.105.08). Names are NVIDIA's.
NV_ESC_NUMA_INFO (560 B) and NV_ESC_EXPORT_TO_DMABUF_FD (2608 B) are known by size only:
their fields were not read, so they render as a hex dump with their size checked.
"""
from construct import Array, Bytes, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul, Padding, Struct

NvU8, NvU16, NvU32, NvU64, NvS32 = Int8ul, Int16ul, Int32ul, Int64ul, Int32sl

# nv_pci_info_t inside nv_ioctl_card_info_t: 12 bytes at offset 4 (domain, bus, slot,
# function, vendor_id, device_id).
nv_pci_info_t = Struct(
    "domain" / NvU32, "bus" / NvU8, "slot" / NvU8, "function" / NvU8, "reserved0" / Padding(1),
    "vendor_id" / NvU16, "device_id" / NvU16)

nv_ioctl_card_info_t = Struct(
    "valid" / NvU8, "reserved0" / Padding(3), "pci_info" / nv_pci_info_t, "gpu_id" / NvU32,
    "interrupt_line" / NvU16, "reserved1" / Padding(2), "reg_address" / NvU64,
    "reg_size" / NvU64, "fb_address" / NvU64, "fb_size" / NvU64, "minor_number" / NvU32,
    "dev_name" / Bytes(10), "reserved2" / Padding(2))

nv_ioctl_register_fd_t = Struct("ctl_fd" / NvS32)

nv_ioctl_alloc_os_event_t = Struct(
    "hClient" / NvU32, "hDevice" / NvU32, "fd" / NvU32, "Status" / NvU32)

nv_ioctl_free_os_event_t = Struct(
    "hClient" / NvU32, "hDevice" / NvU32, "fd" / NvU32, "Status" / NvU32)

nv_ioctl_status_code_t = Struct(
    "domain" / NvU32, "bus" / NvU8, "slot" / NvU8, "reserved0" / Padding(2), "status" / NvU32)

NV_RM_API_VERSION_STRING_LENGTH = 64
nv_ioctl_rm_api_version_t = Struct(
    "cmd" / NvU32, "reply" / NvU32, "versionString" / Bytes(NV_RM_API_VERSION_STRING_LENGTH))
NV_RM_API_VERSION_CMD = {0: "STRICT", ord("1"): "RELAXED", ord("2"): "QUERY"}
NV_RM_API_VERSION_REPLY = {0: "UNRECOGNIZED", 1: "RECOGNIZED"}

# NV_ESC_ATTACH_GPUS_TO_FD: NvU32 gpu_id[N]; the struct below is one element.
nv_ioctl_attach_gpu_t = Struct("gpu_id" / NvU32)

nv_ioctl_query_device_intr_t = Struct("intrStatus" / NvU32, "status" / NvU32)

nv_ioctl_sys_params_t = Struct("memblock_size" / NvU64)

nv_ioctl_set_numa_status_t = Struct("status" / NvS32)

nv_ioctl_wait_open_complete_t = Struct("rc" / NvS32, "adapterStatus" / NvU32)

# Known size only (fields not read): decoded as opaque bytes of that size.
nv_ioctl_numa_info_t = Struct("opaque" / Bytes(560))
nv_ioctl_export_to_dma_buf_fd_t = Struct("opaque" / Bytes(2608))

CARD_INFO_ARRAY = Array  # re-export for callers that build test input (N elements)
