"""NV_ESC_* escape numbers ('F' ioctls on /dev/nvidiactl and /dev/nvidiaN) as data.

Provenance: NVIDIA/open-gpu-kernel-modules, src/nvidia/arch/nvalloc/unix/include/nv_escape.h
(RM escapes 0x27..0x5F) and kernel-open/common/inc/nv-ioctl-numbers.h + nv-ioctl-numa.h
(NV_IOCTL_BASE 200 + k). Stored copies read: nv_escape.h at 1739a20e (an older tag: it has
CONFIG_GET..SET_EX and no LOCKLESS_DIAGNOSTIC) and nv-ioctl-numbers.h at 2c7bfb47; branch
facts from shared/reference/hw-facts.md 6.1/6.2/6.5 (595.45.04 vs 580.105.08): 0x32/0x33/
0x37/0x38 exist up to 580 and were removed in 595; LOCKLESS_DIAGNOSTIC 0x5F is in 595 and
its presence in 580 was not checked. Name prefix NV_ESC_.

Row: nr -> (name, argument struct(s) by size, where, branches, note).
`where`: "ctl" = /dev/nvidiactl only (NV_CTL_DEVICE_ONLY), "dev" = /dev/nvidiaN only
(NV_ACTUAL_DEVICE_ONLY), "any" otherwise (escape.c). `branches`: branches that define it, or
None for every known one. Argument structs are the names of construct Structs.
"""
from decoders.escapes import structs as S
from decoders.rm import nvos as R

NV_IOCTL_MAGIC = 0x46  # 'F'
NV_IOCTL_BASE = 200

# The kernel looks only at _IOC_NR and _IOC_SIZE (nv.c nvidia_ioctl).
IOC_NR = (0, 8)
IOC_TYPE = (8, 8)
IOC_SIZE = (16, 14)
IOC_DIR = (30, 2)

ESCAPES = {
    0x27: ("NV_ESC_RM_ALLOC_MEMORY", {56: R.nv_ioctl_nvos02_parameters_with_fd}, "dev", None, ""),
    0x28: ("NV_ESC_RM_ALLOC_OBJECT", {20: R.NVOS05_PARAMETERS}, "ctl", None, ""),
    0x29: ("NV_ESC_RM_FREE", {16: R.NVOS00_PARAMETERS}, "ctl", None, ""),
    0x2A: ("NV_ESC_RM_CONTROL", {32: R.NVOS54_PARAMETERS}, "ctl", None, ""),
    0x2B: ("NV_ESC_RM_ALLOC", {32: R.NVOS21_PARAMETERS, 48: R.NVOS64_PARAMETERS}, "ctl", None, ""),
    0x32: ("NV_ESC_RM_CONFIG_GET", {}, "ctl", ("580",), "no handler in 580.105.08 escape.c"),
    0x33: ("NV_ESC_RM_CONFIG_SET", {}, "ctl", ("580",), "no handler in 580.105.08 escape.c"),
    0x34: ("NV_ESC_RM_DUP_OBJECT", {28: R.NVOS55_PARAMETERS}, "ctl", None, ""),
    0x35: ("NV_ESC_RM_SHARE", {24: R.NVOS57_PARAMETERS}, "ctl", None, ""),
    0x37: ("NV_ESC_RM_CONFIG_GET_EX", {}, "ctl", ("580",), "no handler in 580.105.08 escape.c"),
    0x38: ("NV_ESC_RM_CONFIG_SET_EX", {}, "ctl", ("580",), "no handler in 580.105.08 escape.c"),
    0x39: ("NV_ESC_RM_I2C_ACCESS", {}, "dev", None, "NVOS_I2C_ACCESS_PARAMS (32 B), fields not declared"),
    0x41: ("NV_ESC_RM_IDLE_CHANNELS", {56: R.NVOS30_PARAMETERS}, "ctl", None, ""),
    0x4A: ("NV_ESC_RM_VID_HEAP_CONTROL", {}, "ctl", None, "NVOS32_PARAMETERS (184 B), fields not declared"),
    0x4D: ("NV_ESC_RM_ACCESS_REGISTRY", {}, "ctl", None, "NVOS38_PARAMETERS (72 B), fields not declared"),
    0x4E: ("NV_ESC_RM_MAP_MEMORY", {56: R.nv_ioctl_nvos33_parameters_with_fd}, "ctl", None, ""),
    0x4F: ("NV_ESC_RM_UNMAP_MEMORY", {32: R.NVOS34_PARAMETERS}, "ctl", None, ""),
    0x52: ("NV_ESC_RM_GET_EVENT_DATA", {16: R.NVOS41_PARAMETERS}, "any", None, ""),
    0x54: ("NV_ESC_RM_ALLOC_CONTEXT_DMA2", {56: R.NVOS39_PARAMETERS}, "ctl", None, ""),
    0x56: ("NV_ESC_RM_ADD_VBLANK_CALLBACK", {}, "any", None, "defined only; no handler"),
    0x57: ("NV_ESC_RM_MAP_MEMORY_DMA", {64: R.NVOS46_PARAMETERS}, "ctl", None, ""),
    0x58: ("NV_ESC_RM_UNMAP_MEMORY_DMA", {48: R.NVOS47_PARAMETERS}, "ctl", None, ""),
    0x59: ("NV_ESC_RM_BIND_CONTEXT_DMA", {16: R.NVOS49_PARAMETERS}, "ctl", None, ""),
    0x5C: ("NV_ESC_RM_EXPORT_OBJECT_TO_FD", {}, "any", None, "defined only; no handler"),
    0x5D: ("NV_ESC_RM_IMPORT_OBJECT_FROM_FD", {}, "any", None, "defined only; no handler"),
    0x5E: ("NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO", {40: R.NVOS56_PARAMETERS}, "ctl", None, ""),
    0x5F: ("NV_ESC_RM_LOCKLESS_DIAGNOSTIC", {}, "ctl", ("595",),
           "NV_LOCKLESS_DIAGNOSTIC_PARAMS (15412 B); presence in 580 not checked"),
    NV_IOCTL_BASE + 0: ("NV_ESC_CARD_INFO", {"array": S.nv_ioctl_card_info_t}, "any", None, ""),
    NV_IOCTL_BASE + 1: ("NV_ESC_REGISTER_FD", {4: S.nv_ioctl_register_fd_t}, "dev", None, ""),
    NV_IOCTL_BASE + 6: ("NV_ESC_ALLOC_OS_EVENT", {16: S.nv_ioctl_alloc_os_event_t}, "any", None, ""),
    NV_IOCTL_BASE + 7: ("NV_ESC_FREE_OS_EVENT", {16: S.nv_ioctl_free_os_event_t}, "any", None, ""),
    NV_IOCTL_BASE + 9: ("NV_ESC_STATUS_CODE", {12: S.nv_ioctl_status_code_t}, "ctl", None, ""),
    NV_IOCTL_BASE + 10: ("NV_ESC_CHECK_VERSION_STR", {72: S.nv_ioctl_rm_api_version_t}, "any", None, ""),
    NV_IOCTL_BASE + 11: ("NV_ESC_IOCTL_XFER_CMD", {16: R.nv_ioctl_xfer_t}, "any", None, ""),
    NV_IOCTL_BASE + 12: ("NV_ESC_ATTACH_GPUS_TO_FD", {"array": S.nv_ioctl_attach_gpu_t}, "any", None, ""),
    NV_IOCTL_BASE + 13: ("NV_ESC_QUERY_DEVICE_INTR", {8: S.nv_ioctl_query_device_intr_t}, "any", None, ""),
    NV_IOCTL_BASE + 14: ("NV_ESC_SYS_PARAMS", {8: S.nv_ioctl_sys_params_t}, "any", None, ""),
    NV_IOCTL_BASE + 15: ("NV_ESC_NUMA_INFO", {560: S.nv_ioctl_numa_info_t}, "any", None, ""),
    NV_IOCTL_BASE + 16: ("NV_ESC_SET_NUMA_STATUS", {4: S.nv_ioctl_set_numa_status_t}, "any", None, ""),
    NV_IOCTL_BASE + 17: ("NV_ESC_EXPORT_TO_DMABUF_FD", {2608: S.nv_ioctl_export_to_dma_buf_fd_t},
                         "any", None, ""),
    NV_IOCTL_BASE + 18: ("NV_ESC_WAIT_OPEN_COMPLETE", {8: S.nv_ioctl_wait_open_complete_t}, "any", None, ""),
}

ESCAPE_BY_NAME = {row[0]: nr for nr, row in ESCAPES.items()}

# Short names used in one-line summaries (NV_ESC_RM_ALLOC -> RM_ALLOC).
def short_name(name):
    return name[len("NV_ESC_"):] if name.startswith("NV_ESC_") else name
