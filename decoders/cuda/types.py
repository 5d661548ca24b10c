"""CUDA driver API structures the shim copies byte for byte (cuda.h, CUDA 12/13, x86-64).

Provenance: cuda.h of the CUDA 13.0 toolkit (CUlaunchConfig_st, CUlaunchAttribute_st,
CUlaunchAttributeValue_union, CUlaunchAttributeID, cuLaunchKernel's `extra` keys). The
union is 64 bytes (its `pad` member), the attribute id is padded to 8 bytes.
"""
from construct import Array, Bytes, Int16ul, Int32ul, Int64ul, Padding, Struct, this

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
    # int members of the union (cuda.h CUlaunchAttributeValue)
    "PROGRAMMATIC_STREAM_SERIALIZATION":
        Struct("programmaticStreamSerializationAllowed" / Int32ul),
    "MEM_SYNC_DOMAIN": Struct("memSyncDomain" / Int32ul),    # 0 DEFAULT, 1 REMOTE
    "CLUSTER_SCHEDULING_POLICY_PREFERENCE":
        Struct("clusterSchedulingPolicyPreference" / Int32ul),
}

# cuLaunchKernel's `extra` array: key/value pointer pairs ending with CU_LAUNCH_PARAM_END.
CU_LAUNCH_PARAM_END = 0x00
CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01
CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02
CU_LAUNCH_PARAM_EXTRA_ENTRY = Struct("key" / Int64ul, "value" / Int64ul)

PARAM_SLOT = Struct("offset" / Int32ul, "size" / Int32ul)   # the shim's PARAM_LAYOUT entry


# ---- CUDA graphs however they were built (issue 25) ------------------------------------
# cuda.h (CUDA 13.0) as cuda-python 13.4's cydriver.pxd declares it (CUDA_KERNEL_NODE_PARAMS_v2_st,
# CUDA_MEMSET_NODE_PARAMS_st, CUDA_MEMCPY3D_st, CUDA_CONDITIONAL_NODE_PARAMS,
# CUgraphNodeParams_st, CUgraphNodeType_enum, CUgraphConditionalNodeType_enum).

# cuGraphKernelNodeGetParams_v2's struct: the v1 56 bytes, then `kern` and `ctx` (the _v3
# of newer headers has the same layout)
CUDA_KERNEL_NODE_PARAMS_v2 = Struct(
    "func" / Int64ul,
    "gridDimX" / Int32ul, "gridDimY" / Int32ul, "gridDimZ" / Int32ul,
    "blockDimX" / Int32ul, "blockDimY" / Int32ul, "blockDimZ" / Int32ul,
    "sharedMemBytes" / Int32ul,
    Padding(4),
    "kernelParams" / Int64ul,
    "extra" / Int64ul,
    "kern" / Int64ul,            # CUkernel (the node's function when set from a library kernel)
    "ctx" / Int64ul,
)

# cuGraphMemsetNodeGetParams (v1; the _v2 of CUgraphNodeParams adds `ctx` after `height`)
CUDA_MEMSET_NODE_PARAMS = Struct(
    "dst" / Int64ul, "pitch" / Int64ul, "value" / Int32ul, "elementSize" / Int32ul,
    "width" / Int64ul, "height" / Int64ul)

# cuGraphMemcpyNodeGetParams. CUgraphNodeParams' memcpy member is CUDA_MEMCPY_NODE_PARAMS:
# {int flags, int reserved, CUcontext copyCtx} (16 bytes), then this struct.
CUDA_MEMCPY3D = Struct(
    "srcXInBytes" / Int64ul, "srcY" / Int64ul, "srcZ" / Int64ul, "srcLOD" / Int64ul,
    "srcMemoryType" / Int32ul, Padding(4),
    "srcHost" / Int64ul, "srcDevice" / Int64ul, "srcArray" / Int64ul, "reserved0" / Int64ul,
    "srcPitch" / Int64ul, "srcHeight" / Int64ul,
    "dstXInBytes" / Int64ul, "dstY" / Int64ul, "dstZ" / Int64ul, "dstLOD" / Int64ul,
    "dstMemoryType" / Int32ul, Padding(4),
    "dstHost" / Int64ul, "dstDevice" / Int64ul, "dstArray" / Int64ul, "reserved1" / Int64ul,
    "dstPitch" / Int64ul, "dstHeight" / Int64ul,
    "WidthInBytes" / Int64ul, "Height" / Int64ul, "Depth" / Int64ul)
CUDA_MEMCPY_NODE_PARAMS_PREFIX = 16
# cuMemcpy2D*'s argument (CUDA_MEMCPY2D_st, cydriver.pxd as above): CUDA_MEMCPY3D less the
# z, LOD, reserved and height fields and Depth
CUDA_MEMCPY2D = Struct(
    "srcXInBytes" / Int64ul, "srcY" / Int64ul,
    "srcMemoryType" / Int32ul, Padding(4),
    "srcHost" / Int64ul, "srcDevice" / Int64ul, "srcArray" / Int64ul, "srcPitch" / Int64ul,
    "dstXInBytes" / Int64ul, "dstY" / Int64ul,
    "dstMemoryType" / Int32ul, Padding(4),
    "dstHost" / Int64ul, "dstDevice" / Int64ul, "dstArray" / Int64ul, "dstPitch" / Int64ul,
    "WidthInBytes" / Int64ul, "Height" / Int64ul)
CU_MEMORYTYPE = {1: "HOST", 2: "DEVICE", 3: "ARRAY", 4: "UNIFIED"}

# CUgraphNodeParams' conditional member; phGraph_out is filled by the driver when the node
# is made (cuGraphAddNode): `size` body graphs
CUDA_CONDITIONAL_NODE_PARAMS = Struct(
    "handle" / Int64ul,          # CUgraphConditionalHandle
    "type" / Int32ul,            # CU_GRAPH_COND_TYPE
    "size" / Int32ul,
    "phGraph_out" / Int64ul,     # CUgraph * (driver-owned array)
    "ctx" / Int64ul)

# CUgraphNodeParams: type, 3 reserved ints, a 232-byte union (reserved1[29]) and reserved2
CUgraphNodeParams = Struct(
    "type" / Int32ul,
    "reserved0" / Bytes(12),
    "union" / Bytes(232),
    "reserved2" / Int64ul)

CU_GRAPH_NODE_TYPE = {
    0: "KERNEL", 1: "MEMCPY", 2: "MEMSET", 3: "HOST", 4: "GRAPH", 5: "EMPTY",
    6: "WAIT_EVENT", 7: "EVENT_RECORD", 8: "EXT_SEMAS_SIGNAL", 9: "EXT_SEMAS_WAIT",
    10: "MEM_ALLOC", 11: "MEM_FREE", 12: "BATCH_MEM_OP", 13: "CONDITIONAL",
}
CU_GRAPH_COND_TYPE = {0: "IF", 1: "WHILE", 2: "SWITCH"}

# ---- what the shim writes in the issue-25 sections (decoders/cuda/api.py SECTIONS) -------
# FUNCTION_NAME: a function handle no bracketed lookup handed out, as the driver names it
TL_FUNCTION_NAME = Struct(
    "handle" / Int64ul,          # CUfunction, or CUkernel (flags KERNEL)
    "parent" / Int64ul,          # cuFuncGetModule's CUmodule, or cuKernelGetLibrary's CUlibrary
    "flags" / Int32ul,           # decoders/cuda/api.py FUNCTION_NAME_FLAGS
    "name_len" / Int32ul,
    "name" / Bytes(this.name_len))

# GRAPH_WALK: one walk of a graph through the driver; `nodes` GRAPH_NODE sections follow
TL_GRAPH_WALK = Struct(
    "graph" / Int64ul,           # the graph walked
    "parent" / Int64ul,          # the node its top nodes hang under (cuGraphExecChildGraphNodeSetParams)
    "nodes" / Int32ul,           # GRAPH_NODE sections that follow
    "kernels" / Int32ul,         # of which kernel nodes
    "flags" / Int32ul,           # decoders/cuda/api.py GRAPH_WALK_FLAGS
    "reserved0" / Int32ul)

# GRAPH_NODE: one node of a walk, or the node a cuGraphAddNode / *NodeSetParams call names
TL_GRAPH_NODE = Struct(
    "graph" / Int64ul,           # the graph holding the node (0: not known to the call)
    "node" / Int64ul,            # the node (0: cuGraphAddNode's entry, before the driver made it)
    "parent" / Int64ul,          # the child-graph or conditional node whose graph holds it (0: top)
    "type" / Int32ul,            # CUgraphNodeType
    "depth" / Int16ul,           # graphs between the walked one and this node's
    "body" / Int16ul,            # which of a conditional parent's body graphs holds it
    "flags" / Int32ul,           # decoders/cuda/api.py GRAPH_NODE_FLAGS
    "params_size" / Int32ul,
    # the type's parameters as the driver gave them: KERNEL CUDA_KERNEL_NODE_PARAMS_v2,
    # MEMSET CUDA_MEMSET_NODE_PARAMS, MEMCPY CUDA_MEMCPY3D, GRAPH the child CUgraph (u64),
    # WAIT_EVENT / EVENT_RECORD the CUevent (u64), CONDITIONAL CUDA_CONDITIONAL_NODE_PARAMS
    # then its body graphs (u64 each); flags GENERIC: CUgraphNodeParams' union instead
    "params" / Bytes(this.params_size))

# cuTensorMapEncodeTiled's arrays as the shim copies them (TENSOR_MAP_INPUTS, session 44):
# end to end, each of tensorRank entries but globalStrides (one fewer: the innermost
# dimension's stride is the element size). cuda.h (CUDA 13.0) cuTensorMapEncodeTiled.
TL_TENSOR_MAP_INPUTS = Struct(
    "globalDim" / Array(this._.rank, Int64ul),          # elements per dimension
    "globalStrides" / Array(this._.rank - 1, Int64ul),  # bytes, from the second dimension
    "boxDim" / Array(this._.rank, Int32ul),             # the box one copy moves, in elements
    "elementStrides" / Array(this._.rank, Int32ul),
)
# cuda.h (CUDA 13.0) enums of cuTensorMapEncodeTiled's arguments
CU_TENSOR_MAP_DATA_TYPE = {
    0: "UINT8", 1: "UINT16", 2: "UINT32", 3: "INT32", 4: "UINT64", 5: "INT64", 6: "FLOAT16",
    7: "FLOAT32", 8: "FLOAT64", 9: "BFLOAT16", 10: "FLOAT32_FTZ", 11: "TFLOAT32",
    12: "TFLOAT32_FTZ", 13: "16U4_ALIGN8B", 14: "16U4_ALIGN16B", 15: "16U6_ALIGN16B",
}
CU_TENSOR_MAP_INTERLEAVE = {0: "NONE", 1: "16B", 2: "32B"}
CU_TENSOR_MAP_SWIZZLE = {0: "NONE", 1: "32B", 2: "64B", 3: "128B", 4: "128B_ATOM_32B",
                         5: "128B_ATOM_32B_FLIP_8B", 6: "128B_ATOM_64B"}
CU_TENSOR_MAP_L2_PROMOTION = {0: "NONE", 1: "L2_64B", 2: "L2_128B", 3: "L2_256B"}
CU_TENSOR_MAP_FLOAT_OOB_FILL = {0: "NONE", 1: "NAN_REQUEST_ZERO_FMA"}
