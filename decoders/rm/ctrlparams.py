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
FIFO_GET_CHANNELLIST lists, GET_ENGINE_CLASSLIST.classList) are NOT followed by the shim:
the decoder prints them with "pointer: not followed, contents not captured".
"""
from collections import namedtuple

from construct import Array, Bytes, Int8ul, Int16ul, Int32ul, Int64ul, Padding, Struct

from decoders.rm.allocparams import NV2080_ENGINE_TYPE
from decoders.rm.nvos import NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS

NvU8, NvU16, NvU32, NvU64, NvP64 = Int8ul, Int16ul, Int32ul, Int64ul, Int64ul
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
NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS = Struct(
    "gpuId" / NvU32, "gpuFlags" / NvU32, "deviceInstance" / NvU32, "subDeviceInstance" / NvU32,
    "sliStatus" / NvU32, "boardId" / NvU32, "gpuInstance" / NvU32, "numaId" / NvU32)
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
NV0080_CTRL_GPU_GET_CLASSLIST_V2_LIST = LIST(Struct("numClasses" / NvU32), "numClasses",
                                             "classList", NvU32, None)

_UNCAPTURED = "ptr_uncaptured"

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
                 {"pDriverVersionBuffer": _UNCAPTURED, "pVersionBuffer": _UNCAPTURED,
                  "pTitleBuffer": _UNCAPTURED}),
    0x0000013E: ("NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS",
                 NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS,
                 {"driverVersionBuffer": "str", "versionBuffer": "str", "titleBuffer": "str",
                  "changelistNumber": "dec", "officialChangelistNumber": "dec"}),
    0x00000201: ("NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS",
                 NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS, {"gpuIds[]": "hex"}),
    0x00000205: ("NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS", NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS,
                 {"gpuId": "hex", "gpuFlags": "hex"}),
    0x00800201: ("NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS", NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS,
                 {"classList": _UNCAPTURED}),
    0x00800292: ("NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS", NV0080_CTRL_GPU_GET_CLASSLIST_V2_LIST,
                 {"classList[]": "class"}),
    0x00800280: ("NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS",
                 NV0080_CTRL_GPU_GET_NUM_SUBDEVICES_PARAMS, {}),
    0x0080170D: ("NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS", NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS,
                 {"pChannelHandleList": _UNCAPTURED, "pChannelList": _UNCAPTURED}),
    0x20800102: ("NV2080_CTRL_GPU_GET_INFO_V2_PARAMS", NV2080_CTRL_GPU_GET_INFO_V2_LIST, {}),
    0x20800110: ("NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS", NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS,
                 {"gpuNameString": "str",
                  "gpuNameStringFlags": lambda v: {0: "ASCII", 1: "UNICODE"}.get(v, hex(v))}),
    0x20800111: ("NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS",
                 NV2080_CTRL_GPU_GET_SHORT_NAME_STRING_PARAMS, {"gpuShortNameString": "str"}),
    0x20800124: ("NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS",
                 NV2080_CTRL_GPU_GET_ENGINE_CLASSLIST_PARAMS,
                 {"engineType": "enum:NV2080_ENGINE_TYPE", "classList": _UNCAPTURED}),
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

TABLES = {"NV2080_ENGINE_TYPE": NV2080_ENGINE_TYPE}

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
