"""CUDA driver API structures the shim copies byte for byte (cuda.h, CUDA 12/13, x86-64).

Provenance: cuda.h of the CUDA 13.0 toolkit (CUlaunchConfig_st, CUlaunchAttribute_st,
CUlaunchAttributeValue_union, CUlaunchAttributeID, cuLaunchKernel's `extra` keys). The
union is 64 bytes (its `pad` member), the attribute id is padded to 8 bytes.
"""
from construct import Bytes, Int32ul, Int64ul, Padding, Struct

CUlaunchAttribute = Struct(
    "id" / Int32ul,              # CUlaunchAttributeID
    Padding(4),
    "value" / Bytes(64),         # CUlaunchAttributeValue (a union; see LAUNCH_ATTRIBUTE_VALUE)
)

CUlaunchConfig = Struct(
    "gridDimX" / Int32ul, "gridDimY" / Int32ul, "gridDimZ" / Int32ul,
    "blockDimX" / Int32ul, "blockDimY" / Int32ul, "blockDimZ" / Int32ul,
    "sharedMemBytes" / Int32ul,
    Padding(4),
    "hStream" / Int64ul,
    "attrs" / Int64ul,           # CUlaunchAttribute *
    "numAttrs" / Int32ul,
    Padding(4),
)

# CUDA_KERNEL_NODE_PARAMS (cuda.h CUDA_KERNEL_NODE_PARAMS_st, the v1 layout): the v2 struct
# that cuGraphAddKernelNode_v2 and the *SetParams_v2 calls take starts with the same 56
# bytes (then `kern` and `ctx`), so the shim copies these 56 for either.
CUDA_KERNEL_NODE_PARAMS = Struct(
    "func" / Int64ul,
    "gridDimX" / Int32ul, "gridDimY" / Int32ul, "gridDimZ" / Int32ul,
    "blockDimX" / Int32ul, "blockDimY" / Int32ul, "blockDimZ" / Int32ul,
    "sharedMemBytes" / Int32ul,
    Padding(4),
    "kernelParams" / Int64ul,    # void **
    "extra" / Int64ul,           # void **
)

# CUlaunchAttributeID values the decoder reads (cuda.h enum CUlaunchAttributeID_enum).
CU_LAUNCH_ATTRIBUTE = {
    1: "ACCESS_POLICY_WINDOW", 2: "COOPERATIVE", 3: "SYNCHRONIZATION_POLICY",
    4: "CLUSTER_DIMENSION", 5: "CLUSTER_SCHEDULING_POLICY_PREFERENCE",
    6: "PROGRAMMATIC_STREAM_SERIALIZATION", 7: "PROGRAMMATIC_EVENT", 8: "PRIORITY",
    9: "MEM_SYNC_DOMAIN_MAP", 10: "MEM_SYNC_DOMAIN", 11: "PREFERRED_CLUSTER_DIMENSION",
    12: "LAUNCH_COMPLETION_EVENT", 13: "DEVICE_UPDATABLE_KERNEL_NODE",
    14: "PREFERRED_SHARED_MEMORY_CARVEOUT",
}
# The union member each attribute uses, as a struct over the 64 value bytes.
LAUNCH_ATTRIBUTE_VALUE = {
    "CLUSTER_DIMENSION": Struct("x" / Int32ul, "y" / Int32ul, "z" / Int32ul),
    "PREFERRED_CLUSTER_DIMENSION": Struct("x" / Int32ul, "y" / Int32ul, "z" / Int32ul),
    "COOPERATIVE": Struct("value" / Int32ul),
    "PRIORITY": Struct("value" / Int32ul),
}

# cuLaunchKernel's `extra` array: key/value pointer pairs ending with CU_LAUNCH_PARAM_END.
CU_LAUNCH_PARAM_END = 0x00
CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01
CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02
CU_LAUNCH_PARAM_EXTRA_ENTRY = Struct("key" / Int64ul, "value" / Int64ul)

PARAM_SLOT = Struct("offset" / Int32ul, "size" / Int32ul)   # the shim's PARAM_LAYOUT entry
