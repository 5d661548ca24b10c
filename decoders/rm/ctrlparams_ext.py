"""RM_CONTROL params added for issue 18: the public controls CUDA 580 issues that were left
undeclared, the lists that params point to (NvP64 + count), and their index tables.

Provenance: NVIDIA/open-gpu-kernel-modules at tag 580.142 (the newest 580 tag stored; the
captures are 580.159.04), src/common/sdk/nvidia/inc/ctrl/: ctrl0000/ctrl0000syncgpuboost.h
(SYNC_GPU_BOOST_GROUP_INFO), ctrl0000/ctrl0000system.h (GET_P2P_CAPS_MATRIX,
NV0000_CTRL_SYSTEM_MAX_P2P_GROUP_GPUS 8; GET_BUILD_VERSION), ctrl0000/ctrl0000gpu.h
(NV0000_CTRL_GPU_MAX_SZNAME 128), ctrl0080/ctrl0080gr.h (NV0080_CTRL_GR_INFO_INDEX_*, which
NV2080_CTRL_GR_INFO_INDEX_* alias), ctrl0080/ctrl0080fifo.h, ctrl0080/ctrl0080gpu.h,
ctrl2080/ctrl2080gpu.h (GET_GPU_FABRIC_PROBE_INFO, NV2080_GPU_FABRIC_CLUSTER_UUID_LEN 16,
FABRIC_PROBE_STATE_*), ctrl2080/ctrl2080gr.h (GR_GET_GLOBAL_SM_ORDER, MAX_SM_COUNT 512),
ctrl2080/ctrl2080grmgr.h (GRMGR_GET_GR_FS_INFO, MAX_QUERIES 96, QUERY_* values), ctrl00de.h (REQUEST_DATA_POLL),
ctrl2080/ctrl2080bus.h (BUS_GET_INFO, NV2080_CTRL_BUS_INFO_INDEX_*),
ctrl2080/ctrl2080nvlink.h and ctrl2080nvlink_common.h (GET_NVLINK_CAPS, GET_NVLINK_STATUS,
NV2080_CTRL_NVLINK_MAX_MASK_SIZE 1, linkInfo[64]), ctrl503c.h (UNREGISTER_VIDMEM), ctrl83de/ctrl83dedebug.h
(DEBUG_READ_ALL_SM_ERROR_STATES, NV83DE_CTRL_DEBUG_MAX_SMS_PER_CALL 100: 4824 B).
Added for the 2-rank NCCL capture (captures/ddp-2rank, where they were the only public
controls left undecoded: 96 and 4 calls): ctrl0041.h (GET_SURFACE_INFO, its list entry
NVXXXX_CTRL_XXX_INFO and NV0041_CTRL_SURFACE_INFO_INDEX_*; read in the stored copy at
b5bf85a8e3eb2516b9abca4d1becaf1172d62822) and ctrl2080/ctrl2080tmr.h (TIMER_SET_GR_TICK_FREQ).
Added for captures/cdp (session 36; libcuda asks it once where the device runtime is set
up): ctrl2080/ctrl2080rc.h (RC_GET_WATCHDOG_INFO and its FLAGS_* values), paramsSize 4.
Padding is ours (natural C alignment, NV_DECLARE_ALIGNED 8), named reserved*. Each sizeof
equals the paramsSize libcuda passed on the H100 (tests/test_ioctl_tables.py): 2244, 56, 9240,
1928, 48, 13344, 1352, 4, 16. Name prefix: NVIDIA's struct names.
"""
from collections import namedtuple

from construct import Array, Bytes, Int8ul, Int16ul, Int32ul, Int64ul, Padding, Struct

from decoders.rm.nvos import NV2080_CTRL_GR_ROUTE_INFO

NvU8, NvU16, NvU32, NvU64, NvP64 = Int8ul, Int16ul, Int32ul, Int64ul, Int64ul
NvHandle, NvBool, NV_STATUS = NvU32, NvU8, NvU32


# --- entries of the lists params point to ------------------------------------------------
NV2080_CTRL_GR_INFO = Struct("index" / NvU32, "data" / NvU32)
NV2080_CTRL_BUS_INFO = Struct("index" / NvU32, "data" / NvU32)
NV0041_CTRL_SURFACE_INFO = Struct("index" / NvU32, "data" / NvU32)    # NVXXXX_CTRL_XXX_INFO

# NV0041_CTRL_SURFACE_INFO_INDEX_* (ctrl0041.h). PHYS_SIZE's data is in 4 KiB units
# (NV0041_CTRL_SURFACE_INFO_PHYS_SIZE_SCALE_FACTOR 0x1000); ADDR_SPACE_TYPE's data takes
# NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE_* values.
NV0041_CTRL_SURFACE_INFO_INDEX = {0x1: "ATTRS", 0x5: "COMPR_COVERAGE", 0x7: "PHYS_SIZE",
                                  0x8: "PHYS_ATTR", 0x9: "ADDR_SPACE_TYPE"}

# NV0080_CTRL_GR_INFO_INDEX_* values (ctrl0080gr.h; ctrl2080gr.h names them NV2080_...).
NV2080_CTRL_GR_INFO_INDEX = {
    0x00: "MAXCLIPS", 0x01: "MIN_ATTRS_BUG_261894",
    0x02: "XBUF_MAX_PSETS_PER_BANK",    # the header spells it without INDEX_
    0x03: "BUFFER_ALIGNMENT",
    0x04: "SWIZZLE_ALIGNMENT", 0x05: "VERTEX_CACHE_SIZE", 0x06: "VPE_COUNT",
    0x07: "SHADER_PIPE_COUNT", 0x08: "THREAD_STACK_SCALING_FACTOR",
    0x09: "SHADER_PIPE_SUB_COUNT", 0x0a: "SM_REG_BANK_COUNT", 0x0b: "SM_REG_BANK_REG_COUNT",
    0x0c: "SM_VERSION", 0x0d: "MAX_WARPS_PER_SM", 0x0e: "MAX_THREADS_PER_WARP",
    0x0f: "GEOM_GS_OBUF_ENTRIES", 0x10: "GEOM_XBUF_ENTRIES",
    0x11: "FB_MEMORY_REQUEST_GRANULARITY", 0x12: "HOST_MEMORY_REQUEST_GRANULARITY",
    0x13: "MAX_SP_PER_SM",
    0x14: "LITTER_NUM_GPCS", 0x15: "LITTER_NUM_FBPS", 0x16: "LITTER_NUM_ZCULL_BANKS",
    0x17: "LITTER_NUM_TPC_PER_GPC", 0x18: "LITTER_NUM_MIN_FBPS",
    0x19: "LITTER_NUM_MXBAR_FBP_PORTS", 0x1a: "TIMESLICE_ENABLED", 0x1b: "LITTER_NUM_FBPAS",
    0x1c: "LITTER_NUM_PES_PER_GPC", 0x1d: "GPU_CORE_COUNT", 0x1e: "LITTER_NUM_TPCS_PER_PES",
    0x1f: "LITTER_NUM_MXBAR_HUB_PORTS", 0x20: "LITTER_NUM_SM_PER_TPC",
    0x21: "LITTER_NUM_HSHUB_FBP_PORTS", 0x22: "RT_CORE_COUNT", 0x23: "TENSOR_CORE_COUNT",
    0x24: "LITTER_NUM_GRS", 0x25: "LITTER_NUM_LTCS", 0x26: "LITTER_NUM_LTC_SLICES",
    0x27: "LITTER_NUM_GPCMMU_PER_GPC", 0x28: "LITTER_NUM_LTC_PER_FBP",
    0x29: "LITTER_NUM_ROP_PER_GPC", 0x2a: "FAMILY_MAX_TPC_PER_GPC",
    0x2b: "LITTER_NUM_FBPA_PER_FBP", 0x2c: "MAX_SUBCONTEXT_COUNT",
    0x2d: "MAX_LEGACY_SUBCONTEXT_COUNT", 0x2e: "MAX_PER_ENGINE_SUBCONTEXT_COUNT",
    0x32: "LITTER_NUM_SLICES_PER_LTC",
    0x33: "LITTER_NUM_GFXC_SMC_ENGINES", 0x34: "GFX_CAPABILITIES", 0x35: "MAX_MIG_ENGINES",
    0x36: "MAX_PARTITIONABLE_GPCS",
    0x37: "LITTER_MIN_SUBCTX_PER_SMC_ENG", 0x38: "LITTER_NUM_GPCS_PER_DIELET",
    0x39: "LITTER_MAX_NUM_SMC_ENGINES_PER_DIELET",
}
NV2080_CTRL_BUS_INFO_INDEX = {
    0x00: "TYPE", 0x01: "INTLINE", 0x02: "CAPS", 0x03: "PCIE_GPU_LINK_CAPS",
    0x04: "PCIE_ROOT_LINK_CAPS", 0x05: "PCIE_UPSTREAM_LINK_CAPS",
    0x06: "PCIE_DOWNSTREAM_LINK_CAPS", 0x07: "PCIE_GPU_LINK_CTRL_STATUS",
    0x08: "PCIE_ROOT_LINK_CTRL_STATUS", 0x09: "PCIE_UPSTREAM_LINK_CTRL_STATUS",
    0x0a: "PCIE_DOWNSTREAM_LINK_CTRL_STATUS", 0x0b: "COHERENT_DMA_FLAGS",
    0x0c: "NONCOHERENT_DMA_FLAGS", 0x0d: "GPU_GART_SIZE", 0x0e: "GPU_GART_FLAGS",
    0x0f: "BUS_NUMBER", 0x10: "DEVICE_NUMBER", 0x11: "PCIE_GPU_LINK_ERRORS",
    0x12: "PCIE_ROOT_LINK_ERRORS", 0x13: "INTERFACE_TYPE", 0x14: "PCIE_GEN2_INFO",
    0x15: "PCIE_GPU_LINK_AER", 0x16: "PCIE_BOARD_LINK_CAPS", 0x17: "PCIE_BOARD_LINK_CTRL_STATUS",
    0x18: "PCIE_ASLM_STATUS", 0x19: "PCIE_LINK_WIDTH_SWITCH_ERROR_COUNT",
    0x1a: "PCIE_LINK_SPEED_SWITCH_ERROR_COUNT", 0x1b: "PCIE_GPU_CYA_ASPM",
    0x1c: "PCIE_GPU_LINK_LINECODE_ERRORS", 0x1d: "PCIE_GPU_LINK_CRC_ERRORS",
    0x1e: "PCIE_GPU_LINK_NAKS_RECEIVED", 0x1f: "PCIE_GPU_LINK_FAILED_L0S_EXITS",
    0x20: "PCIE_GPU_LINK_LINECODE_ERRORS_CLEAR", 0x21: "PCIE_GPU_LINK_CRC_ERRORS_CLEAR",
    0x22: "PCIE_GPU_LINK_NAKS_RECEIVED_CLEAR", 0x23: "PCIE_GPU_LINK_FAILED_L0S_EXITS_CLEAR",
    0x24: "PCIE_GPU_LINK_CORRECTABLE_ERRORS", 0x25: "PCIE_GPU_LINK_NONFATAL_ERRORS",
    0x26: "PCIE_GPU_LINK_FATAL_ERRORS", 0x27: "PCIE_GPU_LINK_UNSUPPORTED_REQUESTS",
    0x28: "PCIE_GPU_LINK_CORRECTABLE_ERRORS_CLEAR", 0x29: "PCIE_GPU_LINK_NONFATAL_ERRORS_CLEAR",
    0x2a: "PCIE_GPU_LINK_FATAL_ERRORS_CLEAR", 0x2b: "PCIE_GPU_LINK_UNSUPPORTED_REQUESTS_CLEAR",
    0x2c: "DOMAIN_NUMBER", 0x2d: "PCIE_GEN_INFO", 0x2e: "GPU_INTERFACE_TYPE",
    0x2f: "PCIE_UPSTREAM_GEN_INFO", 0x30: "PCIE_BOARD_GEN_INFO", 0x31: "MSI_INFO",
    0x32: "GPU_GART_SIZE_HI", 0x33: "SYSMEM_CONNECTION_TYPE",
}

# --- controls declared here ----------------------------------------------------------------
NV2080_CTRL_BUS_GET_INFO_PARAMS = Struct(
    "busInfoListSize" / NvU32, "reserved0" / Padding(4), "busInfoList" / NvP64)
NV503C_CTRL_UNREGISTER_VIDMEM_PARAMS = Struct("hMemory" / NvHandle)
# ctrl83de/ctrl83dedebug.h: issued by libcuda after a kernel fault (captures/kernel-fault).
NV83DE_SM_ERROR_STATE_REGISTERS = Struct(
    "hwwGlobalEsr" / NvU32, "hwwWarpEsr" / NvU32, "hwwWarpEsrPc" / NvU32,
    "hwwGlobalEsrReportMask" / NvU32, "hwwWarpEsrReportMask" / NvU32, "reserved0" / Padding(4),
    "hwwEsrAddr" / NvU64, "hwwWarpEsrPc64" / NvU64, "hwwCgaEsr" / NvU32,
    "hwwCgaEsrReportMask" / NvU32)
NV83DE_MMU_FAULT_INFO = Struct("valid" / NvBool, "reserved0" / Padding(3), "faultInfo" / NvU32)
NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS = Struct(
    "hTargetChannel" / NvHandle, "numSMsToRead" / NvU32,
    "smErrorStateArray" / Array(100, NV83DE_SM_ERROR_STATE_REGISTERS),  # MAX_SMS_PER_CALL
    "mmuFaultInfo" / NvU32, "mmuFault" / NV83DE_MMU_FAULT_INFO, "startingSM" / NvU32)
# ctrl00de.h: polledDataMask takes the NV00DE_RUSD_POLL_* bits of cl00de.h (allocparams.py).
NV00DE_CTRL_REQUEST_DATA_POLL_PARAMS = Struct("polledDataMask" / NvU64)

NV0000_SYNC_GPU_BOOST_GROUP_CONFIG = Struct(
    "gpuCount" / NvU32, "gpuIds" / Array(32, NvU32), "boostGroupId" / NvU32,
    "bBridgeless" / NvBool, "reserved0" / Padding(3))
NV0000_SYNC_GPU_BOOST_GROUP_INFO_PARAMS = Struct(
    "groupCount" / NvU32, "pBoostGroups" / Array(16, NV0000_SYNC_GPU_BOOST_GROUP_CONFIG))

# NV0000_CTRL_P2P_CAPS_MATRIX_ROW is a typedef NvU32[8] in the header; a one-field Struct here
# so that each row renders as its own node (the renderer shows arrays of structs per entry).
NV0000_CTRL_P2P_CAPS_MATRIX_ROW = Struct("gpuB" / Array(8, NvU32))
NV0000_CTRL_SYSTEM_GET_P2P_CAPS_MATRIX_PARAMS = Struct(
    "grpACount" / NvU32, "grpBCount" / NvU32,
    "gpuIdGrpA" / Array(8, NvU32), "gpuIdGrpB" / Array(8, NvU32),
    "p2pCaps" / Array(8, NV0000_CTRL_P2P_CAPS_MATRIX_ROW),
    "a2bOptimalReadCes" / Array(8, NV0000_CTRL_P2P_CAPS_MATRIX_ROW),
    "a2bOptimalWriteCes" / Array(8, NV0000_CTRL_P2P_CAPS_MATRIX_ROW),
    "b2aOptimalReadCes" / Array(8, NV0000_CTRL_P2P_CAPS_MATRIX_ROW),
    "b2aOptimalWriteCes" / Array(8, NV0000_CTRL_P2P_CAPS_MATRIX_ROW))

NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO_PARAMS = Struct(
    "state" / NvU8, "reserved0" / Padding(3), "status" / NV_STATUS,
    "clusterUuid" / Bytes(16), "fabricPartitionId" / NvU16, "reserved1" / Padding(6),
    "fabricCaps" / NvU64, "fabricCliqueId" / NvU32, "fabricHealthMask" / NvU32,
    "fabricHealthSummary" / NvU8, "reserved2" / Padding(7))
NV2080_CTRL_GPU_FABRIC_PROBE_STATE = {0: "UNSUPPORTED", 1: "NOT_STARTED", 2: "IN_PROGRESS",
                                      3: "COMPLETE"}
NV2080_CTRL_GPU_FABRIC_PROBE_CAP = {0x1: "MC_SUPPORTED", 0x2: "MC_MUTLINODE_SUPPORTED"}
NV2080_CTRL_GPU_FABRIC_HEALTH_SUMMARY = {0: "NOT_SUPPORTED", 1: "HEALTHY", 2: "UNHEALTHY",
                                         3: "LIMITED_CAPACITY"}

# globalSmId[] entry: an anonymous struct in the header, named here by its array.
NV2080_CTRL_GR_GLOBAL_SM_ID = Struct(
    "gpcId" / NvU16, "localTpcId" / NvU16, "localSmId" / NvU16, "globalTpcId" / NvU16,
    "virtualGpcId" / NvU16, "migratableTpcId" / NvU16, "ugpuId" / NvU16,
    "physicalCpcId" / NvU16, "virtualTpcId" / NvU16)
NV2080_CTRL_GR_GET_GLOBAL_SM_ORDER_PARAMS = Struct(
    "globalSmId" / Array(512, NV2080_CTRL_GR_GLOBAL_SM_ID), "numSm" / NvU16, "numTpc" / NvU16,
    "reserved0" / Padding(4), "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO)

NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY_PARAMS = Struct(
    "queryType" / NvU16, "reserved" / Bytes(2), "status" / NvU32,
    # union queryData: every member is at most three NvU32 (ctrl2080grmgr.h); which member
    # is meant follows queryType, and the renderer names its fields from
    # NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY_DATA below (hint union:queryType:...).
    "queryData" / Array(3, NvU32))
NV2080_CTRL_GRMGR_GET_GR_FS_INFO_PARAMS = Struct(
    "numQueries" / NvU16, "reserved" / Bytes(6),
    "queries" / Array(96, NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY_PARAMS))
NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY = {
    0: "INVALID", 1: "GPC_COUNT", 2: "CHIPLET_GPC_MAP", 3: "TPC_MASK", 4: "PPC_MASK",
    5: "PARTITION_CHIPLET_GPC_MAP", 6: "CHIPLET_SYSPIPE_MASK",
    7: "PARTITION_CHIPLET_SYSPIPE_IDS", 8: "PROFILER_MON_GPC_MASK", 9: "PARTITION_SYSPIPE_ID",
    10: "ROP_MASK", 11: "CHIPLET_GRAPHICS_SYSPIPE_MASK", 12: "GFX_CAPABLE_GPC_MASK"}
# The union member's NvU32 fields per queryType (member order of ctrl2080grmgr.h).
# PARTITION_CHIPLET_SYSPIPE_IDS (NvU16, NvU16, NvU8[8]) is shown as its three words.
NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY_DATA = {
    1: ("gpcCount",), 2: ("gpcId", "chipletGpcMap"), 3: ("gpcId", "tpcMask"),
    4: ("gpcId", "ppcMask"), 5: ("swizzId", "gpcId", "chipletGpcMap"),
    6: ("chipletSyspipeMask",), 8: ("swizzId", "grIdx", "gpcEnMask"), 9: ("syspipeId",),
    10: ("gpcId", "ropMask"), 11: ("chipletSyspipeMask",), 12: ("swizzId", "grIdx", "gpcEnMask"),
}

NV2080_CTRL_NVLINK_LINK_MASK = Struct(
    "lenMasks" / NvU8, "reserved0" / Padding(7), "masks" / Array(1, NvU64))
NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS_PARAMS = Struct(
    "capsTbl" / NvU32, "lowestNvlinkVersion" / NvU8, "highestNvlinkVersion" / NvU8,
    "lowestNciVersion" / NvU8, "highestNciVersion" / NvU8, "discoveredLinkMask" / NvU32,
    "enabledLinkMask" / NvU32, "discoveredLinks" / NV2080_CTRL_NVLINK_LINK_MASK,
    "enabledLinks" / NV2080_CTRL_NVLINK_LINK_MASK)
NV2080_CTRL_NVLINK_DEVICE_INFO = Struct(
    "deviceIdFlags" / NvU32, "domain" / NvU32, "bus" / NvU16, "device" / NvU16,
    "function" / NvU16, "reserved0" / Padding(2), "pciDeviceId" / NvU32,
    "reserved1" / Padding(4), "deviceType" / NvU64, "deviceUUID" / Bytes(16),
    "fabricRecoveryStatusMask" / NvU32, "reserved2" / Padding(4))
NV2080_CTRL_NVLINK_LINK_STATUS_INFO = Struct(
    "capsTbl" / NvU32, "phyType" / NvU8, "subLinkWidth" / NvU8, "reserved0" / Padding(2),
    "linkState" / NvU32, "rxSublinkStatus" / NvU8, "txSublinkStatus" / NvU8,
    "bLaneReversal" / NvBool, "nvlinkVersion" / NvU8, "nciVersion" / NvU8,
    "phyVersion" / NvU8, "reserved1" / Padding(2),
    "nvlinkLinkClockKHz" / NvU32, "nvlinkCommonClockSpeedKHz" / NvU32,
    "nvlinkRefClkSpeedKHz" / NvU32, "nvlinkCommonClockSpeedMhz" / NvU32,
    "nvlinkLineRateMbps" / NvU32, "nvlinkLinkClockMhz" / NvU32, "nvlinkRefClkType" / NvU8,
    "reserved2" / Padding(3), "nvlinkLinkDataRateKiBps" / NvU32,
    "nvlinkRefClkSpeedMhz" / NvU32, "connected" / NvBool, "loopProperty" / NvU8,
    "remoteDeviceLinkNumber" / NvU8, "localDeviceLinkNumber" / NvU8,
    "reserved3" / Padding(4), "remoteLinkSid" / NvU64, "localLinkSid" / NvU64,
    "laneRxdetStatusMask" / NvU32, "nvlinkMinL1Threshold" / NvU32,
    "nvlinkMaxL1Threshold" / NvU32, "nvlinkL1ThresholdUnits" / NvU32,
    "remoteDeviceInfo" / NV2080_CTRL_NVLINK_DEVICE_INFO,
    "localDeviceInfo" / NV2080_CTRL_NVLINK_DEVICE_INFO)
NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS_PARAMS = Struct(
    "enabledLinkMask" / NvU32, "reserved0" / Padding(4),
    "enabledLinks" / NV2080_CTRL_NVLINK_LINK_MASK, "bSublinkStateInst" / NvBool,
    "bNvleModeEnabled" / NvBool, "reserved1" / Padding(6),
    "linkInfo" / Array(64, NV2080_CTRL_NVLINK_LINK_STATUS_INFO))

_LINK_MASK_HINTS = {"masks[]": "hex"}
NV0041_CTRL_GET_SURFACE_INFO_PARAMS = Struct(
    "surfaceInfoListSize" / NvU32, "reserved0" / Padding(4), "surfaceInfoList" / NvP64)
NV2080_CTRL_CMD_TIMER_SET_GR_TICK_FREQ_PARAMS = Struct("bSetMaxFreq" / NvBool)
NV2080_CTRL_RC_GET_WATCHDOG_INFO_PARAMS = Struct("watchdogStatusFlags" / NvU32)
# NV2080_CTRL_RC_GET_WATCHDOG_INFO_FLAGS_* (ctrl2080rc.h; NONE is 0)
NV2080_CTRL_RC_GET_WATCHDOG_INFO_FLAGS = {0x1: "DISABLED", 0x2: "RUNNING", 0x4: "INITIALIZED"}

CTRL_PARAMS_EXT = {
    0x00410110: ("NV0041_CTRL_GET_SURFACE_INFO_PARAMS", NV0041_CTRL_GET_SURFACE_INFO_PARAMS,
                 {"surfaceInfoList": "ptr"}),
    0x20800407: ("NV2080_CTRL_CMD_TIMER_SET_GR_TICK_FREQ_PARAMS",
                 NV2080_CTRL_CMD_TIMER_SET_GR_TICK_FREQ_PARAMS, {"bSetMaxFreq": "bool"}),
    0x20802209: ("NV2080_CTRL_RC_GET_WATCHDOG_INFO_PARAMS",
                 NV2080_CTRL_RC_GET_WATCHDOG_INFO_PARAMS,
                 {"watchdogStatusFlags": "flags:RC_WATCHDOG_INFO_FLAGS"}),
    0x00000A04: ("NV0000_SYNC_GPU_BOOST_GROUP_INFO_PARAMS", NV0000_SYNC_GPU_BOOST_GROUP_INFO_PARAMS,
                 {"groupCount": "count_of:pBoostGroups",
                  "pBoostGroups.": {"gpuCount": "count_of:gpuIds", "gpuIds[]": "hex",
                                    "boostGroupId": "hex", "bBridgeless": "bool"}}),
    0x0000013A: ("NV0000_CTRL_SYSTEM_GET_P2P_CAPS_MATRIX_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_P2P_CAPS_MATRIX_PARAMS,
                 {"grpACount": "count_of:gpuIdGrpA", "grpBCount": "count_of:gpuIdGrpB",
                  "gpuIdGrpA[]": "hex", "gpuIdGrpB[]": "hex",
                  **{f + ".": {"gpuB[]": "hex"} for f in (
                      "p2pCaps", "a2bOptimalReadCes", "a2bOptimalWriteCes", "b2aOptimalReadCes",
                      "b2aOptimalWriteCes")}}),
    0x208001A3: ("NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO_PARAMS",
                 NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO_PARAMS,
                 {"state": "enum:FABRIC_PROBE_STATE", "clusterUuid": "hex",
                  "fabricCaps": "flags:FABRIC_PROBE_CAP", "fabricHealthMask": "hex",
                  "fabricHealthSummary": "enum:FABRIC_HEALTH_SUMMARY"}),
    0x2080121B: ("NV2080_CTRL_GR_GET_GLOBAL_SM_ORDER_PARAMS",
                 NV2080_CTRL_GR_GET_GLOBAL_SM_ORDER_PARAMS,
                 {"numSm": "dec", "numTpc": "dec"}),
    0x20803801: ("NV2080_CTRL_GRMGR_GET_GR_FS_INFO_PARAMS", NV2080_CTRL_GRMGR_GET_GR_FS_INFO_PARAMS,
                 {"numQueries": "count_of:queries",
                  "queries.": {"queryType": "enum:GR_FS_INFO_QUERY", "queryData[]": "hex",
                               "queryData": "union:queryType:GR_FS_INFO_QUERY_DATA"}}),
    0x20803001: ("NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS_PARAMS",
                 NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS_PARAMS,
                 {"capsTbl": "hex", "discoveredLinkMask": "hex", "enabledLinkMask": "hex",
                  "discoveredLinks.": _LINK_MASK_HINTS, "enabledLinks.": _LINK_MASK_HINTS}),
    0x20803002: ("NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS_PARAMS",
                 NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS_PARAMS,
                 {"enabledLinkMask": "hex", "enabledLinks.": _LINK_MASK_HINTS,
                  "bSublinkStateInst": "bool", "bNvleModeEnabled": "bool",
                  "linkInfo.": {"capsTbl": "hex", "linkState": "hex", "connected": "bool",
                                "bLaneReversal": "bool", "remoteLinkSid": "hex",
                                "localLinkSid": "hex"}}),
    0x503C0105: ("NV503C_CTRL_UNREGISTER_VIDMEM_PARAMS", NV503C_CTRL_UNREGISTER_VIDMEM_PARAMS, {}),
    0x20801802: ("NV2080_CTRL_BUS_GET_INFO_PARAMS", NV2080_CTRL_BUS_GET_INFO_PARAMS, {}),
    0x83DE030C: ("NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS",
                 NV83DE_CTRL_DEBUG_READ_ALL_SM_ERROR_STATES_PARAMS,
                 {"numSMsToRead": "count_of:smErrorStateArray", "mmuFaultInfo": "hex",
                  "mmuFault.": {"valid": "bool", "faultInfo": "hex"}, "startingSM": "dec",
                  "smErrorStateArray.": {k: "hex" for k in (
                      "hwwGlobalEsr", "hwwWarpEsr", "hwwWarpEsrPc", "hwwGlobalEsrReportMask",
                      "hwwWarpEsrReportMask", "hwwEsrAddr", "hwwWarpEsrPc64", "hwwCgaEsr",
                      "hwwCgaEsrReportMask")}}),
    0x00DE0001: ("NV00DE_CTRL_REQUEST_DATA_POLL_PARAMS", NV00DE_CTRL_REQUEST_DATA_POLL_PARAMS,
                 {"polledDataMask": "flags:RUSD_POLL"}),
}

from decoders.rm.allocparams import NV00DE_RUSD_POLL  # noqa: E402

TABLES_EXT = {
    "RUSD_POLL": NV00DE_RUSD_POLL,
    "FABRIC_PROBE_STATE": NV2080_CTRL_GPU_FABRIC_PROBE_STATE,
    "FABRIC_PROBE_CAP": NV2080_CTRL_GPU_FABRIC_PROBE_CAP,
    "FABRIC_HEALTH_SUMMARY": NV2080_CTRL_GPU_FABRIC_HEALTH_SUMMARY,
    "GR_FS_INFO_QUERY": NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY,
    "GR_FS_INFO_QUERY_DATA": NV2080_CTRL_GRMGR_GR_FS_INFO_QUERY_DATA,
    "GR_INFO_INDEX": NV2080_CTRL_GR_INFO_INDEX,
    "BUS_INFO_INDEX": NV2080_CTRL_BUS_INFO_INDEX,
    "SURFACE_INFO_INDEX": NV0041_CTRL_SURFACE_INFO_INDEX,
    "RC_WATCHDOG_INFO_FLAGS": NV2080_CTRL_RC_GET_WATCHDOG_INFO_FLAGS,
}

# --- pointers inside params: what the shim follows (issue 18) ----------------------------
# One row per NvP64 field that points at caller memory RM reads or fills:
#   field      the NvP64 field of the params struct (its offset goes to shim/abi.h)
#   count      the params field holding the element count, or an int: a fixed count
#   entry      the element Struct (bytes for a string buffer)
#   hints      display hints of the element
# The shim copies count * sizeof(entry) bytes, capped at TL_PTR_MAX, before and after the
# call (decoders/capture/format.py TL_BUF_RM_PARAMS_POINTER). Allocation params of the
# classes CUDA allocates hold no pointer + count pair (NV0000 pOsPidInfo and NV0005 data are
# kernel-side or opaque, NV_MEMORY_ALLOCATION_PARAMS.address is an output address).
POINTER = namedtuple("POINTER", "field count entry hints")
_STR = Bytes(1)
POINTERS = {
    0x00410110: (POINTER("surfaceInfoList", "surfaceInfoListSize", NV0041_CTRL_SURFACE_INFO,
                         {"index": "enum:SURFACE_INFO_INDEX"}),),
    0x00000101: (POINTER("pDriverVersionBuffer", "sizeOfStrings", _STR, "str"),
                 POINTER("pVersionBuffer", "sizeOfStrings", _STR, "str"),
                 POINTER("pTitleBuffer", "sizeOfStrings", _STR, "str")),
    0x00000202: (POINTER("szName", 128, _STR, "str"),),            # NV0000_CTRL_GPU_MAX_SZNAME
    0x00800201: (POINTER("classList", "numClasses", NvU32, "class"),),
    0x0080170D: (POINTER("pChannelHandleList", "numChannels", NvU32, "handle"),
                 POINTER("pChannelList", "numChannels", NvU32, "hex")),
    0x20800124: (POINTER("classList", "numClasses", NvU32, "class"),),
    0x20801201: (POINTER("grInfoList", "grInfoListSize", NV2080_CTRL_GR_INFO,
                         {"index": "enum:GR_INFO_INDEX"}),),
    0x20801802: (POINTER("busInfoList", "busInfoListSize", NV2080_CTRL_BUS_INFO,
                         {"index": "enum:BUS_INFO_INDEX"}),),
}
