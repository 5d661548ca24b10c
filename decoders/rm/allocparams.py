"""RM_ALLOC parameter structs for the classes a CUDA process allocates, keyed by class.

Provenance: NVIDIA/open-gpu-kernel-modules, src/common/sdk/nvidia/inc/{nvos.h, class/cl0000.h,
cl0005.h, cl0080.h, cl2080.h, cl0070.h, cl83de.h, cl503c.h, clb0b5sw.h, clc661.h, clcb33.h},
alloc/alloc_channel.h. Layouts and sizes of NV0000/NV0080/NV2080/NV_MEMORY_ALLOCATION/
NV_VASPACE/NV_CHANNEL_GROUP/NV_CTXSHARE/NV_GR/NVB0B5/NV_MEMORY_VIRTUAL/NV83DE from
shared/reference/hw-facts.md 7.2 ([gdb] at 595.45.04, identical at 580.105.08).
Read from stored header copies for this module: NV0005_ALLOC_PARAMETERS (cl0005.h),
NV503C_ALLOC_PARAMETERS (cl503c.h). NV_HOPPER_USERMODE_A_PARAMS {NvBool bBar1Mapping,
bPriv} and NV_CONFIDENTIAL_COMPUTE_ALLOC_PARAMS {NvHandle hClient} come from secondary
sources quoting nvos.h / clcb33.h (not read directly): a paramsSize that disagrees is noted.
NVOS32_ATTR* field positions: nvos.h (stored copy, read for this module).
Names are NVIDIA's.
Added for issue 18, read at tag 580.142: NV2081_ALLOC_PARAMETERS {NvU32 reserved} (cl2081.h),
NV00DE_ALLOC_PARAMETERS {NvU64 polledDataMask} and NV00DE_RUSD_POLL_* (cl00de.h),
NVC639/NVC640_ALLOCATION_PARAMETERS {NvU64 capDescriptor, 8-aligned} (clc639.h, clc640.h).
libcuda passes paramsSize 0 for all four (captures/torch-small); the shim copies the class
size from this table (shim/abi.h TL_ALLOC_SIZES).
Added for issue 26, read at tag 580.142: NV50_P2P, NV_MEMORY_EXPORT and the fabric memory
classes' params, declared in decoders/rm/ctrlparams_p2p.py (its provenance block).
"""
from construct import Array, Bytes, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul, Padding, Struct

from decoders.rm.classes import ALL_CLASSES, ROLE
from decoders.rm.nvos import NV_CHANNEL_ALLOC_PARAMS

NvU8, NvU16, NvU32, NvS32, NvU64, NvP64 = Int8ul, Int16ul, Int32ul, Int32sl, Int64ul, Int64ul
NvHandle = NvU32
NvBool = NvU8

NV0000_ALLOC_PARAMETERS = Struct(
    "hClient" / NvHandle, "processID" / NvU32, "processName" / Bytes(100),
    "reserved0" / Padding(4), "pOsPidInfo" / NvP64)

NV0005_ALLOC_PARAMETERS = Struct(
    "hParentClient" / NvHandle, "hSrcResource" / NvHandle, "hClass" / NvU32,
    "notifyIndex" / NvU32, "data" / NvP64)

NV0080_ALLOC_PARAMETERS = Struct(
    "deviceId" / NvU32, "hClientShare" / NvHandle, "hTargetClient" / NvHandle,
    "hTargetDevice" / NvHandle, "flags" / NvU32, "reserved0" / Padding(4),
    "vaSpaceSize" / NvU64, "vaStartInternal" / NvU64, "vaLimitInternal" / NvU64,
    "vaMode" / NvU32, "reserved1" / Padding(4))

NV2080_ALLOC_PARAMETERS = Struct("subDeviceId" / NvU32)

NV_MEMORY_ALLOCATION_PARAMS = Struct(
    "owner" / NvU32, "type" / NvU32, "flags" / NvU32, "width" / NvU32, "height" / NvU32,
    "pitch" / NvS32, "attr" / NvU32, "attr2" / NvU32, "format" / NvU32, "comprCovg" / NvU32,
    "zcullCovg" / NvU32, "reserved0" / Padding(4), "rangeLo" / NvU64, "rangeHi" / NvU64,
    "size" / NvU64, "alignment" / NvU64, "offset" / NvU64, "limit" / NvU64, "address" / NvP64,
    "ctagOffset" / NvU32, "hVASpace" / NvHandle, "internalflags" / NvU32, "tag" / NvU32,
    "numaNode" / NvS32, "reserved1" / Padding(4))

NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS = Struct(
    "offset" / NvU64, "limit" / NvU64, "hVASpace" / NvHandle, "reserved0" / Padding(4))

NV_VASPACE_ALLOCATION_PARAMETERS = Struct(
    "index" / NvU32, "flags" / NvU32, "vaSize" / NvU64, "vaStartInternal" / NvU64,
    "vaLimitInternal" / NvU64, "bigPageSize" / NvU32, "reserved0" / Padding(4),
    "vaBase" / NvU64, "pasid" / NvU32, "reserved1" / Padding(4))

NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS = Struct(
    "hObjectError" / NvHandle, "hObjectEccError" / NvHandle, "hVASpace" / NvHandle,
    "engineType" / NvU32, "bIsCallingContextVgpuPlugin" / NvBool, "reserved0" / Padding(3))

NV_CTXSHARE_ALLOCATION_PARAMETERS = Struct(
    "hVASpace" / NvHandle, "flags" / NvU32, "subctxId" / NvU32)

NV_GR_ALLOCATION_PARAMETERS = Struct(
    "version" / NvU32, "flags" / NvU32, "size" / NvU32, "caps" / NvU32)

NVB0B5_ALLOCATION_PARAMETERS = Struct("version" / NvU32, "engineType" / NvU32)

NV_HOPPER_USERMODE_A_PARAMS = Struct("bBar1Mapping" / NvBool, "bPriv" / NvBool)

NV83DE_ALLOC_PARAMETERS = Struct(
    "hDebuggerClient_Obsolete" / NvHandle, "hAppClient" / NvHandle, "hClass3dObject" / NvHandle)

NV_CONFIDENTIAL_COMPUTE_ALLOC_PARAMS = Struct("hClient" / NvHandle)

NV503C_ALLOC_PARAMETERS = Struct("flags" / NvU32)

# NV2080_ENGINE_TYPE_* (class/cl2080_notification.h; values up to OFA 0x33 as read in a
# stored copy; 595 adds more up to LAST 0x54, not listed here: they print as numbers).
NV2080_ENGINE_TYPE = {0x00: "NULL", 0x01: "GRAPHICS"}
NV2080_ENGINE_TYPE.update({0x02 + i: f"GR{i + 1}" for i in range(7)})
NV2080_ENGINE_TYPE.update({0x09 + i: f"COPY{i}" for i in range(10)})
NV2080_ENGINE_TYPE.update({0x13 + i: f"NVDEC{i}" for i in range(8)})
NV2080_ENGINE_TYPE.update({0x1B: "NVENC0", 0x1C: "NVENC1", 0x1D: "NVENC2", 0x1E: "VP",
                           0x1F: "ME", 0x20: "PPP", 0x21: "MPEG", 0x22: "SW", 0x23: "CIPHER",
                           0x24: "VIC", 0x25: "MP", 0x26: "SEC2", 0x27: "HOST", 0x28: "DPU",
                           0x29: "PMU", 0x2A: "FBFLCN", 0x33: "OFA"})
NV2080_ENGINE_TYPE.update({0x2B + i: f"NVJPEG{i}" for i in range(8)})

# NVOS32_ATTR fields (nvos.h): (name, lo, width, values)
NVOS32_ATTR_FIELDS = (
    ("PAGE_SIZE", 23, 2, {0: "DEFAULT", 1: "4KB", 2: "BIG", 3: "HUGE"}),
    ("LOCATION", 25, 2, {0: "VIDMEM", 1: "PCI", 2: "AGP", 3: "ANY"}),
    ("PHYSICALITY", 27, 2, {0: "DEFAULT", 1: "NONCONTIGUOUS", 2: "CONTIGUOUS",
                            3: "ALLOW_NONCONTIGUOUS"}),
    ("COHERENCY", 29, 3, {0: "UNCACHED", 1: "CACHED", 2: "WRITE_COMBINE", 3: "WRITE_THROUGH",
                          4: "WRITE_PROTECT", 5: "WRITE_BACK"}),
)

TABLES = {"NV2080_ENGINE_TYPE": NV2080_ENGINE_TYPE}

# Display hints per struct (decoders/escapes/render.py).
HINTS = {
    id(NV_CHANNEL_ALLOC_PARAMS): {"engineType": "enum:NV2080_ENGINE_TYPE",
                                  "hUserdMemory[]": "handle", "userdOffset[]": "hex",
                                  "gpFifoOffset": "hex"},
    id(NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS): {"engineType": "enum:NV2080_ENGINE_TYPE",
                                                 "bIsCallingContextVgpuPlugin": "bool"},
    id(NVB0B5_ALLOCATION_PARAMETERS): {"engineType": "enum:NV2080_ENGINE_TYPE"},
    id(NV_MEMORY_ALLOCATION_PARAMS): {"size": "hex", "offset": "hex", "limit": "hex",
                                      "alignment": "hex",
                                      "attr": lambda v: f"{v:#x} ({decode_attr(v)})"},
    id(NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS): {"offset": "hex", "limit": "hex"},
    id(NV_VASPACE_ALLOCATION_PARAMETERS): {"vaSize": "hex", "vaBase": "hex", "bigPageSize": "hex"},
    id(NV0000_ALLOC_PARAMETERS): {"processID": "dec"},
    id(NV0005_ALLOC_PARAMETERS): {"hClass": "class"},
    id(NV_HOPPER_USERMODE_A_PARAMS): {"bBar1Mapping": "bool", "bPriv": "bool"},
}

NV2081_ALLOC_PARAMETERS = Struct("reserved" / NvU32)
NV00DE_ALLOC_PARAMETERS = Struct("polledDataMask" / NvU64)
NV00DE_RUSD_POLL = {0x1: "CLOCK", 0x2: "PERF", 0x4: "MEMORY", 0x8: "POWER", 0x10: "THERMAL",
                    0x20: "PCI", 0x40: "FAN"}
NVC639_ALLOCATION_PARAMETERS = Struct("capDescriptor" / NvU64)
NVC640_ALLOCATION_PARAMETERS = Struct("capDescriptor" / NvU64)
TABLES["RUSD_POLL"] = NV00DE_RUSD_POLL
HINTS.update({
    id(NV00DE_ALLOC_PARAMETERS): {"polledDataMask": "flags:RUSD_POLL"},
    id(NVC639_ALLOCATION_PARAMETERS): {"capDescriptor": "dec"},
    id(NVC640_ALLOCATION_PARAMETERS): {"capDescriptor": "dec"},
})

_BY_CLASS = {
    0x0041: NV0000_ALLOC_PARAMETERS, 0x0005: NV0005_ALLOC_PARAMETERS,
    0x0079: NV0005_ALLOC_PARAMETERS, 0x0078: NV0005_ALLOC_PARAMETERS,
    0x007E: NV0005_ALLOC_PARAMETERS, 0x0080: NV0080_ALLOC_PARAMETERS,
    0x2080: NV2080_ALLOC_PARAMETERS, 0x003E: NV_MEMORY_ALLOCATION_PARAMS,
    0x003F: NV_MEMORY_ALLOCATION_PARAMS, 0x0040: NV_MEMORY_ALLOCATION_PARAMS,
    # NV50_MEMORY_VIRTUAL takes NV_MEMORY_ALLOCATION_PARAMS (128 B), not the 24-byte
    # NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS of NV01_MEMORY_VIRTUAL: RS_REQUIRED(...) in
    # NVIDIA/open-gpu-kernel-modules src/nvidia/inc/kernel/rmapi/resource_list.h. Found on the
    # H100 (captures/builtin-vadd): libcuda passes paramsSize 0, RM copies the class size.
    0x0070: NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS, 0x50A0: NV_MEMORY_ALLOCATION_PARAMS,
    0x90F1: NV_VASPACE_ALLOCATION_PARAMETERS, 0xA06C: NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS,
    0x9067: NV_CTXSHARE_ALLOCATION_PARAMETERS, 0x83DE: NV83DE_ALLOC_PARAMETERS,
    0xCB33: NV_CONFIDENTIAL_COMPUTE_ALLOC_PARAMS, 0x503C: NV503C_ALLOC_PARAMETERS,
    0xC661: NV_HOPPER_USERMODE_A_PARAMS, 0x2081: NV2081_ALLOC_PARAMETERS,
    0x00DE: NV00DE_ALLOC_PARAMETERS, 0xC639: NVC639_ALLOCATION_PARAMETERS,
    0xC640: NVC640_ALLOCATION_PARAMETERS,
}
# The multi-GPU classes (issue 26): NV50_P2P, NV_MEMORY_EXPORT and the fabric memory classes.
from decoders.rm import ctrlparams_p2p as _P2P  # noqa: E402
_BY_CLASS.update(_P2P.ALLOC_PARAMS_P2P)
HINTS.update({id(st): h for st, h in _P2P.ALLOC_HINTS_P2P.items()})
TABLES.update(_P2P.TABLES_P2P)

_BY_ROLE = {"channel": NV_CHANNEL_ALLOC_PARAMS, "compute": NV_GR_ALLOCATION_PARAMETERS,
            "copy": NVB0B5_ALLOCATION_PARAMETERS}

ALLOC_PARAMS = dict(_BY_CLASS)
for _cls, _role in ROLE.items():
    if _role in _BY_ROLE and _cls not in ALLOC_PARAMS:
        ALLOC_PARAMS[_cls] = _BY_ROLE[_role]


def alloc_params_struct(hclass):
    """The params Struct for RM_ALLOC of `hclass`, or None when not declared."""
    return ALLOC_PARAMS.get(hclass)


def struct_name(st):
    for name, value in globals().items():
        if value is st and name.isupper():
            return name
    from decoders.rm import nvos
    for mod in (nvos, _P2P):
        for name, value in vars(mod).items():
            if value is st:
                return name
    return "params"


def decode_attr(attr):
    """'LOCATION=PCI|PAGE_SIZE=BIG|...' for an NVOS32 attr word (fields via decoders.fields)."""
    from decoders.fields import bits, place
    parts = []
    for name, lo, width, values in NVOS32_ATTR_FIELDS:
        v = bits(attr, lo, width)
        parts.append(f"{name}={values.get(v, hex(v))}")
    rest = attr - sum(place(bits(attr, lo, w), lo, w) for _, lo, w, _ in NVOS32_ATTR_FIELDS)
    if rest:
        parts.append(f"{rest:#x}")
    return "|".join(parts)


def memory_location(hclass, attr=None):
    """'sysmem' / 'vidmem' / 'virtual' / None for a memory class (+ NVOS32 attr if known)."""
    from decoders.rm.classes import SYSMEM_CLASSES, VIDMEM_CLASSES
    from decoders.fields import bits
    if ROLE.get(hclass) == "virtual":
        return "virtual"
    if attr is not None and hclass in (0x003E, 0x003F, 0x0040):
        loc = bits(attr, 25, 2)
        if loc == 1:
            return "sysmem"
        if loc == 0 and hclass != 0x003E:
            return "vidmem"
    if hclass in SYSMEM_CLASSES:
        return "sysmem"
    if hclass in VIDMEM_CLASSES:
        return "vidmem"
    return None


assert all(c in ALL_CLASSES or c == 0xC661 for c in ALLOC_PARAMS)
