"""Argument structs of the nv-ioctl escapes (NV_IOCTL_BASE + k, 'F').

Provenance: NVIDIA/open-gpu-kernel-modules, kernel-open/common/inc/nv-ioctl.h and
nv-ioctl-numa.h; layouts as measured with gdb in shared/reference/hw-facts.md 6.2/6.3
(595.45.04 headers, identical at 580.105.08). Names are NVIDIA's.
NV_ESC_NUMA_INFO (560 B, nv-ioctl-numa.h) and NV_ESC_EXPORT_TO_DMABUF_FD (2608 B, nv-ioctl.h)
were read at tag 580.142 for issue 26 (they were opaque bytes before); padding is natural C
alignment (__aligned(8) / NV_ALIGN_BYTES(8)), named reserved*.
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

# NV_IOCTL_NUMA_INFO_MAX_OFFLINE_ADDRESSES 64
nv_offline_addresses_t = Struct(
    "addresses" / Array(64, NvU64), "numEntries" / NvU32, "reserved0" / Padding(4))
nv_ioctl_numa_info_t = Struct(
    "nid" / NvS32, "status" / NvS32, "memblock_size" / NvU64, "numa_mem_addr" / NvU64,
    "numa_mem_size" / NvU64, "use_auto_online" / NvU8, "reserved0" / Padding(7),
    "offline_addresses" / nv_offline_addresses_t)
NV_IOCTL_NUMA_STATUS = {0: "DISABLED", 1: "OFFLINE", 2: "ONLINE_IN_PROGRESS", 3: "ONLINE",
                        4: "ONLINE_FAILED", 5: "OFFLINE_IN_PROGRESS", 6: "OFFLINE_FAILED"}
# NV_DMABUF_EXPORT_MAX_HANDLES 128; mappingType NV_DMABUF_EXPORT_MAPPING_TYPE_*
nv_ioctl_export_to_dma_buf_fd_t = Struct(
    "fd" / NvS32, "hClient" / NvU32, "totalObjects" / NvU32, "numObjects" / NvU32,
    "index" / NvU32, "reserved0" / Padding(4), "totalSize" / NvU64, "mappingType" / NvU8,
    "bAllowMmap" / NvU8, "reserved1" / Padding(2), "handles" / Array(128, NvU32),
    "reserved2" / Padding(4), "offsets" / Array(128, NvU64), "sizes" / Array(128, NvU64),
    "status" / NvU32, "reserved3" / Padding(4))
NV_DMABUF_EXPORT_MAPPING_TYPE = {0: "DEFAULT", 1: "FORCE_PCIE"}

CARD_INFO_ARRAY = Array  # re-export for callers that build test input (N elements)
