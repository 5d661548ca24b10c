"""The multi-GPU path (issue 26): RM controls and allocation params of peer-to-peer, IPC
export/import, fabric memory and GPU identity, as NCCL's and CUDA's peer and IPC calls
issue them.

Provenance: NVIDIA/open-gpu-kernel-modules at tag 580.142 (the newest 580 tag stored; the
captures are 580.159.04), src/common/sdk/nvidia/inc/:
class/cl503b.h (NV503B_ALLOC_PARAMETERS, NV503B_BAR1_P2P_DMA_INFO, NV503B_FLAGS_P2P_TYPE),
class/cl00e0.h (NV_EXPORT_MEM_PACKET, NV00E0_ALLOCATION_PARAMETERS, NV_MEM_EXPORT_*_LEN 16/32/
64, NV_MAX_DEVICES 32), class/cl00f8.h (NV00F8_ALLOCATION_PARAMETERS, NV00F8_ALLOC_FLAGS_*),
class/cl00f9.h, class/cl00fb.h,
ctrl/ctrl0000/ctrl0000system.h (GET_P2P_CAPS_V2, NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS 32,
_SQUARED 1024, NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE 9, the p2pCaps bits and
NV0000_P2P_CAPS_STATUS_* values; GET_FABRIC_STATUS),
ctrl/ctrl0000/ctrl0000gpu.h (GET_UUID_INFO, GET_UUID_FROM_GPU_ID, NV0000_GPU_MAX_GID_LENGTH
0x100, the FLAGS_FORMAT 1:0 / FLAGS_TYPE 2:2 values),
ctrl/ctrl0000/ctrl0000unix.h (OS_UNIX_EXPORT_OBJECT_TO_FD, IMPORT_OBJECT_FROM_FD,
OS_GET_GPU_INFO, GET_EXPORT_OBJECT_INFO, CREATE_EXPORT_OBJECT_FD, EXPORT_OBJECTS_TO_FD (512
objects), IMPORT_OBJECTS_FROM_FD (128 objects), NV0000_OS_UNIX_EXPORT_OBJECT_FD_BUFFER_SIZE 64,
the EXPORT_OBJECT_TYPE and IMPORT_OBJECT_TYPE values),
ctrl/ctrl0000/ctrl0000client.h (SUBSCRIBE_TO_IMEX_CHANNEL),
ctrl/ctrl00e0.h (EXPORT_MEM 256 handles, IMPORT_MEM 128, NV00E0_ADDR_SPACE_TYPE_*),
ctrl/ctrl00f8.h (GET_INFO, DESCRIBE (512 PFNs), ATTACH_MEM / DETACH_MEM (64), GET_NUM_ATTACHED_MEM),
ctrl/ctrl00f9.h (GET_INFO), ctrl/ctrl00fb.h (VALIDATE, 512 PFNs),
ctrl/ctrl2080/ctrl2080gpu.h (GPU_GET_ID, GET_P2P_CAPS, NV2080_GET_P2P_CAPS_UUID_LEN 16),
ctrl/ctrl2080/ctrl2080bus.h (GET_NVLINK_PEER_ID_MASK, NV2080_CTRL_BUS_MAX_NUM_GPUS 32;
SET_P2P_MAPPING / UNSET_P2P_MAPPING and CONNECTION_TYPE_*),
ctrl/ctrl2080/ctrl2080fb.h (FB_GET_NUMA_INFO, 64 offline addresses),
ctrl/ctrl2080/ctrl2080fla.h (FLA_GET_RANGE, FLA_GET_FABRIC_MEM_STATS).
Definitions are ours, written as data from those headers; padding is natural C alignment
(NV_DECLARE_ALIGNED 8), named reserved*, and each sizeof is checked in
tests/test_multi_gpu_tables.py against the size the header's layout gives. Name prefix:
NVIDIA's struct names. None of these has been seen in a capture yet (captures/multi-gpu is
one process that uses no peer access): they are declared for the 2-rank NCCL capture
(captures/ddp-2rank, scripts/record_ddp.sh), which reported params_decoded_public 0.915.
"""
from construct import Array, Bytes, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul, Padding, Struct

NvU8, NvU16, NvU32, NvU64, NvP64, NvS32 = Int8ul, Int16ul, Int32ul, Int64ul, Int64ul, Int32sl
NvHandle, NvBool = NvU32, NvU8

MAX_ATTACHED_GPUS = 32          # NV0000_CTRL_SYSTEM_MAX_ATTACHED_GPUS
P2P_CAPS_INDEX_TABLE_SIZE = 9   # NV0000_CTRL_P2P_CAPS_INDEX_TABLE_SIZE

# --- value tables --------------------------------------------------------------------------
# p2pCaps bits (NV0000_CTRL_SYSTEM_GET_P2P_CAPS_*_SUPPORTED, one bit each; bit 11 unused).
NV0000_CTRL_SYSTEM_GET_P2P_CAPS = {
    0x1: "WRITES", 0x2: "READS", 0x4: "PROP", 0x8: "NVLINK", 0x10: "ATOMICS", 0x20: "LOOPBACK",
    0x40: "PCI", 0x80: "INDIRECT_WRITES", 0x100: "INDIRECT_READS", 0x200: "INDIRECT_ATOMICS",
    0x400: "INDIRECT_NVLINK", 0x1000: "C2C", 0x2000: "PCI_BAR1"}
NV0000_P2P_CAPS_STATUS = {0: "OK", 1: "CHIPSET_NOT_SUPPORTED", 2: "GPU_NOT_SUPPORTED",
                          3: "IOH_TOPOLOGY_NOT_SUPPORTED", 4: "DISABLED_BY_REGKEY",
                          5: "NOT_SUPPORTED"}
# p2pCapsStatus[] is indexed by NV0000_CTRL_P2P_CAPS_INDEX_*.
NV0000_CTRL_P2P_CAPS_INDEX = {0: "READ", 1: "WRITE", 2: "NVLINK", 3: "ATOMICS", 4: "PROP",
                              5: "LOOPBACK", 6: "PCI", 7: "C2C", 8: "PCI_BAR1"}
NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS = {1: "SKIP", 2: "UNINITIALIZED", 3: "IN_PROGRESS",
                                        4: "INITIALIZED"}
# GET_UUID_INFO / GET_UUID_FROM_GPU_ID flags: FORMAT 1:0 (0 ASCII, 2 BINARY), TYPE 2:2 (SHA256).
NV0000_CTRL_CMD_GPU_GET_UUID_FLAGS = {0x2: "FORMAT_BINARY", 0x4: "TYPE_SHA256"}
NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TYPE = {0: "NONE", 1: "RM"}
NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_TYPE = {0: "NONE", 1: "VIDMEM", 2: "SYSMEM", 3: "FABRIC",
                                              4: "FABRIC_MC"}
NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_FLAGS = {0x1: "EMPTY_FD"}
NV00E0_ADDR_SPACE_TYPE = {1: "SYSMEM", 2: "VIDMEM", 3: "FABRIC", 4: "FABRIC_MC"}
NV_MEM_EXPORT_FLAGS = {0x1: "DUP_BY_UUID"}
NV00F8_ALLOC_FLAGS = {0x1: "FLEXIBLE_FLA", 0x2: "FORCE_NONCONTIGUOUS", 0x4: "FORCE_CONTIGUOUS",
                      0x8: "READ_ONLY"}
NV503B_FLAGS_P2P_TYPE = {0: "GPA", 1: "SPA"}        # flags 0:0
NV2080_CTRL_CMD_BUS_SET_P2P_MAPPING_CONNECTION_TYPE = {0: "INVALID", 1: "NVLINK", 2: "PCIE",
                                                       3: "PCIE_BAR1", 4: "C2C"}

TABLES_P2P = {
    "P2P_CAPS": NV0000_CTRL_SYSTEM_GET_P2P_CAPS, "P2P_CAPS_STATUS": NV0000_P2P_CAPS_STATUS,
    "FABRIC_STATUS": NV0000_CTRL_GET_SYSTEM_FABRIC_STATUS,
    "UUID_FLAGS": NV0000_CTRL_CMD_GPU_GET_UUID_FLAGS,
    "EXPORT_OBJECT_TYPE": NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TYPE,
    "IMPORT_OBJECT_TYPE": NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_TYPE,
    "EXPORT_TO_FD_FLAGS": NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_FLAGS,
    "ADDR_SPACE_TYPE_00E0": NV00E0_ADDR_SPACE_TYPE, "MEM_EXPORT_FLAGS": NV_MEM_EXPORT_FLAGS,
    "FABRIC_ALLOC_FLAGS": NV00F8_ALLOC_FLAGS, "P2P_TYPE": NV503B_FLAGS_P2P_TYPE,
    "P2P_CONNECTION_TYPE": NV2080_CTRL_CMD_BUS_SET_P2P_MAPPING_CONNECTION_TYPE,
}

# --- allocation params ------------------------------------------------------------------------
NV503B_BAR1_P2P_DMA_INFO = Struct("dma_address" / NvU64, "dma_size" / NvU64)
NV503B_ALLOC_PARAMETERS = Struct(
    "hSubDevice" / NvHandle, "hPeerSubDevice" / NvHandle, "subDevicePeerIdMask" / NvU32,
    "peerSubDevicePeerIdMask" / NvU32, "mailboxBar1Addr" / NvU64, "mailboxTotalSize" / NvU32,
    "flags" / NvU32, "subDeviceEgmPeerIdMask" / NvU32, "peerSubDeviceEgmPeerIdMask" / NvU32,
    "l2pBar1P2PDmaInfo" / NV503B_BAR1_P2P_DMA_INFO, "p2lBar1P2PDmaInfo" / NV503B_BAR1_P2P_DMA_INFO)

NV_EXPORT_MEM_PACKET = Struct("uuid" / Bytes(16), "opaque" / Bytes(16))
NV00E0_ALLOCATION_PARAMETERS = Struct(
    "imexChannel" / NvU32, "packet" / NV_EXPORT_MEM_PACKET, "numMaxHandles" / NvU16,
    "reserved0" / Padding(2), "flags" / NvU32, "metadata" / Bytes(64),
    "deviceInstanceMask" / NvU32, "giIdMasks" / Array(32, NvU32), "numCurHandles" / NvU16,
    "reserved1" / Padding(2))
# the anonymous `map` member of NV00F8_ALLOCATION_PARAMETERS, named by its field
NV00F8_ALLOCATION_MAP = Struct("offset" / NvU64, "hVidMem" / NvHandle, "flags" / NvU32)
NV00F8_ALLOCATION_PARAMETERS = Struct(
    "alignment" / NvU64, "allocSize" / NvU64, "pageSize" / NvU64, "allocFlags" / NvU32,
    "reserved0" / Padding(4), "map" / NV00F8_ALLOCATION_MAP)
NV00F9_ALLOCATION_PARAMETERS = Struct(
    "imexChannel" / NvU32, "expPacket" / NV_EXPORT_MEM_PACKET, "index" / NvU16,
    "reserved0" / Padding(2), "flags" / NvU32, "reserved1" / Padding(4), "pOsEvent" / NvP64,
    "id" / NvU64)
NV00FB_ALLOCATION_PARAMETERS = Struct(
    "exportUuid" / Bytes(16), "index" / NvU16, "reserved0" / Padding(2), "flags" / NvU32,
    "id" / NvU64)

ALLOC_PARAMS_P2P = {
    0x503B: NV503B_ALLOC_PARAMETERS, 0x00E0: NV00E0_ALLOCATION_PARAMETERS,
    0x00F8: NV00F8_ALLOCATION_PARAMETERS, 0x00F9: NV00F9_ALLOCATION_PARAMETERS,
    0x00FB: NV00FB_ALLOCATION_PARAMETERS,
}
_PACKET = {"uuid": "hex", "opaque": "hex"}
ALLOC_HINTS_P2P = {
    NV503B_ALLOC_PARAMETERS: {
        "subDevicePeerIdMask": "hex", "peerSubDevicePeerIdMask": "hex",
        "subDeviceEgmPeerIdMask": "hex", "peerSubDeviceEgmPeerIdMask": "hex",
        "mailboxBar1Addr": "hex", "mailboxTotalSize": "hex", "flags": "enum:P2P_TYPE",
        "l2pBar1P2PDmaInfo.": {"dma_address": "hex", "dma_size": "hex"},
        "p2lBar1P2PDmaInfo.": {"dma_address": "hex", "dma_size": "hex"}},
    NV00E0_ALLOCATION_PARAMETERS: {"packet.": _PACKET, "flags": "flags:MEM_EXPORT_FLAGS",
                                   "metadata": "hex", "deviceInstanceMask": "hex",
                                   "giIdMasks[]": "hex", "numMaxHandles": "dec",
                                   "numCurHandles": "dec"},
    NV00F8_ALLOCATION_PARAMETERS: {"alignment": "hex", "allocSize": "hex", "pageSize": "hex",
                                   "allocFlags": "flags:FABRIC_ALLOC_FLAGS",
                                   "map.": {"offset": "hex", "flags": "hex"}},
    NV00F9_ALLOCATION_PARAMETERS: {"expPacket.": _PACKET, "flags": "flags:MEM_EXPORT_FLAGS",
                                   "id": "hex"},
    NV00FB_ALLOCATION_PARAMETERS: {"exportUuid": "hex", "flags": "hex", "id": "hex"},
}

# --- control params ------------------------------------------------------------------------
NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS = Struct(
    "gpuIds" / Array(MAX_ATTACHED_GPUS, NvU32), "gpuCount" / NvU32, "p2pCaps" / NvU32,
    "p2pOptimalReadCEs" / NvU32, "p2pOptimalWriteCEs" / NvU32,
    "p2pCapsStatus" / Array(P2P_CAPS_INDEX_TABLE_SIZE, NvU8), "reserved0" / Padding(3),
    "busPeerIds" / Array(MAX_ATTACHED_GPUS * MAX_ATTACHED_GPUS, NvU32),
    "busEgmPeerIds" / Array(MAX_ATTACHED_GPUS * MAX_ATTACHED_GPUS, NvU32))
NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PARAMS = Struct(          # deprecated form: peer ids by pointer
    "gpuIds" / Array(MAX_ATTACHED_GPUS, NvU32), "gpuCount" / NvU32, "p2pCaps" / NvU32,
    "p2pOptimalReadCEs" / NvU32, "p2pOptimalWriteCEs" / NvU32,
    "p2pCapsStatus" / Array(P2P_CAPS_INDEX_TABLE_SIZE, NvU8), "reserved0" / Padding(7),
    "busPeerIds" / NvP64, "busEgmPeerIds" / NvP64)
NV0000_CTRL_SYSTEM_GET_FABRIC_STATUS_PARAMS = Struct("fabricStatus" / NvU32)
NV0000_CTRL_GPU_GET_UUID_INFO_PARAMS = Struct(
    "gpuUuid" / Bytes(0x100), "flags" / NvU32, "gpuId" / NvU32, "deviceInstance" / NvU32,
    "subdeviceInstance" / NvU32)
NV0000_CTRL_GPU_GET_UUID_FROM_GPU_ID_PARAMS = Struct(
    "gpuId" / NvU32, "flags" / NvU32, "gpuUuid" / Bytes(0x100), "uuidStrLen" / NvU32)
NV0000_CTRL_OS_UNIX_EXPORT_OBJECT = Struct(      # type + union { rmObject {hDevice, hParent, hObject} }
    "type" / NvU32, "hDevice" / NvHandle, "hParent" / NvHandle, "hObject" / NvHandle)
NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_PARAMS = Struct(
    "object" / NV0000_CTRL_OS_UNIX_EXPORT_OBJECT, "fd" / NvS32, "flags" / NvU32)
NV0000_CTRL_OS_UNIX_IMPORT_OBJECT_FROM_FD_PARAMS = Struct(
    "fd" / NvS32, "object" / NV0000_CTRL_OS_UNIX_EXPORT_OBJECT)
NV0000_CTRL_OS_GET_GPU_INFO_PARAMS = Struct("gpuId" / NvU32, "minorNum" / NvU32)
NV0000_CTRL_OS_UNIX_GET_EXPORT_OBJECT_INFO_PARAMS = Struct(
    "fd" / NvS32, "deviceInstance" / NvU32, "gpuInstanceId" / NvU32, "maxObjects" / NvU16,
    "metadata" / Bytes(64), "reserved0" / Padding(2))
NV0000_CTRL_OS_UNIX_CREATE_EXPORT_OBJECT_FD_PARAMS = Struct(
    "hDevice" / NvHandle, "maxObjects" / NvU16, "metadata" / Bytes(64), "reserved0" / Padding(2),
    "fd" / NvS32)
NV0000_CTRL_OS_UNIX_EXPORT_OBJECTS_TO_FD_PARAMS = Struct(
    "fd" / NvS32, "hDevice" / NvHandle, "maxObjects" / NvU16, "metadata" / Bytes(64),
    "reserved0" / Padding(2), "objects" / Array(512, NvHandle), "numObjects" / NvU16,
    "index" / NvU16)
NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS = Struct(
    "fd" / NvS32, "hParent" / NvHandle, "objects" / Array(128, NvHandle),
    "objectTypes" / Array(128, NvU8), "numObjects" / NvU16, "index" / NvU16)
NV0000_CTRL_CLIENT_SUBSCRIBE_TO_IMEX_CHANNEL_PARAMS = Struct(
    "devDescriptor" / NvU64, "channel" / NvU32, "reserved0" / Padding(4))
NV00E0_CTRL_EXPORT_MEM_PARAMS = Struct(
    "index" / NvU16, "reserved0" / Padding(2), "hParent" / NvHandle,
    "handles" / Array(256, NvHandle), "numHandles" / NvU16, "reserved1" / Padding(6),
    "devDescriptor" / NvU64)
NV_IMPORT_MEM_INFO = Struct("hParent" / NvHandle, "addrSpace" / NvU8, "reserved0" / Padding(3))
NV00E0_CTRL_IMPORT_MEM_PARAMS = Struct(
    "index" / NvU16, "numHandles" / NvU16, "handles" / Array(128, NvHandle),
    "memInfos" / Array(128, NV_IMPORT_MEM_INFO))
NV_PHYSICAL_MEMORY_ATTRS = Struct("addressSpace" / NvU32, "compressionCoverage" / NvU32)
NV_FABRIC_MEMORY_ATTRS = Struct(
    "kind" / NvU32, "reserved0" / Padding(4), "pageSize" / NvU64, "size" / NvU64,
    "cliqueId" / NvU32, "reserved1" / Padding(4), "bwModeEpoch" / NvU64, "bwMode" / NvU8,
    "reserved2" / Padding(7))
NV00F8_CTRL_GET_INFO_PARAMS = Struct(
    "size" / NvU64, "pageSize" / NvU64, "allocFlags" / NvU32,
    "physAttrs" / NV_PHYSICAL_MEMORY_ATTRS, "reserved0" / Padding(4))
NV00F8_CTRL_DESCRIBE_PARAMS = Struct(
    "offset" / NvU64, "totalPfns" / NvU64, "pfnArray" / Array(512, NvU32), "numPfns" / NvU32,
    "reserved0" / Padding(4), "attrs" / NV_FABRIC_MEMORY_ATTRS,
    "physAttrs" / NV_PHYSICAL_MEMORY_ATTRS, "memFlags" / NvU32, "reserved1" / Padding(4))
NV00F8_CTRL_ATTACH_MEM_INFO = Struct(
    "hMemory" / NvHandle, "reserved0" / Padding(4), "offset" / NvU64, "mapOffset" / NvU64,
    "mapLength" / NvU64)
NV00F8_CTRL_ATTACH_MEM_PARAMS = Struct(
    "memInfos" / Array(64, NV00F8_CTRL_ATTACH_MEM_INFO), "numMemInfos" / NvU16,
    "reserved0" / Padding(2), "flags" / NvU32, "numAttached" / NvU16, "reserved1" / Padding(6))
NV00F8_CTRL_DETACH_MEM_PARAMS = Struct(
    "offsets" / Array(64, NvU64), "numOffsets" / NvU16, "reserved0" / Padding(2),
    "flags" / NvU32, "numDetached" / NvU16, "reserved1" / Padding(6))
NV00F8_CTRL_GET_NUM_ATTACHED_MEM_PARAMS = Struct(
    "offsetStart" / NvU64, "offsetEnd" / NvU64, "numMemInfos" / NvU16, "reserved0" / Padding(6))
NV00F9_CTRL_GET_INFO_PARAMS = Struct(
    "size" / NvU64, "pageSize" / NvU64, "memFlags" / NvU32,
    "physAttrs" / NV_PHYSICAL_MEMORY_ATTRS, "reserved0" / Padding(4))
NV00FB_CTRL_VALIDATE_PARAMS = Struct(
    "attrs" / NV_FABRIC_MEMORY_ATTRS, "physAttrs" / NV_PHYSICAL_MEMORY_ATTRS, "offset" / NvU64,
    "totalPfns" / NvU64, "pfnArray" / Array(512, NvU32), "numPfns" / NvU32, "memFlags" / NvU32,
    "flags" / NvU32, "bDone" / NvBool, "reserved0" / Padding(3))
NV2080_CTRL_GPU_GET_ID_PARAMS = Struct("gpuId" / NvU32)
NV2080_CTRL_GPU_P2P_PEER_CAPS_PEER_INFO = Struct(
    "gpuId" / NvU32, "gpuUuid" / Bytes(16), "p2pCaps" / NvU32, "p2pOptimalReadCEs" / NvU32,
    "p2pOptimalWriteCEs" / NvU32, "p2pCapsStatus" / Array(P2P_CAPS_INDEX_TABLE_SIZE, NvU8),
    "reserved0" / Padding(3), "busPeerId" / NvU32, "busEgmPeerId" / NvU32)
NV2080_CTRL_GET_P2P_CAPS_PARAMS = Struct(
    "bAllCaps" / NvBool, "bUseUuid" / NvBool, "reserved0" / Padding(2), "peerGpuCount" / NvU32,
    "peerGpuCaps" / Array(MAX_ATTACHED_GPUS, NV2080_CTRL_GPU_P2P_PEER_CAPS_PEER_INFO))
NV2080_CTRL_BUS_GET_NVLINK_PEER_ID_MASK_PARAMS = Struct("nvlinkPeerIdMask" / Array(32, NvU32))
NV2080_CTRL_BUS_SET_P2P_MAPPING_PARAMS = Struct(
    "connectionType" / NvU32, "peerId" / NvU32, "bEgmPeer" / NvBool, "bSpaAccessOnly" / NvBool,
    "bUseUuid" / NvBool, "reserved0" / Padding(1), "remoteGpuId" / NvU32,
    "remoteGpuUuid" / Bytes(16))
NV2080_CTRL_BUS_UNSET_P2P_MAPPING_PARAMS = Struct(
    "connectionType" / NvU32, "peerId" / NvU32, "bUseUuid" / NvBool, "reserved0" / Padding(3),
    "remoteGpuId" / NvU32, "remoteGpuUuid" / Bytes(16))
NV2080_CTRL_FB_GET_NUMA_INFO_PARAMS = Struct(
    "numaNodeId" / NvS32, "reserved0" / Padding(4), "numaMemAddr" / NvU64, "numaMemSize" / NvU64,
    "numaOfflineAddressesCount" / NvU32, "reserved1" / Padding(4),
    "numaOfflineAddresses" / Array(64, NvU64))
NV2080_CTRL_FLA_GET_RANGE_PARAMS = Struct("base" / NvU64, "size" / NvU64)
NV2080_CTRL_FLA_GET_FABRIC_MEM_STATS_PARAMS = Struct("totalSize" / NvU64, "freeSize" / NvU64)

_P2P_ROW = {"gpuIds[]": "hex", "gpuCount": "count_of:gpuIds", "p2pCaps": "flags:P2P_CAPS",
            "p2pOptimalReadCEs": "hex", "p2pOptimalWriteCEs": "hex",
            "p2pCapsStatus[]": "enum:P2P_CAPS_STATUS"}
_EXPORT_OBJECT = {"type": "enum:EXPORT_OBJECT_TYPE"}
_FABRIC_ATTRS = {"pageSize": "hex", "size": "hex", "bwModeEpoch": "hex"}
# addressSpace / compressionCoverage take NV0041_CTRL_SURFACE_INFO_INDEX_* values (ctrl00f8.h),
# a header not read here: shown as numbers.
_PHYS_ATTRS = {"addressSpace": "dec", "compressionCoverage": "hex"}
CTRL_PARAMS_P2P = {
    0x00000127: ("NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PARAMS", NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PARAMS,
                 dict(_P2P_ROW)),
    0x0000012B: ("NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS,
                 {**_P2P_ROW, "busPeerIds[]": "hex", "busEgmPeerIds[]": "hex"}),
    0x00000136: ("NV0000_CTRL_SYSTEM_GET_FABRIC_STATUS_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_FABRIC_STATUS_PARAMS, {"fabricStatus": "enum:FABRIC_STATUS"}),
    0x00000274: ("NV0000_CTRL_GPU_GET_UUID_INFO_PARAMS", NV0000_CTRL_GPU_GET_UUID_INFO_PARAMS,
                 {"gpuUuid": "hex", "flags": "flags:UUID_FLAGS", "gpuId": "hex"}),
    0x00000275: ("NV0000_CTRL_GPU_GET_UUID_FROM_GPU_ID_PARAMS",
                 NV0000_CTRL_GPU_GET_UUID_FROM_GPU_ID_PARAMS,
                 {"gpuUuid": "hex", "flags": "flags:UUID_FLAGS", "gpuId": "hex",
                  "uuidStrLen": "dec"}),
    0x00000D08: ("NV0000_CTRL_CLIENT_SUBSCRIBE_TO_IMEX_CHANNEL_PARAMS",
                 NV0000_CTRL_CLIENT_SUBSCRIBE_TO_IMEX_CHANNEL_PARAMS,
                 {"devDescriptor": "hex", "channel": "dec"}),
    0x00003D05: ("NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_PARAMS",
                 NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_PARAMS,
                 {"object.": _EXPORT_OBJECT, "fd": "dec", "flags": "flags:EXPORT_TO_FD_FLAGS"}),
    0x00003D06: ("NV0000_CTRL_OS_UNIX_IMPORT_OBJECT_FROM_FD_PARAMS",
                 NV0000_CTRL_OS_UNIX_IMPORT_OBJECT_FROM_FD_PARAMS,
                 {"object.": _EXPORT_OBJECT, "fd": "dec"}),
    0x00003D07: ("NV0000_CTRL_OS_GET_GPU_INFO_PARAMS", NV0000_CTRL_OS_GET_GPU_INFO_PARAMS,
                 {"gpuId": "hex", "minorNum": "dec"}),
    0x00003D08: ("NV0000_CTRL_OS_UNIX_GET_EXPORT_OBJECT_INFO_PARAMS",
                 NV0000_CTRL_OS_UNIX_GET_EXPORT_OBJECT_INFO_PARAMS,
                 {"fd": "dec", "maxObjects": "dec", "metadata": "hex"}),
    0x00003D0A: ("NV0000_CTRL_OS_UNIX_CREATE_EXPORT_OBJECT_FD_PARAMS",
                 NV0000_CTRL_OS_UNIX_CREATE_EXPORT_OBJECT_FD_PARAMS,
                 {"fd": "dec", "maxObjects": "dec", "metadata": "hex"}),
    0x00003D0B: ("NV0000_CTRL_OS_UNIX_EXPORT_OBJECTS_TO_FD_PARAMS",
                 NV0000_CTRL_OS_UNIX_EXPORT_OBJECTS_TO_FD_PARAMS,
                 {"fd": "dec", "maxObjects": "dec", "metadata": "hex",
                  "numObjects": "count_of:objects", "objects[]": "handle", "index": "dec"}),
    0x00003D0C: ("NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS",
                 NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS,
                 {"fd": "dec", "numObjects": "count_of:objects", "objects[]": "handle",
                  "objectTypes[]": "enum:IMPORT_OBJECT_TYPE", "index": "dec"}),
    0x00E00101: ("NV00E0_CTRL_EXPORT_MEM_PARAMS", NV00E0_CTRL_EXPORT_MEM_PARAMS,
                 {"numHandles": "count_of:handles", "handles[]": "handle",
                  "devDescriptor": "hex"}),
    0x00E00102: ("NV00E0_CTRL_IMPORT_MEM_PARAMS", NV00E0_CTRL_IMPORT_MEM_PARAMS,
                 {"numHandles": "count_of:handles", "handles[]": "handle",
                  "memInfos.": {"addrSpace": "enum:ADDR_SPACE_TYPE_00E0"}}),
    0x00F80101: ("NV00F8_CTRL_GET_INFO_PARAMS", NV00F8_CTRL_GET_INFO_PARAMS,
                 {"size": "hex", "pageSize": "hex", "allocFlags": "flags:FABRIC_ALLOC_FLAGS",
                  "physAttrs.": _PHYS_ATTRS}),
    0x00F80102: ("NV00F8_CTRL_DESCRIBE_PARAMS", NV00F8_CTRL_DESCRIBE_PARAMS,
                 {"offset": "hex", "totalPfns": "dec", "numPfns": "count_of:pfnArray",
                  "pfnArray[]": "hex", "attrs.": _FABRIC_ATTRS, "physAttrs.": _PHYS_ATTRS,
                  "memFlags": "hex"}),
    0x00F80103: ("NV00F8_CTRL_ATTACH_MEM_PARAMS", NV00F8_CTRL_ATTACH_MEM_PARAMS,
                 {"numMemInfos": "count_of:memInfos", "numAttached": "dec", "flags": "hex",
                  "memInfos.": {"offset": "hex", "mapOffset": "hex", "mapLength": "hex"}}),
    0x00F80104: ("NV00F8_CTRL_DETACH_MEM_PARAMS", NV00F8_CTRL_DETACH_MEM_PARAMS,
                 {"numOffsets": "count_of:offsets", "offsets[]": "hex", "numDetached": "dec",
                  "flags": "hex"}),
    0x00F80105: ("NV00F8_CTRL_GET_NUM_ATTACHED_MEM_PARAMS", NV00F8_CTRL_GET_NUM_ATTACHED_MEM_PARAMS,
                 {"offsetStart": "hex", "offsetEnd": "hex", "numMemInfos": "dec"}),
    0x00F90101: ("NV00F9_CTRL_GET_INFO_PARAMS", NV00F9_CTRL_GET_INFO_PARAMS,
                 {"size": "hex", "pageSize": "hex", "memFlags": "hex", "physAttrs.": _PHYS_ATTRS}),
    0x00FB0101: ("NV00FB_CTRL_VALIDATE_PARAMS", NV00FB_CTRL_VALIDATE_PARAMS,
                 {"attrs.": _FABRIC_ATTRS, "physAttrs.": _PHYS_ATTRS, "offset": "hex",
                  "totalPfns": "dec", "numPfns": "count_of:pfnArray", "pfnArray[]": "hex",
                  "memFlags": "hex", "flags": "hex", "bDone": "bool"}),
    0x20800142: ("NV2080_CTRL_GPU_GET_ID_PARAMS", NV2080_CTRL_GPU_GET_ID_PARAMS, {"gpuId": "hex"}),
    0x208001A0: ("NV2080_CTRL_GET_P2P_CAPS_PARAMS", NV2080_CTRL_GET_P2P_CAPS_PARAMS,
                 {"bAllCaps": "bool", "bUseUuid": "bool", "peerGpuCount": "count_of:peerGpuCaps",
                  "peerGpuCaps.": {"gpuId": "hex", "gpuUuid": "uuid", "p2pCaps": "flags:P2P_CAPS",
                                   "p2pOptimalReadCEs": "hex", "p2pOptimalWriteCEs": "hex",
                                   "p2pCapsStatus[]": "enum:P2P_CAPS_STATUS",
                                   "busPeerId": "hex", "busEgmPeerId": "hex"}}),
    0x20801825: ("NV2080_CTRL_BUS_GET_NVLINK_PEER_ID_MASK_PARAMS",
                 NV2080_CTRL_BUS_GET_NVLINK_PEER_ID_MASK_PARAMS, {"nvlinkPeerIdMask[]": "hex"}),
    0x2080182E: ("NV2080_CTRL_BUS_SET_P2P_MAPPING_PARAMS", NV2080_CTRL_BUS_SET_P2P_MAPPING_PARAMS,
                 {"connectionType": "enum:P2P_CONNECTION_TYPE", "bEgmPeer": "bool",
                  "bSpaAccessOnly": "bool", "bUseUuid": "bool", "remoteGpuId": "hex"}),
    0x2080182F: ("NV2080_CTRL_BUS_UNSET_P2P_MAPPING_PARAMS",
                 NV2080_CTRL_BUS_UNSET_P2P_MAPPING_PARAMS,
                 {"connectionType": "enum:P2P_CONNECTION_TYPE", "bUseUuid": "bool",
                  "remoteGpuId": "hex"}),
    0x20801351: ("NV2080_CTRL_FB_GET_NUMA_INFO_PARAMS", NV2080_CTRL_FB_GET_NUMA_INFO_PARAMS,
                 {"numaNodeId": "dec", "numaMemAddr": "hex", "numaMemSize": "hex",
                  "numaOfflineAddressesCount": "count_of:numaOfflineAddresses",
                  "numaOfflineAddresses[]": "hex"}),
    0x20803503: ("NV2080_CTRL_FLA_GET_RANGE_PARAMS", NV2080_CTRL_FLA_GET_RANGE_PARAMS,
                 {"base": "hex", "size": "hex"}),
    0x20803504: ("NV2080_CTRL_FLA_GET_FABRIC_MEM_STATS_PARAMS",
                 NV2080_CTRL_FLA_GET_FABRIC_MEM_STATS_PARAMS, {"totalSize": "hex", "freeSize": "hex"}),
}

# Each layout's size in bytes, worked out by hand from the header (natural alignment):
# what tests/test_multi_gpu_tables.py checks each sizeof against.
SIZES = {
    "NV503B_ALLOC_PARAMETERS": 72, "NV00E0_ALLOCATION_PARAMETERS": 244,
    "NV00F8_ALLOCATION_PARAMETERS": 48, "NV00F9_ALLOCATION_PARAMETERS": 64,
    "NV00FB_ALLOCATION_PARAMETERS": 32,
    "NV0000_CTRL_SYSTEM_GET_P2P_CAPS_PARAMS": 176,
    "NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS": 8348,
    "NV0000_CTRL_SYSTEM_GET_FABRIC_STATUS_PARAMS": 4,
    "NV0000_CTRL_GPU_GET_UUID_INFO_PARAMS": 272, "NV0000_CTRL_GPU_GET_UUID_FROM_GPU_ID_PARAMS": 268,
    "NV0000_CTRL_CLIENT_SUBSCRIBE_TO_IMEX_CHANNEL_PARAMS": 16,
    "NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_PARAMS": 24,
    "NV0000_CTRL_OS_UNIX_IMPORT_OBJECT_FROM_FD_PARAMS": 20,
    "NV0000_CTRL_OS_GET_GPU_INFO_PARAMS": 8,
    "NV0000_CTRL_OS_UNIX_GET_EXPORT_OBJECT_INFO_PARAMS": 80,
    "NV0000_CTRL_OS_UNIX_CREATE_EXPORT_OBJECT_FD_PARAMS": 76,
    "NV0000_CTRL_OS_UNIX_EXPORT_OBJECTS_TO_FD_PARAMS": 2128,
    "NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS": 652,
    "NV00E0_CTRL_EXPORT_MEM_PARAMS": 1048, "NV00E0_CTRL_IMPORT_MEM_PARAMS": 1540,
    "NV00F8_CTRL_GET_INFO_PARAMS": 32, "NV00F8_CTRL_DESCRIBE_PARAMS": 2136,
    "NV00F8_CTRL_ATTACH_MEM_PARAMS": 2064, "NV00F8_CTRL_DETACH_MEM_PARAMS": 528,
    "NV00F8_CTRL_GET_NUM_ATTACHED_MEM_PARAMS": 24, "NV00F9_CTRL_GET_INFO_PARAMS": 32,
    "NV00FB_CTRL_VALIDATE_PARAMS": 2136,
    "NV2080_CTRL_GPU_GET_ID_PARAMS": 4, "NV2080_CTRL_GET_P2P_CAPS_PARAMS": 1672,
    "NV2080_CTRL_BUS_GET_NVLINK_PEER_ID_MASK_PARAMS": 128,
    "NV2080_CTRL_BUS_SET_P2P_MAPPING_PARAMS": 32, "NV2080_CTRL_BUS_UNSET_P2P_MAPPING_PARAMS": 32,
    "NV2080_CTRL_FB_GET_NUMA_INFO_PARAMS": 544, "NV2080_CTRL_FLA_GET_RANGE_PARAMS": 16,
    "NV2080_CTRL_FLA_GET_FABRIC_MEM_STATS_PARAMS": 16,
}
