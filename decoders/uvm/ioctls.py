"""UVM ioctls (/dev/nvidia-uvm and /dev/nvidia-uvm-tools): numbers, names, param structs.

Provenance: NVIDIA/open-gpu-kernel-modules, kernel-open/nvidia-uvm/uvm_ioctl.h and
uvm_linux_ioctl.h. Stored copy read: uvm_ioctl.h at commit 41595798880394d9c6fa5e76b37ffc1bc428cfb2
(copyright 2013-2024; a pre-580 tag: it has UVM_MAX_GPUS_V1/UVM_MAX_GPUS and the 24-byte
UVM_FREE_PARAMS). UVM_MAX_GPUS_V1 = NV_MAX_DEVICES = 32, UVM_MAX_GPUS = 32 * 8 = 256
(uvm_types.h / uvm_processors.h); UvmCounterConfig = {NvU32 scope, name; NvProcessorUuid
gpuid; NvU32 state} = 28 B (uvm_types.h). Branch facts from shared/reference/hw-facts.md
6.4/6.5 (gdb on 580.105.08 and 595.45.04 headers): UVM_FREE_PARAMS is 24 B on 580 and 16 B
on 595; numbers 9, 11, 18, 19, 54, 55 exist up to 580 and were removed in 595; UVM_DISCARD
(80) is in the 595 list and was not seen in the 580-era header read here, so on 580 it is
named but its size is unknown. 570: UVM_FREE 24 B per tinygrad's nv_570 autogen
(hw-facts.md 7.4); other 570/610 facts unknown. Name prefix UVM_.

The request passed to ioctl() is the plain number (UVM_IOCTL_BASE(i) == i on Linux): no
_IOC size. Every params struct ends with NV_STATUS rmStatus (out).
Layouts are x86-64 LP64 with NV_ALIGN_BYTES(8) on NvU64/NvP64: padding is explicit.
"""
from construct import Array, Bytes, Int8ul, Int32sl, Int32ul, Int64ul, Padding, Struct

from decoders.rm.nvos import UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, UvmGpuMappingAttributes

NvU8, NvU32, NvS32, NvU64, NvP64 = Int8ul, Int32ul, Int32sl, Int64ul, Int64ul
NvHandle = NvU32
NV_STATUS = NvU32
NvProcessorUuid = Bytes(16)
UvmStream = NvU64
UVM_MAX_GPUS_V1 = 32
UVM_MAX_GPUS = 256
UVM_MAX_STREAMS_PER_IOCTL_CALL = 32
UVM_MAX_COUNTERS_PER_IOCTL_CALL = 32
UVM_MAX_RANGE_GROUPS_PER_IOCTL_CALL = 32

UvmCounterConfig = Struct("scope" / NvU32, "name" / NvU32, "gpuid" / NvProcessorUuid,
                          "state" / NvU32)

UVM_INITIALIZE_PARAMS = Struct("flags" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
_RANGE = Struct("requestedBase" / NvU64, "length" / NvU64, "rmStatus" / NV_STATUS,
                "reserved0" / Padding(4))
UVM_RESERVE_VA_PARAMS = _RANGE
UVM_RELEASE_VA_PARAMS = _RANGE
UVM_REGION_COMMIT_PARAMS = Struct(
    "requestedBase" / NvU64, "length" / NvU64, "streamId" / UvmStream, "gpuUuid" / NvProcessorUuid,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_REGION_DECOMMIT_PARAMS = _RANGE
UVM_REGION_SET_STREAM_PARAMS = Struct(
    "requestedBase" / NvU64, "length" / NvU64, "newStreamId" / UvmStream,
    "gpuUuid" / NvProcessorUuid, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_SET_STREAM_RUNNING_PARAMS = Struct("streamId" / UvmStream, "rmStatus" / NV_STATUS,
                                       "reserved0" / Padding(4))
UVM_SET_STREAM_STOPPED_PARAMS = Struct(
    "streamIdArray" / Array(UVM_MAX_STREAMS_PER_IOCTL_CALL, UvmStream), "nStreams" / NvU64,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_RUN_TEST_PARAMS = Struct(
    "gpuUuid" / NvProcessorUuid, "test" / NvU32,
    "multiGpu" / Struct("peerGpuUuid" / NvProcessorUuid, "peerId" / NvU32),
    "rmStatus" / NV_STATUS)
UVM_ADD_SESSION_PARAMS = Struct(
    "pidTarget" / NvU32, "reserved0" / Padding(4), "countersBaseAddress" / NvP64,
    "sessionIndex" / NvS32, "rmStatus" / NV_STATUS)
UVM_REMOVE_SESSION_PARAMS = Struct("sessionIndex" / NvS32, "rmStatus" / NV_STATUS)
UVM_ENABLE_COUNTERS_PARAMS = Struct(
    "sessionIndex" / NvS32, "config" / Array(UVM_MAX_COUNTERS_PER_IOCTL_CALL, UvmCounterConfig),
    "count" / NvU32, "rmStatus" / NV_STATUS)
UVM_MAP_COUNTER_PARAMS = Struct(
    "sessionIndex" / NvS32, "scope" / NvU32, "counterName" / NvU32, "gpuUuid" / NvProcessorUuid,
    "reserved0" / Padding(4), "addr" / NvP64, "rmStatus" / NV_STATUS, "reserved1" / Padding(4))
UVM_CREATE_EVENT_QUEUE_PARAMS = Struct(
    "sessionIndex" / NvS32, "eventQueueIndex" / NvU32, "queueSize" / NvU64,
    "notificationCount" / NvU64, "timeStampType" / NvU32, "rmStatus" / NV_STATUS)
UVM_REMOVE_EVENT_QUEUE_PARAMS = Struct("sessionIndex" / NvS32, "eventQueueIndex" / NvU32,
                                       "rmStatus" / NV_STATUS)
UVM_MAP_EVENT_QUEUE_PARAMS = Struct(
    "sessionIndex" / NvS32, "eventQueueIndex" / NvU32, "userRODataAddr" / NvP64,
    "userRWDataAddr" / NvP64, "readIndexAddr" / NvP64, "writeIndexAddr" / NvP64,
    "queueBufferAddr" / NvP64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_EVENT_CTRL_PARAMS = Struct(
    "sessionIndex" / NvS32, "eventQueueIndex" / NvU32, "eventType" / NvS32, "enable" / NvU32,
    "rmStatus" / NV_STATUS)
UVM_REGISTER_MPS_SERVER_PARAMS = Struct(
    "gpuUuidArray" / Array(UVM_MAX_GPUS_V1, NvProcessorUuid), "numGpus" / NvU32,
    "reserved0" / Padding(4), "serverId" / NvU64, "rmStatus" / NV_STATUS, "reserved1" / Padding(4))
UVM_REGISTER_MPS_CLIENT_PARAMS = Struct("serverId" / NvU64, "rmStatus" / NV_STATUS,
                                        "reserved0" / Padding(4))
UVM_GET_GPU_UUID_TABLE_PARAMS = Struct(
    "gpuUuidArray" / Array(UVM_MAX_GPUS_V1, NvProcessorUuid), "validCount" / NvU32,
    "rmStatus" / NV_STATUS)
UVM_CREATE_RANGE_GROUP_PARAMS = Struct("rangeGroupId" / NvU64, "rmStatus" / NV_STATUS,
                                       "reserved0" / Padding(4))
UVM_DESTROY_RANGE_GROUP_PARAMS = UVM_CREATE_RANGE_GROUP_PARAMS
UVM_REGISTER_GPU_VASPACE_PARAMS = Struct(
    "gpuUuid" / NvProcessorUuid, "rmCtrlFd" / NvS32, "hClient" / NvHandle, "hVaSpace" / NvHandle,
    "rmStatus" / NV_STATUS)
UVM_UNREGISTER_GPU_VASPACE_PARAMS = Struct("gpuUuid" / NvProcessorUuid, "rmStatus" / NV_STATUS)
UVM_REGISTER_CHANNEL_PARAMS = Struct(
    "gpuUuid" / NvProcessorUuid, "rmCtrlFd" / NvS32, "hClient" / NvHandle, "hChannel" / NvHandle,
    "reserved0" / Padding(4), "base" / NvU64, "length" / NvU64, "rmStatus" / NV_STATUS,
    "reserved1" / Padding(4))
UVM_UNREGISTER_CHANNEL_PARAMS = Struct(
    "gpuUuid" / NvProcessorUuid, "hClient" / NvHandle, "hChannel" / NvHandle, "rmStatus" / NV_STATUS)
UVM_ENABLE_PEER_ACCESS_PARAMS = Struct("gpuUuidA" / NvProcessorUuid, "gpuUuidB" / NvProcessorUuid,
                                       "rmStatus" / NV_STATUS)
UVM_DISABLE_PEER_ACCESS_PARAMS = UVM_ENABLE_PEER_ACCESS_PARAMS
UVM_SET_RANGE_GROUP_PARAMS = Struct(
    "rangeGroupId" / NvU64, "requestedBase" / NvU64, "length" / NvU64, "rmStatus" / NV_STATUS,
    "reserved0" / Padding(4))
# 580 (and 570): base + length; 595 dropped length (hw-facts.md 6.4, gdb on both header sets).
UVM_FREE_PARAMS_580 = Struct("base" / NvU64, "length" / NvU64, "rmStatus" / NV_STATUS,
                             "reserved0" / Padding(4))
UVM_FREE_PARAMS_595 = Struct("base" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_MEM_MAP_PARAMS = Struct("regionBase" / NvP64, "regionLength" / NvU64, "rmStatus" / NV_STATUS,
                            "reserved0" / Padding(4))
UVM_REGISTER_GPU_PARAMS = Struct(
    "gpu_uuid" / NvProcessorUuid, "numaEnabled" / NvU8, "reserved0" / Padding(3),
    "numaNodeId" / NvS32, "rmCtrlFd" / NvS32, "hClient" / NvHandle, "hSmcPartRef" / NvHandle,
    "rmStatus" / NV_STATUS)
UVM_UNREGISTER_GPU_PARAMS = Struct("gpu_uuid" / NvProcessorUuid, "rmStatus" / NV_STATUS)
UVM_PAGEABLE_MEM_ACCESS_PARAMS = Struct("pageableMemAccess" / NvU8, "reserved0" / Padding(3),
                                        "rmStatus" / NV_STATUS)
UVM_PREVENT_MIGRATION_RANGE_GROUPS_PARAMS = Struct(
    "rangeGroupIds" / Array(UVM_MAX_RANGE_GROUPS_PER_IOCTL_CALL, NvU64), "numGroupIds" / NvU64,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_ALLOW_MIGRATION_RANGE_GROUPS_PARAMS = UVM_PREVENT_MIGRATION_RANGE_GROUPS_PARAMS
UVM_SET_PREFERRED_LOCATION_PARAMS = Struct(
    "requestedBase" / NvU64, "length" / NvU64, "preferredLocation" / NvProcessorUuid,
    "preferredCpuNumaNode" / NvS32, "rmStatus" / NV_STATUS)
UVM_UNSET_PREFERRED_LOCATION_PARAMS = _RANGE
UVM_ENABLE_READ_DUPLICATION_PARAMS = _RANGE
UVM_DISABLE_READ_DUPLICATION_PARAMS = _RANGE
UVM_SET_ACCESSED_BY_PARAMS = Struct(
    "requestedBase" / NvU64, "length" / NvU64, "accessedByUuid" / NvProcessorUuid,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_UNSET_ACCESSED_BY_PARAMS = UVM_SET_ACCESSED_BY_PARAMS
UVM_MIGRATE_PARAMS = Struct(
    "base" / NvU64, "length" / NvU64, "destinationUuid" / NvProcessorUuid, "flags" / NvU32,
    "reserved0" / Padding(4), "semaphoreAddress" / NvU64, "semaphorePayload" / NvU32,
    "cpuNumaNode" / NvS32, "userSpaceStart" / NvU64, "userSpaceLength" / NvU64,
    "rmStatus" / NV_STATUS, "reserved1" / Padding(4))
UVM_MIGRATE_RANGE_GROUP_PARAMS = Struct(
    "rangeGroupId" / NvU64, "destinationUuid" / NvProcessorUuid, "rmStatus" / NV_STATUS,
    "reserved0" / Padding(4))
UVM_ENABLE_SYSTEM_WIDE_ATOMICS_PARAMS = Struct("gpu_uuid" / NvProcessorUuid, "rmStatus" / NV_STATUS)
UVM_DISABLE_SYSTEM_WIDE_ATOMICS_PARAMS = UVM_ENABLE_SYSTEM_WIDE_ATOMICS_PARAMS
UVM_TOOLS_INIT_EVENT_TRACKER_PARAMS = Struct(
    "queueBuffer" / NvU64, "queueBufferSize" / NvU64, "controlBuffer" / NvU64,
    "processor" / NvProcessorUuid, "allProcessors" / NvU32, "uvmFd" / NvU32,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_TOOLS_SET_NOTIFICATION_THRESHOLD_PARAMS = Struct("notificationThreshold" / NvU32,
                                                     "rmStatus" / NV_STATUS)
UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS_PARAMS = Struct(
    "eventTypeFlags" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS_PARAMS = UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS_PARAMS
UVM_TOOLS_ENABLE_COUNTERS_PARAMS = Struct(
    "counterTypeFlags" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_TOOLS_DISABLE_COUNTERS_PARAMS = UVM_TOOLS_ENABLE_COUNTERS_PARAMS
UVM_TOOLS_READ_PROCESS_MEMORY_PARAMS = Struct(
    "buffer" / NvU64, "size" / NvU64, "targetVa" / NvU64, "bytesRead" / NvU64,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_TOOLS_WRITE_PROCESS_MEMORY_PARAMS = Struct(
    "buffer" / NvU64, "size" / NvU64, "targetVa" / NvU64, "bytesWritten" / NvU64,
    "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_PARAMS = Struct(
    "tablePtr" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS = Struct(
    "base" / NvU64, "length" / NvU64, "gpuUuid" / NvProcessorUuid, "rmStatus" / NV_STATUS,
    "reserved0" / Padding(4))
UVM_UNMAP_EXTERNAL_PARAMS = UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS
UVM_TOOLS_FLUSH_EVENTS_PARAMS = Struct("rmStatus" / NV_STATUS)
UVM_ALLOC_SEMAPHORE_POOL_PARAMS = Struct(
    "base" / NvU64, "length" / NvU64,
    "perGpuAttributes" / Array(UVM_MAX_GPUS, UvmGpuMappingAttributes),
    "gpuAttributesCount" / NvU64, "rmStatus" / NV_STATUS, "reserved0" / Padding(4))
UVM_CLEAN_UP_ZOMBIE_RESOURCES_PARAMS = Struct("rmStatus" / NV_STATUS)
UVM_PAGEABLE_MEM_ACCESS_ON_GPU_PARAMS = Struct(
    "gpu_uuid" / NvProcessorUuid, "pageableMemAccess" / NvU8, "reserved0" / Padding(3),
    "rmStatus" / NV_STATUS)
UVM_POPULATE_PAGEABLE_PARAMS = Struct("base" / NvU64, "length" / NvU64, "flags" / NvU32,
                                      "rmStatus" / NV_STATUS)
UVM_VALIDATE_VA_RANGE_PARAMS = Struct("base" / NvU64, "length" / NvU64, "rmStatus" / NV_STATUS,
                                      "reserved0" / Padding(4))
UVM_CREATE_EXTERNAL_RANGE_PARAMS = UVM_VALIDATE_VA_RANGE_PARAMS
UVM_MAP_EXTERNAL_SPARSE_PARAMS = UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS
UVM_MM_INITIALIZE_PARAMS = Struct("uvmFd" / NvS32, "rmStatus" / NV_STATUS)
UVM_ALLOC_DEVICE_P2P_PARAMS = Struct(
    "base" / NvU64, "length" / NvU64, "offset" / NvU64, "gpuUuid" / NvProcessorUuid,
    "rmCtrlFd" / NvS32, "hClient" / NvU32, "hMemory" / NvU32, "rmStatus" / NV_STATUS)
UVM_CLEAR_ALL_ACCESS_COUNTERS_PARAMS = Struct("rmStatus" / NV_STATUS)
UVM_IS_8_SUPPORTED_PARAMS = Struct("is8Supported" / NvU32, "rmStatus" / NV_STATUS)
UVM_DEINITIALIZE_PARAMS = Struct()  # no argument

UVM_INITIALIZE = 0x30000001
UVM_DEINITIALIZE = 0x30000002

# number -> (name, {branch: struct or None (size unknown)}, branches defining it or None=all,
# on nvidia-uvm-tools fds too?)
_ALL = None
UVM_IOCTLS = {
    1: ("UVM_RESERVE_VA", UVM_RESERVE_VA_PARAMS, _ALL),
    2: ("UVM_RELEASE_VA", UVM_RELEASE_VA_PARAMS, _ALL),
    3: ("UVM_REGION_COMMIT", UVM_REGION_COMMIT_PARAMS, _ALL),
    4: ("UVM_REGION_DECOMMIT", UVM_REGION_DECOMMIT_PARAMS, _ALL),
    5: ("UVM_REGION_SET_STREAM", UVM_REGION_SET_STREAM_PARAMS, _ALL),
    6: ("UVM_SET_STREAM_RUNNING", UVM_SET_STREAM_RUNNING_PARAMS, _ALL),
    7: ("UVM_SET_STREAM_STOPPED", UVM_SET_STREAM_STOPPED_PARAMS, _ALL),
    9: ("UVM_RUN_TEST", UVM_RUN_TEST_PARAMS, ("570", "580")),
    10: ("UVM_ADD_SESSION", UVM_ADD_SESSION_PARAMS, _ALL),
    11: ("UVM_REMOVE_SESSION", UVM_REMOVE_SESSION_PARAMS, ("570", "580")),
    12: ("UVM_ENABLE_COUNTERS", UVM_ENABLE_COUNTERS_PARAMS, _ALL),
    13: ("UVM_MAP_COUNTER", UVM_MAP_COUNTER_PARAMS, _ALL),
    14: ("UVM_CREATE_EVENT_QUEUE", UVM_CREATE_EVENT_QUEUE_PARAMS, _ALL),
    15: ("UVM_REMOVE_EVENT_QUEUE", UVM_REMOVE_EVENT_QUEUE_PARAMS, _ALL),
    16: ("UVM_MAP_EVENT_QUEUE", UVM_MAP_EVENT_QUEUE_PARAMS, _ALL),
    17: ("UVM_EVENT_CTRL", UVM_EVENT_CTRL_PARAMS, _ALL),
    18: ("UVM_REGISTER_MPS_SERVER", UVM_REGISTER_MPS_SERVER_PARAMS, ("570", "580")),
    19: ("UVM_REGISTER_MPS_CLIENT", UVM_REGISTER_MPS_CLIENT_PARAMS, ("570", "580")),
    20: ("UVM_GET_GPU_UUID_TABLE", UVM_GET_GPU_UUID_TABLE_PARAMS, _ALL),
    # 21/22 (UVM_REGION_SET_BACKING/UNSET_BACKING) are Windows-only in uvm_ioctl.h.
    23: ("UVM_CREATE_RANGE_GROUP", UVM_CREATE_RANGE_GROUP_PARAMS, _ALL),
    24: ("UVM_DESTROY_RANGE_GROUP", UVM_DESTROY_RANGE_GROUP_PARAMS, _ALL),
    25: ("UVM_REGISTER_GPU_VASPACE", UVM_REGISTER_GPU_VASPACE_PARAMS, _ALL),
    26: ("UVM_UNREGISTER_GPU_VASPACE", UVM_UNREGISTER_GPU_VASPACE_PARAMS, _ALL),
    27: ("UVM_REGISTER_CHANNEL", UVM_REGISTER_CHANNEL_PARAMS, _ALL),
    28: ("UVM_UNREGISTER_CHANNEL", UVM_UNREGISTER_CHANNEL_PARAMS, _ALL),
    29: ("UVM_ENABLE_PEER_ACCESS", UVM_ENABLE_PEER_ACCESS_PARAMS, _ALL),
    30: ("UVM_DISABLE_PEER_ACCESS", UVM_DISABLE_PEER_ACCESS_PARAMS, _ALL),
    31: ("UVM_SET_RANGE_GROUP", UVM_SET_RANGE_GROUP_PARAMS, _ALL),
    33: ("UVM_MAP_EXTERNAL_ALLOCATION", UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, _ALL),
    34: ("UVM_FREE", {"570": UVM_FREE_PARAMS_580, "580": UVM_FREE_PARAMS_580,
                     "595": UVM_FREE_PARAMS_595}, _ALL),
    35: ("UVM_MEM_MAP", UVM_MEM_MAP_PARAMS, _ALL),
    37: ("UVM_REGISTER_GPU", UVM_REGISTER_GPU_PARAMS, _ALL),
    38: ("UVM_UNREGISTER_GPU", UVM_UNREGISTER_GPU_PARAMS, _ALL),
    39: ("UVM_PAGEABLE_MEM_ACCESS", UVM_PAGEABLE_MEM_ACCESS_PARAMS, _ALL),
    40: ("UVM_PREVENT_MIGRATION_RANGE_GROUPS", UVM_PREVENT_MIGRATION_RANGE_GROUPS_PARAMS, _ALL),
    41: ("UVM_ALLOW_MIGRATION_RANGE_GROUPS", UVM_ALLOW_MIGRATION_RANGE_GROUPS_PARAMS, _ALL),
    42: ("UVM_SET_PREFERRED_LOCATION", UVM_SET_PREFERRED_LOCATION_PARAMS, _ALL),
    43: ("UVM_UNSET_PREFERRED_LOCATION", UVM_UNSET_PREFERRED_LOCATION_PARAMS, _ALL),
    44: ("UVM_ENABLE_READ_DUPLICATION", UVM_ENABLE_READ_DUPLICATION_PARAMS, _ALL),
    45: ("UVM_DISABLE_READ_DUPLICATION", UVM_DISABLE_READ_DUPLICATION_PARAMS, _ALL),
    46: ("UVM_SET_ACCESSED_BY", UVM_SET_ACCESSED_BY_PARAMS, _ALL),
    47: ("UVM_UNSET_ACCESSED_BY", UVM_UNSET_ACCESSED_BY_PARAMS, _ALL),
    51: ("UVM_MIGRATE", UVM_MIGRATE_PARAMS, _ALL),
    53: ("UVM_MIGRATE_RANGE_GROUP", UVM_MIGRATE_RANGE_GROUP_PARAMS, _ALL),
    54: ("UVM_ENABLE_SYSTEM_WIDE_ATOMICS", UVM_ENABLE_SYSTEM_WIDE_ATOMICS_PARAMS, ("570", "580")),
    55: ("UVM_DISABLE_SYSTEM_WIDE_ATOMICS", UVM_DISABLE_SYSTEM_WIDE_ATOMICS_PARAMS, ("570", "580")),
    56: ("UVM_TOOLS_INIT_EVENT_TRACKER", UVM_TOOLS_INIT_EVENT_TRACKER_PARAMS, _ALL),
    57: ("UVM_TOOLS_SET_NOTIFICATION_THRESHOLD", UVM_TOOLS_SET_NOTIFICATION_THRESHOLD_PARAMS, _ALL),
    58: ("UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS", UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS_PARAMS, _ALL),
    59: ("UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS", UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS_PARAMS, _ALL),
    60: ("UVM_TOOLS_ENABLE_COUNTERS", UVM_TOOLS_ENABLE_COUNTERS_PARAMS, _ALL),
    61: ("UVM_TOOLS_DISABLE_COUNTERS", UVM_TOOLS_DISABLE_COUNTERS_PARAMS, _ALL),
    62: ("UVM_TOOLS_READ_PROCESS_MEMORY", UVM_TOOLS_READ_PROCESS_MEMORY_PARAMS, _ALL),
    63: ("UVM_TOOLS_WRITE_PROCESS_MEMORY", UVM_TOOLS_WRITE_PROCESS_MEMORY_PARAMS, _ALL),
    64: ("UVM_TOOLS_GET_PROCESSOR_UUID_TABLE", UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_PARAMS, _ALL),
    65: ("UVM_MAP_DYNAMIC_PARALLELISM_REGION", UVM_MAP_DYNAMIC_PARALLELISM_REGION_PARAMS, _ALL),
    66: ("UVM_UNMAP_EXTERNAL", UVM_UNMAP_EXTERNAL_PARAMS, _ALL),
    67: ("UVM_TOOLS_FLUSH_EVENTS", UVM_TOOLS_FLUSH_EVENTS_PARAMS, _ALL),
    68: ("UVM_ALLOC_SEMAPHORE_POOL", UVM_ALLOC_SEMAPHORE_POOL_PARAMS, _ALL),
    69: ("UVM_CLEAN_UP_ZOMBIE_RESOURCES", UVM_CLEAN_UP_ZOMBIE_RESOURCES_PARAMS, _ALL),
    70: ("UVM_PAGEABLE_MEM_ACCESS_ON_GPU", UVM_PAGEABLE_MEM_ACCESS_ON_GPU_PARAMS, _ALL),
    71: ("UVM_POPULATE_PAGEABLE", UVM_POPULATE_PAGEABLE_PARAMS, _ALL),
    72: ("UVM_VALIDATE_VA_RANGE", UVM_VALIDATE_VA_RANGE_PARAMS, _ALL),
    73: ("UVM_CREATE_EXTERNAL_RANGE", UVM_CREATE_EXTERNAL_RANGE_PARAMS, _ALL),
    74: ("UVM_MAP_EXTERNAL_SPARSE", UVM_MAP_EXTERNAL_SPARSE_PARAMS, _ALL),
    75: ("UVM_MM_INITIALIZE", UVM_MM_INITIALIZE_PARAMS, _ALL),
    76: ("UVM_TOOLS_INIT_EVENT_TRACKER_V2", UVM_TOOLS_INIT_EVENT_TRACKER_PARAMS, _ALL),
    77: ("UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_V2", UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_PARAMS, _ALL),
    78: ("UVM_ALLOC_DEVICE_P2P", UVM_ALLOC_DEVICE_P2P_PARAMS, _ALL),
    79: ("UVM_CLEAR_ALL_ACCESS_COUNTERS", UVM_CLEAR_ALL_ACCESS_COUNTERS_PARAMS, _ALL),
    80: ("UVM_DISCARD", {"595": None}, ("595",)),
    2047: ("UVM_IS_8_SUPPORTED", UVM_IS_8_SUPPORTED_PARAMS, _ALL),
    UVM_INITIALIZE: ("UVM_INITIALIZE", UVM_INITIALIZE_PARAMS, _ALL),
    UVM_DEINITIALIZE: ("UVM_DEINITIALIZE", UVM_DEINITIALIZE_PARAMS, _ALL),
}

# Commands the nvidia-uvm-tools file answers (uvm_tools.c dispatches these numbers).
UVM_TOOLS_COMMANDS = frozenset((56, 57, 58, 59, 60, 61, 64, 67, 76, 77))

BRANCHES_KNOWN = ("580", "595")


def uvm_command(number, branch="580"):
    """(name, struct or None, note) for a UVM command number on `branch`."""
    row = UVM_IOCTLS.get(number)
    if row is None:
        return None, None, "unknown UVM command"
    name, spec, branches = row
    note = ""
    if branches is not None and branch not in branches:
        note = (f"branch {branch} unknown" if branch not in BRANCHES_KNOWN + ("570",)
                else f"not defined on {branch} (only {'/'.join(branches)})")
    if isinstance(spec, dict):
        st = spec.get(branch)
        if st is None:
            known = ", ".join(f"{b}: {s.sizeof() if s is not None else '?'} B"
                              for b, s in spec.items())
            return name, None, (note + "; " if note else "") + f"layout on {branch} unknown ({known})"
        return name, st, note
    if branch not in BRANCHES_KNOWN + ("570",):
        note = note or f"branch {branch}: layout from the 580-era header (unverified)"
    return name, spec, note


UVM_BY_NAME = {row[0]: number for number, row in UVM_IOCTLS.items()}
