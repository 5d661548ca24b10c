"""RM ioctl parameter structs (NVOSxx) and the channel alloc params.

Provenance: NVIDIA/open-gpu-kernel-modules, src/common/sdk/nvidia/inc/nvos.h,
src/nvidia/arch/nvalloc/unix/include/nv-unix-nvos-params-wrappers.h,
kernel-open/common/inc/nv-ioctl.h, src/common/sdk/nvidia/inc/alloc/alloc_channel.h.
Layouts checked identical at tags 580.105.08 and 595.45.04
(shared/reference/hw-facts.md 6.3, 7.2: offsets measured with gdb on the headers).
Names are NVIDIA's. x86-64 LP64: NvP64 is 8 bytes, NvU64 8-byte aligned.

The shim reads a few fields of these structs; shim/abi.h is generated from these
definitions (decoders/shimabi.py), so each layout is declared only here.
"""
from construct import Array, Bytes, Int8ul, Int16ul, Int32sl, Int32ul, Int64ul, Padding, Struct

NvHandle = Int32ul
NvV32 = Int32ul
NvU32 = Int32ul
NvU64 = Int64ul
NvP64 = Int64ul

NVOS00_PARAMETERS = Struct(
    "hRoot" / NvHandle, "hObjectParent" / NvHandle, "hObjectOld" / NvHandle, "status" / NvV32)

NVOS21_PARAMETERS = Struct(
    "hRoot" / NvHandle, "hObjectParent" / NvHandle, "hObjectNew" / NvHandle, "hClass" / NvV32,
    "pAllocParms" / NvP64, "paramsSize" / NvU32, "status" / NvV32)

NVOS64_PARAMETERS = Struct(
    "hRoot" / NvHandle, "hObjectParent" / NvHandle, "hObjectNew" / NvHandle, "hClass" / NvV32,
    "pAllocParms" / NvP64, "pRightsRequested" / NvP64, "paramsSize" / NvU32, "flags" / NvU32,
    "status" / NvV32, "reserved0" / Padding(4))

NVOS54_PARAMETERS = Struct(
    "hClient" / NvHandle, "hObject" / NvHandle, "cmd" / NvV32, "flags" / NvU32,
    "params" / NvP64, "paramsSize" / NvU32, "status" / NvV32)

NVOS33_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hMemory" / NvHandle, "reserved0" / Padding(4),
    "offset" / NvU64, "length" / NvU64, "pLinearAddress" / NvP64, "status" / NvU32,
    "flags" / NvU32)

nv_ioctl_nvos33_parameters_with_fd = Struct(
    "params" / NVOS33_PARAMETERS, "fd" / Int32sl, "reserved0" / Padding(4))

NVOS34_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hMemory" / NvHandle, "reserved0" / Padding(4),
    "pLinearAddress" / NvP64, "status" / NvU32, "flags" / NvU32)

NVOS46_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hDma" / NvHandle, "hMemory" / NvHandle,
    "offset" / NvU64, "length" / NvU64, "flags" / NvV32, "flags2" / NvV32,
    "kindOverride" / NvV32, "reserved0" / Padding(4), "dmaOffset" / NvU64, "status" / NvV32,
    "reserved1" / Padding(4))

NVOS47_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hDma" / NvHandle, "hMemory" / NvHandle,
    "flags" / NvV32, "reserved0" / Padding(4), "dmaOffset" / NvU64, "size" / NvU64,
    "status" / NvV32, "reserved1" / Padding(4))

NVOS02_PARAMETERS = Struct(
    "hRoot" / NvHandle, "hObjectParent" / NvHandle, "hObjectNew" / NvHandle, "hClass" / NvV32,
    "flags" / NvV32, "reserved0" / Padding(4), "pMemory" / NvP64, "limit" / NvU64,
    "status" / NvV32, "reserved1" / Padding(4))

nv_ioctl_nvos02_parameters_with_fd = Struct(
    "params" / NVOS02_PARAMETERS, "fd" / Int32sl, "reserved0" / Padding(4))

nv_ioctl_xfer_t = Struct("cmd" / NvU32, "size" / NvU32, "ptr" / NvP64)

NV_MEMORY_DESC_PARAMS = Struct(
    "base" / NvU64, "size" / NvU64, "addressSpace" / NvU32, "cacheAttrib" / NvU32)

NV_MAX_SUBDEVICES = 8

NV_CHANNEL_ALLOC_PARAMS = Struct(
    "hObjectError" / NvHandle, "hObjectBuffer" / NvHandle, "gpFifoOffset" / NvU64,
    "gpFifoEntries" / NvU32, "flags" / NvU32, "hContextShare" / NvHandle, "hVASpace" / NvHandle,
    "hUserdMemory" / Array(NV_MAX_SUBDEVICES, NvHandle),
    "userdOffset" / Array(NV_MAX_SUBDEVICES, NvU64),
    "engineType" / NvU32, "cid" / NvU32, "subDeviceId" / NvU32, "hObjectEccError" / NvHandle,
    "instanceMem" / NV_MEMORY_DESC_PARAMS, "userdMem" / NV_MEMORY_DESC_PARAMS,
    "ramfcMem" / NV_MEMORY_DESC_PARAMS, "mthdbufMem" / NV_MEMORY_DESC_PARAMS,
    "hPhysChannelGroup" / NvHandle, "internalFlags" / NvU32,
    "errorNotifierMem" / NV_MEMORY_DESC_PARAMS, "eccErrorNotifierMem" / NV_MEMORY_DESC_PARAMS,
    "ProcessID" / NvU32, "SubProcessID" / NvU32, "encryptIv" / Array(3, NvU32),
    "decryptIv" / Array(3, NvU32), "hmacNonce" / Array(8, NvU32), "tpcConfigID" / NvU32,
    "reserved0" / Padding(4))

NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS = Struct("workSubmitToken" / NvU32)

# UVM_MAP_EXTERNAL_ALLOCATION_PARAMS head and tail (the 256-entry attribute array in between
# is declared by decoders/uvm); the shim needs base/offset/length/hClient/hMemory.
UvmGpuMappingAttributes = Struct("gpuUuid" / Bytes(16), "gpuMappingType" / NvU32,
                                 "gpuCachingType" / NvU32, "gpuFormatType" / NvU32,
                                 "gpuElementBits" / NvU32, "gpuCompressionType" / NvU32)
UVM_MAX_GPUS = 256
UVM_MAP_EXTERNAL_ALLOCATION_PARAMS = Struct(
    "base" / NvU64, "length" / NvU64, "offset" / NvU64,
    "perGpuAttributes" / Array(UVM_MAX_GPUS, UvmGpuMappingAttributes),
    "gpuAttributesCount" / NvU64, "rmCtrlFd" / Int32sl, "hClient" / NvU32, "hMemory" / NvU32,
    "rmStatus" / NvU32)


# --- Added for the ioctl decoders (issue 5). Layouts from shared/reference/hw-facts.md 6.2/6.3
# ([gdb] on nvos.h / nv-unix-nvos-params-wrappers.h, identical at 580.105.08 and 595.45.04).

NVOS05_PARAMETERS = Struct(
    "hRoot" / NvHandle, "hObjectParent" / NvHandle, "hObjectNew" / NvHandle, "hClass" / NvV32,
    "status" / NvV32)

NVOS55_PARAMETERS = Struct(
    "hClient" / NvHandle, "hParent" / NvHandle, "hObject" / NvHandle, "hClientSrc" / NvHandle,
    "hObjectSrc" / NvHandle, "flags" / NvU32, "status" / NvU32)

# RS_SHARE_POLICY (resserv/rsaccess.h via nvos.h): 12 bytes at offset 8 of NVOS57.
RS_SHARE_POLICY = Struct(
    "target" / NvU32, "accessMask" / NvU32, "type" / Int16ul, "action" / Int8ul,
    "reserved0" / Padding(1))

# NV2080_CTRL_GR_ROUTE_INFO {NvU32 flags; NvU64 route} (8-aligned; ctrl2080gr.h): part of the
# GR controls of decoders/rm/ctrlparams.py and ctrlparams_ext.py, declared once here.
NV2080_CTRL_GR_ROUTE_INFO = Struct("flags" / NvU32, "reserved0" / Padding(4), "route" / NvU64)

NVOS57_PARAMETERS = Struct(
    "hClient" / NvHandle, "hObject" / NvHandle, "sharePolicy" / RS_SHARE_POLICY, "status" / NvU32)

NVOS30_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hChannel" / NvHandle, "numChannels" / NvV32,
    "phClients" / NvP64, "phDevices" / NvP64, "phChannels" / NvP64, "flags" / NvV32,
    "timeout" / NvV32, "status" / NvV32, "reserved0" / Padding(4))

NVOS41_PARAMETERS = Struct("pEvent" / NvP64, "MoreEvents" / NvV32, "status" / NvV32)

NVOS39_PARAMETERS = Struct(
    "hObjectParent" / NvHandle, "hSubDevice" / NvHandle, "hObjectNew" / NvHandle,
    "hClass" / NvV32, "flags" / NvV32, "selector" / NvU32, "hMemory" / NvHandle,
    "reserved0" / Padding(4), "offset" / NvU64, "limit" / NvU64, "status" / NvV32,
    "reserved1" / Padding(4))

NVOS49_PARAMETERS = Struct(
    "hClient" / NvHandle, "hChannel" / NvHandle, "hCtxDma" / NvHandle, "status" / NvV32)

NVOS56_PARAMETERS = Struct(
    "hClient" / NvHandle, "hDevice" / NvHandle, "hMemory" / NvHandle, "reserved0" / Padding(4),
    "pOldCpuAddress" / NvP64, "pNewCpuAddress" / NvP64, "status" / NvV32,
    "reserved1" / Padding(4))
