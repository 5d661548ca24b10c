"""RM_CONTROL parameter structs for the controls a CUDA process issues, keyed by number.

Provenance: NVIDIA/open-gpu-kernel-modules, src/common/sdk/nvidia/inc/ctrl/** (ctrlc36f.h,
ctrla06c.h, ctrl906f.h, ctrl0000/ctrl0000system.h, ctrl0000gpu.h, ctrl0080/ctrl0080gpu.h,
ctrl0080fifo.h, ctrl2080/ctrl2080gpu.h, ctrl2080fb.h, ctrl2080gr.h, ctrl2080mc.h,
ctrl2080perf.h, ctrl2080event.h). Sizes checked against shared/reference/hw-facts.md 7.2
where listed there (work-submit token, GPFIFO_SCHEDULE, GET_CLASSLIST). Read for this module
in a stored ctrl2080gpu.h copy: NV2080_GPU_MAX_NAME_STRING_LENGTH = 0x40 and the name-string
union {NvU8 ascii[64]; NvU16 unicode[64]}; NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE is 0x41 there
but other versions differ (0x3d, 72), as do FB_INFO_MAX_LIST_SIZE and GR_INFO_MAX_SIZE, so the
*_V2 info lists are declared by their entry and sized from paramsSize (LIST specs below).

Pointers inside params (NvP64 fields: GET_CLASSLIST.classList, GET_BUILD_VERSION buffers,
FIFO_GET_CHANNELLIST lists, GET_ENGINE_CLASSLIST.classList, GR_GET_INFO.grInfoList, ...) are
followed by the shim since issue 18: their layouts are POINTERS in ctrlparams_ext.py, and
decoders/ioctl.py renders the pointed-to copies under the field.
"""
from collections import namedtuple

from construct import Array, Bytes, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul, Padding, Struct

from decoders.rm.allocparams import NV2080_ENGINE_TYPE
from decoders.rm.nvos import NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS

NvU8, NvU16, NvU32, NvU64, NvP64 = Int8ul, Int16ul, Int32ul, Int64ul, Int64ul
NvS32 = Int32sl
NvHandle = NvU32
NvBool = NvU8

NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS = Struct(
    "bEnable" / NvBool, "bSkipSubmit" / NvBool, "bSkipEnable" / NvBool)
NVA06C_CTRL_TIMESLICE_PARAMS = Struct("timesliceUs" / NvU64)
NV906F_CTRL_GET_CLASS_ENGINEID_PARAMS = Struct(
    "hObject" / NvHandle, "classEngineID" / NvU32, "classID" / NvU32, "engineID" / NvU32)
NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_PARAMS = Struct(
    "sizeOfStrings" / NvU32, "reserved0" / Padding(4), "pDriverVersionBuffer" / NvP64,
    "pVersionBuffer" / NvP64, "pTitleBuffer" / NvP64, "changelistNumber" / NvU32,
    "officialChangelistNumber" / NvU32)
NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS = Struct(
    "driverVersionBuffer" / Bytes(256), "versionBuffer" / Bytes(256), "titleBuffer" / Bytes(256),
    "changelistNumber" / NvU32, "officialChangelistNumber" / NvU32)
NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS = Struct("gpuIds" / Array(32, NvU32))
# ctrl0000gpu.h (NVIDIA/open-gpu-kernel-modules 41595798880394d9c6fa5e76b37ffc1bc428cfb2, and
# every other stored version): two NvU32[NV0000_CTRL_GPU_MAX_PROBED_GPUS] tables,
# NV_MAX_DEVICES = 32 (nvlimits.h), 256 B. On 580.159.04 libcuda passes paramsSize 384
# (captures/builtin-vadd record 21, NV_OK): RM fills the 256 B declared here (gpuIds[0] = 0x6,
# the other 31 and all 32 excludedGpuIds = NV0000_CTRL_GPU_INVALID_ID) and leaves the last
# 128 B zero. So the two tables are the header's 32 entries each (48-entry tables would
# have filled 96 words), and the 128-B tail is kept as reserved0: no public header read
# names it (STYLE.md 4, 12: shown with a marker if ever non-zero).
NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS = Struct(
    "gpuIds" / Array(32, NvU32), "excludedGpuIds" / Array(32, NvU32),
    "reserved0" / Bytes(128))
NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS = Struct(
    "gpuId" / NvU32, "gpuFlags" / NvU32, "deviceInstance" / NvU32, "subDeviceInstance" / NvU32,
    "sliStatus" / NvU32, "boardId" / NvU32, "gpuInstance" / NvU32, "numaId" / NvS32)
NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS = Struct(
    "numClasses" / NvU32, "reserved0" / Padding(4), "classList" / NvP64)
NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS = Struct("numSubDevices" / NvU32)
NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS = Struct(
    "numChannels" / NvU32, "reserved0" / Padding(4), "pChannelHandleList" / NvP64,
    "pChannelList" / NvP64)
NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS = Struct(
    "gpuNameStringFlags" / NvU32, "gpuNameString" / Bytes(128))
NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS = Struct("gpuShortNameString" / Bytes(64))
NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS = Struct(
    "engineType" / NvU32, "numClasses" / NvU32, "classList" / NvP64)
NV2080_CTRL_GPU_GET_GID_INFO_PARAMS = Struct(
    "index" / NvU32, "flags" / NvU32, "length" / NvU32, "data" / Bytes(256))
NV2080_CTRL_MC_GET_ARCH_INFO_PARAMS = Struct(
    "architecture" / NvU32, "implementation" / NvU32, "revision" / NvU32, "subRevision" / NvU8,
    "reserved0" / Padding(3))
NV2080_CTRL_PERF_BOOST_PARAMS = Struct("flags" / NvU32, "duration" / NvU32)
NV2080_CTRL_EVENT_SET_NOTIFICATION_PARAMS = Struct(
    "event" / NvU32, "action" / NvU32, "bNotifyState" / NvBool, "reserved0" / Padding(3),
    "info32" / NvU32, "info16" / NvU16, "reserved1" / Padding(2))

# --- Added for the controls seen in captures/builtin-vadd (H100, 580.159.04). Each layout read
# in NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/ctrl/ (ctrl0000client.h,
# ctrl0000gpu.h, ctrl0000system.h, ctrl0080*.h, ctrl2080gr.h, ctrl2080gpu.h, ctrl2080bus.h,
# ctrl2080ce.h, ctrl2080gsp.h, ctrl503c.h, ctrl83dedebug.h, ctrl90e6.h, ctrlcb33.h) and checked
# against the capture: sizeof == the paramsSize libcuda passed, and the outputs make sense
# (tests/test_golden_ioctl.py). NV2080_CTRL_GR_ROUTE_INFO is declared in decoders/rm/nvos.py.
from decoders.rm.nvos import NV2080_CTRL_GR_ROUTE_INFO  # noqa: E402

NV0000_CTRL_CLIENT_GET_ADDR_SPACE_TYPE_PARAMS = Struct(
    "hObject" / NvHandle, "mapFlags" / NvU32, "addrSpaceType" / NvU32)
NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE = {0: "INVALID", 1: "SYSMEM", 2: "VIDMEM", 3: "REGMEM",
                                              4: "FABRIC"}
# RS_SHARE_POLICY (nvos.h) is declared in decoders/rm/nvos.py.
from decoders.rm.nvos import RS_SHARE_POLICY  # noqa: E402
NV0000_CTRL_CLIENT_SET_INHERITED_SHARE_POLICY_PARAMS = Struct("sharePolicy" / RS_SHARE_POLICY)
NV0000_CTRL_SYSTEM_GET_FEATURES_PARAMS = Struct("featuresMask" / NvU32)
NV0000_CTRL_GPU_GET_ID_INFO_PARAMS = Struct(
    "gpuId" / NvU32, "gpuFlags" / NvU32, "deviceInstance" / NvU32, "subDeviceInstance" / NvU32,
    "szName" / NvP64, "sliStatus" / NvU32, "boardId" / NvU32, "gpuInstance" / NvU32,
    "numaId" / NvS32)
NV0000_CTRL_GPU_ATTACH_IDS_PARAMS = Struct("gpuIds" / Array(32, NvU32), "failedId" / NvU32)
# ctrl0000gpu.h: gpuIds[NV0000_CTRL_GPU_MAX_ATTACHED_GPUS (32)], ended by
# NV0000_CTRL_GPU_INVALID_ID (0xffffffff); 0x0000ffff is NV0000_CTRL_GPU_DETACH_ALL_ATTACHED_IDS.
# Driver 580 issues it once in cupy-fft, jax-loops, torch-copies and torch-window-* (paramsSize
# 128, gpuIds [7, 0xffffffff, 0, ...]: the GPU the process attached).
NV0000_CTRL_GPU_DETACH_IDS_PARAMS = Struct("gpuIds" / Array(32, NvU32))
NV0000_CTRL_GPU_GET_MEMOP_ENABLE_PARAMS = Struct("enableMask" / NvU32)
NV0000_CTRL_GPU_ACTIVE_DEVICE = Struct(
    "gpuId" / NvU32, "gpuInstanceId" / NvU32, "computeInstanceId" / NvU32)
NV0000_CTRL_GPU_GET_ACTIVE_DEVICE_IDS_PARAMS = Struct(
    "numDevices" / NvU32, "devices" / Array(256, NV0000_CTRL_GPU_ACTIVE_DEVICE))
NV0080_CTRL_GPU_GET_VIRTUALIZATION_MODE_PARAMS = Struct(
    "virtualizationMode" / NvU32, "isGridBuild" / NvBool, "reserved0" / Padding(3))
NV0080_CTRL_FB_GET_CAPS_V2_PARAMS = Struct("capsTbl" / Array(3, NvU8))
NV0080_CTRL_HOST_GET_CAPS_V2_PARAMS = Struct("capsTbl" / Array(3, NvU8))
NV0080_CTRL_PERF_CUDA_LIMIT_CONTROL_PARAMS = Struct("bCudaLimit" / NvBool)
NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS = Struct("type" / NvU32)
NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS = Struct("rules" / NvU32)
NV2080_CTRL_GPU_COMPUTE_POLICY_CONFIG = Struct("type" / NvU32, "data" / NvU32)
NV2080_CTRL_GPU_GET_COMPUTE_POLICY_CONFIG_PARAMS = Struct(
    "numConfigs" / NvU32, "configList" / Array(32, NV2080_CTRL_GPU_COMPUTE_POLICY_CONFIG))
NV2080_CTRL_GR_GET_INFO_PARAMS = Struct(
    "grInfoListSize" / NvU32, "reserved0" / Padding(4), "grInfoList" / NvP64,
    "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO)
NV2080_CTRL_GR_SET_CTXSW_PREEMPTION_MODE_PARAMS = Struct(
    "flags" / NvU32, "hChannel" / NvHandle, "gfxpPreemptMode" / NvU32, "cilpPreemptMode" / NvU32,
    "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO)
NV2080_CTRL_GR_GET_CTX_BUFFER_SIZE_PARAMS = Struct(
    "hChannel" / NvHandle, "reserved0" / Padding(4), "totalBufferSize" / NvU64)
NV2080_CTRL_GR_GET_CAPS_V2_PARAMS = Struct(
    "capsTbl" / Array(23, NvU8), "reserved0" / Padding(1), "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO,
    "bCapsPopulated" / NvBool, "reserved1" / Padding(7))
NV2080_CTRL_GR_GET_GPC_MASK_PARAMS = Struct(
    "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO, "gpcMask" / NvU32, "reserved0" / Padding(4))
NV2080_CTRL_GR_GET_TPC_MASK_PARAMS = Struct(
    "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO, "gpcId" / NvU32, "tpcMask" / NvU32)
NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS = Struct(
    "pciDeviceId" / NvU32, "pciSubSystemId" / NvU32, "pciRevisionId" / NvU32,
    "pciExtDeviceId" / NvU32)
NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS = Struct(
    "capsTbl" / Array(64, Array(2, NvU8)), "present" / NvU64)
NV2080_CTRL_GSP_GET_FEATURES_PARAMS = Struct(
    "gspFeatures" / NvU32, "bValid" / NvBool, "bDefaultGspRmGpu" / NvBool,
    "firmwareVersion" / Bytes(0x40), "reserved0" / Padding(2))
NV503C_CTRL_REGISTER_VA_SPACE_PARAMS = Struct(
    "hVASpace" / NvHandle, "reserved0" / Padding(4), "vaSpaceToken" / NvU64)
NV503C_CTRL_REGISTER_VIDMEM_PARAMS = Struct(
    "hMemory" / NvHandle, "reserved0" / Padding(4), "address" / NvU64, "size" / NvU64,
    "offset" / NvU64)
NV83DE_CTRL_DEBUG_SET_EXCEPTION_MASK_PARAMS = Struct("exceptionMask" / NvU32)
NV90E6_CTRL_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK_PARAMS = Struct(
    "eccMask" / NvU32, "nvlinkMask" / NvU32)
NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES_PARAMS = Struct(
    "cpuCapability" / NvU8, "gpusCapability" / NvU8, "environment" / NvU8, "ccFeature" / NvU8,
    "devToolsMode" / NvU8, "multiGpuMode" / NvU8)
NV_CONF_COMPUTE_GPUS_CAPABILITY = {0: "NONE", 1: "APM", 2: "HCC"}
NV_CONF_COMPUTE_CPU_CAPABILITY = {0: "NONE", 1: "AMD_SEV", 2: "INTEL_TDX"}

# --- Added for the controls seen in captures/torch-small (H100, 580.159.04). Read in
# NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000gpu.h
# (GET_PCI_INFO 0x21b, QUERY_DRAIN_STATE 0x279, ASYNC_ATTACH_ID 0x289) and
# ctrl2080/ctrl2080tmr.h (GET_GPU_CPU_TIME_CORRELATION_INFO 0x20800406: NvU8 cpuClkId,
# NvU8 sampleCount, then 16 8-aligned {NvU64 cpuTime; NvU64 gpuTime} samples = 264 B).
# sizeof == the paramsSize libcuda passed (12, 12, 4, 264).
NV0000_CTRL_GPU_GET_PCI_INFO_PARAMS = Struct(
    "gpuId" / NvU32, "domain" / NvU32, "bus" / NvU16, "slot" / NvU16)
NV0000_CTRL_GPU_QUERY_DRAIN_STATE_PARAMS = Struct(
    "gpuId" / NvU32, "drainState" / NvU32, "flags" / NvU32)
NV0000_CTRL_GPU_ASYNC_ATTACH_ID_PARAMS = Struct("gpuId" / NvU32)
NV2080_CTRL_TIMER_GPU_CPU_TIME_SAMPLE = Struct("cpuTime" / NvU64, "gpuTime" / NvU64)
NV2080_CTRL_TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO_PARAMS = Struct(
    "cpuClkId" / NvU8, "sampleCount" / NvU8, "reserved0" / Padding(6),
    "samples" / Array(16, NV2080_CTRL_TIMER_GPU_CPU_TIME_SAMPLE))
# NV0000_CTRL_GPU_DRAIN_STATE_* and NV2080_TIMER_GPU_CPU_TIME_CPU_CLK_ID_SOURCE 3:0 values
# (same headers).
NV0000_CTRL_GPU_DRAIN_STATE = {0: "DISABLED", 1: "ENABLED"}
NV0000_CTRL_GPU_DRAIN_STATE_FLAG = {1: "REMOVE_DEVICE", 2: "LINK_DISABLE"}
NV2080_TIMER_GPU_CPU_TIME_CPU_CLK_ID = {1: "OSTIME", 2: "TSC", 3: "PLATFORM_API", 4: "GSP_OS",
                                        0x11: "OSTIME|PROCESSOR_GSP", 0x12: "TSC|PROCESSOR_GSP",
                                        0x13: "PLATFORM_API|PROCESSOR_GSP",
                                        0x14: "GSP_OS|PROCESSOR_GSP"}

# Undeclared before torch-small, declared now from NVIDIA/open-gpu-kernel-modules
# src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h (QUERY_ECC_STATUS), ctrl2080gr.h
# (GET_SM_ISSUE_RATE_MODIFIER), ctrl2080bus.h (GET_PCI_BAR_INFO, NV2080_CTRL_BUS_MAX_PCI_BARS
# 8; GET_PCIE_SUPPORTED_GPU_ATOMICS, OP_TYPE_COUNT 13; GET_C2C_INFO). Every capture's
# paramsSize fits: ECC 1464 = 36 units x 40 + 24, i.e. NV2080_CTRL_GPU_ECC_UNIT_COUNT 0x24 on
# 580.159.04 (the value NVIDIA's vfio nvidia-vgpu excerpt of 570.124.04 gives); SM issue rate
# 16 + 9 B padded to 32; PCI BAR 8 + 8 x 24 = 200; atomics 8 + 13 x 8 = 112; C2C 28.
NV2080_CTRL_GPU_QUERY_ECC_EXCEPTION_STATUS = Struct("count" / NvU64)
NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS = Struct(
    "enabled" / NvBool, "scrubComplete" / NvBool, "supported" / NvBool, "reserved0" / Padding(5),
    "dbe" / NV2080_CTRL_GPU_QUERY_ECC_EXCEPTION_STATUS,
    "dbeNonResettable" / NV2080_CTRL_GPU_QUERY_ECC_EXCEPTION_STATUS,
    "sbe" / NV2080_CTRL_GPU_QUERY_ECC_EXCEPTION_STATUS,
    "sbeNonResettable" / NV2080_CTRL_GPU_QUERY_ECC_EXCEPTION_STATUS)
NV2080_CTRL_GPU_ECC_UNIT_COUNT = 0x24
NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS = Struct(
    "units" / Array(NV2080_CTRL_GPU_ECC_UNIT_COUNT, NV2080_CTRL_GPU_QUERY_ECC_UNIT_STATUS),
    "bFatalPoisonError" / NvBool, "uncorrectableError" / NvU8, "reserved0" / Padding(2),
    "flags" / NvU32, "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO)
NV2080_CTRL_GR_GET_SM_ISSUE_RATE_MODIFIER_PARAMS = Struct(
    "grRouteInfo" / NV2080_CTRL_GR_ROUTE_INFO, "imla0" / NvU8, "fmla16" / NvU8, "dp" / NvU8,
    "fmla32" / NvU8, "ffma" / NvU8, "imla1" / NvU8, "imla2" / NvU8, "imla3" / NvU8,
    "imla4" / NvU8, "reserved0" / Padding(7))
NV2080_CTRL_BUS_PCI_BAR_INFO = Struct(
    "flags" / NvU32, "barSize" / NvU32, "barSizeBytes" / NvU64, "barOffset" / NvU64)
NV2080_CTRL_BUS_GET_PCI_BAR_INFO_PARAMS = Struct(
    "pciBarCount" / NvU32, "reserved0" / Padding(4),
    "pciBarInfo" / Array(8, NV2080_CTRL_BUS_PCI_BAR_INFO))
NV2080_CTRL_BUS_PCIE_GPU_ATOMIC_OP_INFO = Struct(
    "bSupported" / NvBool, "reserved0" / Padding(3), "attributes" / NvU32)
NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS_PARAMS = Struct(
    "capType" / NvU32, "dbdf" / NvU32,
    "atomicOp" / Array(13, NV2080_CTRL_BUS_PCIE_GPU_ATOMIC_OP_INFO))
NV2080_CTRL_CMD_BUS_GET_C2C_INFO_PARAMS = Struct(
    "bIsLinkUp" / NvBool, "reserved0" / Padding(3), "nrLinks" / NvU32, "maxNrLinks" / NvU32,
    "linkMask" / NvU32, "perLinkBwMBps" / NvU32, "perLinkLaneWidth" / NvU32,
    "remoteType" / NvU32)
NV2080_CTRL_BUS_GET_C2C_INFO_REMOTE_TYPE = {1: "CPU", 2: "GPU"}

# {index, data} entry of the *_GET_INFO_V2 lists.
NV2080_CTRL_INFO_ENTRY = Struct("index" / NvU32, "data" / NvU32)

# A fixed part followed by a list whose capacity differs between driver versions:
# (head Struct, count field, list field, entry Struct, list capacity in the 595 headers or None)
LIST = namedtuple("LIST", "head count_field list_field entry capacity_595")
NV2080_CTRL_GPU_GET_INFO_V2_LIST = LIST(Struct("gpuInfoListSize" / NvU32), "gpuInfoListSize",
                                        "gpuInfoList", NV2080_CTRL_INFO_ENTRY, 0x41)
NV2080_CTRL_FB_GET_INFO_V2_LIST = LIST(Struct("fbInfoListSize" / NvU32), "fbInfoListSize",
                                       "fbInfoList", NV2080_CTRL_INFO_ENTRY, None)
NV2080_CTRL_GR_GET_INFO_V2_LIST = LIST(Struct("grInfoListSize" / NvU32), "grInfoListSize",
                                       "grInfoList", NV2080_CTRL_INFO_ENTRY, None)
NV2080_CTRL_GPU_GET_ENGINES_V2_LIST = LIST(Struct("engineCount" / NvU32), "engineCount",
                                           "engineList", NvU32, 0x54)
NV2080_CTRL_BUS_GET_INFO_V2_LIST = LIST(Struct("busInfoListSize" / NvU32), "busInfoListSize",
                                        "busInfoList", NV2080_CTRL_INFO_ENTRY, None)
NV0080_CTRL_GPU_GET_CLASSLIST_V2_LIST = LIST(Struct("numClasses" / NvU32), "numClasses",
                                             "classList", NvU32, None)

_PTR = "ptr"   # a followed pointer (ctrlparams_ext.POINTERS); rendered under it

# cmd -> (struct name, Struct or LIST, hints)
CTRL_PARAMS = {
    0xC36F0108: ("NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS",
                 NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS, {"workSubmitToken": "hex"}),
    0xA06C0101: ("NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS", NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS,
                 {"bEnable": "bool", "bSkipSubmit": "bool", "bSkipEnable": "bool"}),
    0xA06C0103: ("NVA06C_CTRL_TIMESLICE_PARAMS", NVA06C_CTRL_TIMESLICE_PARAMS,
                 {"timesliceUs": "dec"}),
    0xA06C0104: ("NVA06C_CTRL_TIMESLICE_PARAMS", NVA06C_CTRL_TIMESLICE_PARAMS,
                 {"timesliceUs": "dec"}),
    0x906F0101: ("NV906F_CTRL_GET_CLASS_ENGINEID_PARAMS", NV906F_CTRL_GET_CLASS_ENGINEID_PARAMS,
                 {"classID": "class", "classEngineID": "hex", "engineID": "hex"}),
    0x00000101: ("NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_PARAMS,
                 {"pDriverVersionBuffer": _PTR, "pVersionBuffer": _PTR,
                  "pTitleBuffer": _PTR}),
    0x0000013E: ("NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS,
                 {"driverVersionBuffer": "str", "versionBuffer": "str", "titleBuffer": "str",
                  "changelistNumber": "dec", "officialChangelistNumber": "dec"}),
    0x00000201: ("NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS",
                 NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS, {"gpuIds[]": "hex"}),
    0x00000214: ("NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS", NV0000_CTRL_GPU_GET_PROBED_IDS_PARAMS,
                 {"gpuIds[]": "hex", "excludedGpuIds[]": "hex"}),
    0x00000205: ("NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS", NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS,
                 {"gpuId": "hex", "gpuFlags": "hex"}),
    0x00800201: ("NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS", NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS,
                 {"classList": _PTR}),
    0x00800292: ("NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS", NV0080_CTRL_GPU_GET_CLASSLIST_V2_LIST,
                 {"classList[]": "class"}),
    0x00800280: ("NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS",
                 NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS, {}),
    0x0080170D: ("NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS", NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS,
                 {"pChannelHandleList": _PTR, "pChannelList": _PTR}),
    0x20800102: ("NV2080_CTRL_GPU_GET_INFO_V2_PARAMS", NV2080_CTRL_GPU_GET_INFO_V2_LIST, {}),
    0x20800110: ("NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS", NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS,
                 {"gpuNameString": "str",
                  "gpuNameStringFlags": lambda v: {0: "ASCII", 1: "UNICODE"}.get(v, hex(v))}),
    0x20800111: ("NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS",
                 NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS, {"gpuShortNameString": "str"}),
    0x20800124: ("NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS",
                 NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS,
                 {"engineType": "enum:NV2080_ENGINE_TYPE", "classList": _PTR}),
    0x2080014A: ("NV2080_CTRL_GPU_GET_GID_INFO_PARAMS", NV2080_CTRL_GPU_GET_GID_INFO_PARAMS,
                 {"length": "dec"}),
    0x20800170: ("NV2080_CTRL_GPU_GET_ENGINES_V2_PARAMS", NV2080_CTRL_GPU_GET_ENGINES_V2_LIST,
                 {"engineList[]": "enum:NV2080_ENGINE_TYPE"}),
    0x20801303: ("NV2080_CTRL_FB_GET_INFO_V2_PARAMS", NV2080_CTRL_FB_GET_INFO_V2_LIST, {}),
    0x20801228: ("NV2080_CTRL_GR_GET_INFO_V2_PARAMS", NV2080_CTRL_GR_GET_INFO_V2_LIST, {}),
    0x20801701: ("NV2080_CTRL_MC_GET_ARCH_INFO_PARAMS", NV2080_CTRL_MC_GET_ARCH_INFO_PARAMS,
                 {"architecture": "hex", "implementation": "hex"}),
    0x2080200A: ("NV2080_CTRL_PERF_BOOST_PARAMS", NV2080_CTRL_PERF_BOOST_PARAMS,
                 {"duration": "dec"}),
    0x20800301: ("NV2080_CTRL_EVENT_SET_NOTIFICATION_PARAMS",
                 NV2080_CTRL_EVENT_SET_NOTIFICATION_PARAMS, {"bNotifyState": "bool"}),
}

CTRL_PARAMS.update({
    0x00000D01: ("NV0000_CTRL_CLIENT_GET_ADDR_SPACE_TYPE_PARAMS",
                 NV0000_CTRL_CLIENT_GET_ADDR_SPACE_TYPE_PARAMS,
                 {"mapFlags": "hex", "addrSpaceType": "enum:ADDR_SPACE_TYPE"}),
    0x00000D04: ("NV0000_CTRL_CLIENT_SET_INHERITED_SHARE_POLICY_PARAMS",
                 NV0000_CTRL_CLIENT_SET_INHERITED_SHARE_POLICY_PARAMS,
                 {"sharePolicy.": {"target": "hex", "accessMask": "hex"}}),
    0x000001F0: ("NV0000_CTRL_SYSTEM_GET_FEATURES_PARAMS", NV0000_CTRL_SYSTEM_GET_FEATURES_PARAMS,
                 {"featuresMask": "hex"}),
    0x00000202: ("NV0000_CTRL_GPU_GET_ID_INFO_PARAMS", NV0000_CTRL_GPU_GET_ID_INFO_PARAMS,
                 {"gpuId": "hex", "gpuFlags": "hex", "szName": _PTR, "numaId": "dec"}),
    0x00000215: ("NV0000_CTRL_GPU_ATTACH_IDS_PARAMS", NV0000_CTRL_GPU_ATTACH_IDS_PARAMS,
                 {"gpuIds[]": "hex", "failedId": "hex"}),
    0x00000216: ("NV0000_CTRL_GPU_DETACH_IDS_PARAMS", NV0000_CTRL_GPU_DETACH_IDS_PARAMS,
                 {"gpuIds[]": "hex"}),
    0x0000027B: ("NV0000_CTRL_GPU_GET_MEMOP_ENABLE_PARAMS", NV0000_CTRL_GPU_GET_MEMOP_ENABLE_PARAMS,
                 {"enableMask": "hex"}),
    0x00000288: ("NV0000_CTRL_GPU_GET_ACTIVE_DEVICE_IDS_PARAMS",
                 NV0000_CTRL_GPU_GET_ACTIVE_DEVICE_IDS_PARAMS,
                 {"numDevices": "count_of:devices"}),
    0x00800289: ("NV0080_CTRL_GPU_GET_VIRTUALIZATION_MODE_PARAMS",
                 NV0080_CTRL_GPU_GET_VIRTUALIZATION_MODE_PARAMS, {"isGridBuild": "bool"}),
    0x00801307: ("NV0080_CTRL_FB_GET_CAPS_V2_PARAMS", NV0080_CTRL_FB_GET_CAPS_V2_PARAMS,
                 {"capsTbl[]": "hex"}),
    0x00801402: ("NV0080_CTRL_HOST_GET_CAPS_V2_PARAMS", NV0080_CTRL_HOST_GET_CAPS_V2_PARAMS,
                 {"capsTbl[]": "hex"}),
    0x00801909: ("NV0080_CTRL_PERF_CUDA_LIMIT_CONTROL_PARAMS",
                 NV0080_CTRL_PERF_CUDA_LIMIT_CONTROL_PARAMS, {"bCudaLimit": "bool"}),
    0x20800119: ("NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS",
                 NV2080_CTRL_GPU_GET_SIMULATION_INFO_PARAMS, {}),
    0x20800131: ("NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS",
                 NV2080_CTRL_GPU_QUERY_COMPUTE_MODE_RULES_PARAMS, {"rules": "hex"}),
    0x20800195: ("NV2080_CTRL_GPU_GET_COMPUTE_POLICY_CONFIG_PARAMS",
                 NV2080_CTRL_GPU_GET_COMPUTE_POLICY_CONFIG_PARAMS,
                 {"numConfigs": "count_of:configList"}),
    0x20801201: ("NV2080_CTRL_GR_GET_INFO_PARAMS", NV2080_CTRL_GR_GET_INFO_PARAMS,
                 {"grInfoList": _PTR}),
    0x20801210: ("NV2080_CTRL_GR_SET_CTXSW_PREEMPTION_MODE_PARAMS",
                 NV2080_CTRL_GR_SET_CTXSW_PREEMPTION_MODE_PARAMS, {"flags": "hex"}),
    0x20801218: ("NV2080_CTRL_GR_GET_CTX_BUFFER_SIZE_PARAMS",
                 NV2080_CTRL_GR_GET_CTX_BUFFER_SIZE_PARAMS, {"totalBufferSize": "hex"}),
    0x20801227: ("NV2080_CTRL_GR_GET_CAPS_V2_PARAMS", NV2080_CTRL_GR_GET_CAPS_V2_PARAMS,
                 {"capsTbl[]": "hex", "bCapsPopulated": "bool"}),
    0x2080122A: ("NV2080_CTRL_GR_GET_GPC_MASK_PARAMS", NV2080_CTRL_GR_GET_GPC_MASK_PARAMS,
                 {"gpcMask": "hex"}),
    0x2080122B: ("NV2080_CTRL_GR_GET_TPC_MASK_PARAMS", NV2080_CTRL_GR_GET_TPC_MASK_PARAMS,
                 {"gpcId": "dec", "tpcMask": "hex"}),
    0x20801801: ("NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS", NV2080_CTRL_BUS_GET_PCI_INFO_PARAMS,
                 {"pciDeviceId": "hex", "pciSubSystemId": "hex", "pciRevisionId": "hex",
                  "pciExtDeviceId": "hex"}),
    0x20801823: ("NV2080_CTRL_BUS_GET_INFO_V2_PARAMS", NV2080_CTRL_BUS_GET_INFO_V2_LIST, {}),
    0x20802A0A: ("NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS", NV2080_CTRL_CE_GET_ALL_CAPS_PARAMS,
                 {"present": "hex"}),
    0x20803601: ("NV2080_CTRL_GSP_GET_FEATURES_PARAMS", NV2080_CTRL_GSP_GET_FEATURES_PARAMS,
                 {"gspFeatures": "hex", "bValid": "bool", "bDefaultGspRmGpu": "bool",
                  "firmwareVersion": "str"}),
    0x503C0102: ("NV503C_CTRL_REGISTER_VA_SPACE_PARAMS", NV503C_CTRL_REGISTER_VA_SPACE_PARAMS,
                 {"vaSpaceToken": "hex"}),
    0x503C0104: ("NV503C_CTRL_REGISTER_VIDMEM_PARAMS", NV503C_CTRL_REGISTER_VIDMEM_PARAMS,
                 {"address": "hex", "size": "hex", "offset": "hex"}),
    0x83DE0309: ("NV83DE_CTRL_DEBUG_SET_EXCEPTION_MASK_PARAMS",
                 NV83DE_CTRL_DEBUG_SET_EXCEPTION_MASK_PARAMS, {"exceptionMask": "hex"}),
    0x90E60102: ("NV90E6_CTRL_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK_PARAMS",
                 NV90E6_CTRL_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK_PARAMS,
                 {"eccMask": "hex", "nvlinkMask": "hex"}),
    0x0000021B: ("NV0000_CTRL_GPU_GET_PCI_INFO_PARAMS", NV0000_CTRL_GPU_GET_PCI_INFO_PARAMS,
                 {"gpuId": "hex", "domain": "hex", "bus": "hex", "slot": "hex"}),
    0x00000279: ("NV0000_CTRL_GPU_QUERY_DRAIN_STATE_PARAMS",
                 NV0000_CTRL_GPU_QUERY_DRAIN_STATE_PARAMS,
                 {"gpuId": "hex", "drainState": "enum:DRAIN_STATE",
                  "flags": "flags:DRAIN_STATE_FLAG"}),
    0x00000289: ("NV0000_CTRL_GPU_ASYNC_ATTACH_ID_PARAMS", NV0000_CTRL_GPU_ASYNC_ATTACH_ID_PARAMS,
                 {"gpuId": "hex"}),
    0x20800406: ("NV2080_CTRL_TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO_PARAMS",
                 NV2080_CTRL_TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO_PARAMS,
                 {"cpuClkId": "enum:CPU_CLK_ID", "sampleCount": "count_of:samples",
                  "samples.": {"cpuTime": "dec", "gpuTime": "dec"}}),
    0x2080012F: ("NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS", NV2080_CTRL_GPU_QUERY_ECC_STATUS_PARAMS,
                 {"units.": {"enabled": "bool", "scrubComplete": "bool", "supported": "bool",
                             "dbe.": {"count": "dec"}, "dbeNonResettable.": {"count": "dec"},
                             "sbe.": {"count": "dec"}, "sbeNonResettable.": {"count": "dec"}},
                  "bFatalPoisonError": "bool", "flags": "hex"}),
    0x20801230: ("NV2080_CTRL_GR_GET_SM_ISSUE_RATE_MODIFIER_PARAMS",
                 NV2080_CTRL_GR_GET_SM_ISSUE_RATE_MODIFIER_PARAMS, {}),
    0x20801803: ("NV2080_CTRL_BUS_GET_PCI_BAR_INFO_PARAMS", NV2080_CTRL_BUS_GET_PCI_BAR_INFO_PARAMS,
                 {"pciBarCount": "count_of:pciBarInfo",
                  "pciBarInfo.": {"flags": "hex", "barSize": "dec", "barSizeBytes": "hex",
                                  "barOffset": "hex"}}),
    0x2080182A: ("NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS_PARAMS",
                 NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS_PARAMS,
                 {"dbdf": "hex", "atomicOp.": {"bSupported": "bool", "attributes": "hex"}}),
    0x2080182B: ("NV2080_CTRL_CMD_BUS_GET_C2C_INFO_PARAMS", NV2080_CTRL_CMD_BUS_GET_C2C_INFO_PARAMS,
                 {"bIsLinkUp": "bool", "linkMask": "hex", "perLinkBwMBps": "dec",
                  "remoteType": "enum:C2C_REMOTE_TYPE"}),
    0xCB330101: ("NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES_PARAMS",
                 NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES_PARAMS,
                 {"cpuCapability": "enum:CC_CPU_CAPABILITY",
                  "gpusCapability": "enum:CC_GPUS_CAPABILITY"}),
})

# Controls seen on the H100 whose params are NOT declared, and why (tests/test_golden_ioctl.py
# lists every undecoded call of a capture against this table).
UNDECLARED = {}

TABLES = {"NV2080_ENGINE_TYPE": NV2080_ENGINE_TYPE,
          "ADDR_SPACE_TYPE": NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE,
          "CC_GPUS_CAPABILITY": NV_CONF_COMPUTE_GPUS_CAPABILITY,
          "CC_CPU_CAPABILITY": NV_CONF_COMPUTE_CPU_CAPABILITY,
          "DRAIN_STATE": NV0000_CTRL_GPU_DRAIN_STATE,
          "C2C_REMOTE_TYPE": NV2080_CTRL_BUS_GET_C2C_INFO_REMOTE_TYPE,
          "DRAIN_STATE_FLAG": NV0000_CTRL_GPU_DRAIN_STATE_FLAG,
          "CPU_CLK_ID": NV2080_TIMER_GPU_CPU_TIME_CPU_CLK_ID}

from decoders.rm.ctrlparams_ext import CTRL_PARAMS_EXT, POINTERS, TABLES_EXT  # noqa: E402,F401
CTRL_PARAMS.update(CTRL_PARAMS_EXT)
TABLES.update(TABLES_EXT)
from decoders.rm.ctrlparams_p2p import CTRL_PARAMS_P2P, TABLES_P2P  # noqa: E402  (issue 26)
CTRL_PARAMS.update(CTRL_PARAMS_P2P)
TABLES.update(TABLES_P2P)

_LIST_CACHE = {}


def list_struct(spec, nbytes):
    """A Struct for a LIST spec holding as many whole entries as `nbytes` allows."""
    head = spec.head.sizeof()
    n = max(0, (nbytes - head) // spec.entry.sizeof())
    key = (id(spec), n)
    st = _LIST_CACHE.get(key)
    if st is None:
        st = Struct(*spec.head.subcons, spec.list_field / Array(n, spec.entry))
        _LIST_CACHE[key] = st
    return st


def ctrl_params(cmd, nbytes):
    """(struct name, Struct sized for `nbytes`, hints, note) or None for an undeclared cmd."""
    row = CTRL_PARAMS.get(cmd)
    if row is None:
        return None
    name, spec, hints = row
    note = ""
    if isinstance(spec, LIST):
        st = list_struct(spec, nbytes)
        hints = dict(hints)
        hints[spec.count_field] = f"count_of:{spec.list_field}"
        cap = spec.capacity_595
        note = (f"list capacity from paramsSize ({(nbytes - spec.head.sizeof()) // spec.entry.sizeof()}"
                f" entries{'; 595 header: ' + str(cap) if cap else ''})")
    else:
        st = spec
    return name, st, hints, note
