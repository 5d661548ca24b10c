"""The CUDA driver entry points the shim brackets, declared once: the shim's wrapper
table (shim/abi.h TL_API_SLOTS) is generated from FUNCTIONS, and the decoder names each
recorded argument from the same declaration.

A slot is one exported libcuda symbol (the per-thread-stream `_ptsz`/`_ptds` variants
and `_v2` versions are separate symbols with the same parameters). Slot numbers are part
of the capture format: never reuse one. `kind` says what the shim copies beyond the raw
argument words (TL_API_KIND_*). Parameter lists are cuda.h's (CUDA 13.0).
"""
from collections import namedtuple

Api = namedtuple("Api", "slot name kind params")

# What the shim copies for a call, beyond its argument words.
KINDS = {
    "PLAIN": 0,        # the argument words only
    "LAUNCH": 1,       # cuLaunchKernel: f=arg0, kernelParams=arg9, extra=arg10
    "LAUNCH_COOP": 2,  # cuLaunchCooperativeKernel: f=arg0, kernelParams=arg9
    "LAUNCH_EX": 3,    # cuLaunchKernelEx: config=arg0 (+ its attributes), f=arg1, params=arg2, extra=arg3
    "LOAD_IMAGE": 4,   # module/library from memory: out=arg0, image=arg1
    "LOAD_FILE": 5,    # module/library from a file: out=arg0, path=arg1
    "GET_BY_NAME": 6,  # out=arg0, parent=arg1, name=arg2
    "OUT0": 7,         # out=arg0: the u64 it points to is read at exit
    # a CUDA graph's kernel node set: the last argument is CUDA_KERNEL_NODE_PARAMS * (its
    # function, grid, block, shared memory, kernelParams/extra read as a launch's are);
    # out=arg0 is read at exit for cuGraphAddKernelNode (the node handle)
    "GRAPH_KERNEL_NODE": 8,
    # Graphs however they were built (issue 25): the shim walks the graph a call hands it
    # through the driver (cuGraphGetNodes and the per-type getters, child graphs and
    # conditional bodies too) at entry, and records each node (GRAPH_WALK, then GRAPH_NODE
    # sections; a kernel node's argument bytes as a launch's). At entry, because QMDs the
    # call itself sends (an instantiate that uploads) are attributed before its exit, and
    # because none of these calls changes the graph it reads.
    "GRAPH_INSTANTIATE": 9,    # out=arg0 (the exec, read at exit), graph=arg1 walked
    "GRAPH_EXEC_UPDATE": 10,   # exec=arg0, graph=arg1 walked (the exec's nodes from now on)
    "GRAPH_EXEC_CHILD": 11,    # exec=arg0, node=arg1, graph=arg2 walked under that node
    # CUgraphNodeParams * as the last argument (cuGraphAddNode, cuGraph(Exec)NodeSetParams):
    # a kernel node's params as GRAPH_KERNEL_NODE's; a conditional node's body graphs read
    # at exit (the driver fills phGraph_out); out=arg0 read at exit for cuGraphAddNode
    "GRAPH_NODE_PARAMS": 12,
    # a MEMCPY or MEMSET node set (cuGraph(Exec)MemcpyNodeSetParams, cuGraph(Exec)Memset-
    # NodeSetParams): the CUDA_MEMCPY3D or CUDA_MEMSET_NODE_PARAMS the node argument's
    # next argument points to, as a GRAPH_NODE section of that type (not GENERIC). XLA
    # moves a command buffer's device copies between replays this way (out/run7: the
    # copies of a loop's carried values ran at new addresses no recorded call gave them)
    "GRAPH_COPY_NODE": 13,
    # cuMemcpy2D* / cuMemcpy3D*: the CUDA_MEMCPY2D or CUDA_MEMCPY3D arg0 points to, as a
    # COPY_PARAMS section (session 43: the pitches, width and height the driver's copy
    # kernel is checked against; captures before it hold the pointer only)
    "COPY_PARAMS": 14,
    # A Hopper TMA descriptor made or changed (session 44). cuTensorMapEncodeTiled: the
    # four arrays of tensorRank entries arg4..arg7 point to (globalDim, globalStrides,
    # boxDim, elementStrides) as one TENSOR_MAP_INPUTS section at entry; the 128-byte CUtensorMap
    # arg0 points to as a TENSOR_MAP section at exit. cuTensorMapReplaceAddress: the map
    # at entry and at exit. A kernel argument holding those 128 bytes is then named by the
    # call that made them (decoders/cuda/tensormaps.py).
    "TENSOR_MAP": 15,
}

_LAUNCH = ("f", "gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
           "sharedMemBytes", "hStream", "kernelParams", "extra")
_COOP = _LAUNCH[:-1]
_EX = ("config", "f", "kernelParams", "extra")
_LIB_OPTS = ("jitOptions", "jitOptionsValues", "numJitOptions", "libraryOptions",
             "libraryOptionValues", "numLibraryOptions")
_CPY = ("dst", "src", "ByteCount")
_SET = ("dstDevice", "value", "N")
_SET2D = ("dstDevice", "dstPitch", "value", "Width", "Height")
_GNODE_ADD = ("phGraphNode", "hGraph", "dependencies", "numDependencies", "nodeParams")
_GNODE_EXEC_SET = ("hGraphExec", "hNode", "nodeParams")
_GINST_V1 = ("phGraphExec", "hGraph", "phErrorNode", "logBuffer", "bufferSize")

FUNCTIONS = [Api(*a) for a in (
    (0, "cuLaunchKernel", "LAUNCH", _LAUNCH),
    (1, "cuLaunchKernel_ptsz", "LAUNCH", _LAUNCH),
    (2, "cuLaunchKernelEx", "LAUNCH_EX", _EX),
    (3, "cuLaunchKernelEx_ptsz", "LAUNCH_EX", _EX),
    (4, "cuLaunchCooperativeKernel", "LAUNCH_COOP", _COOP),
    (5, "cuLaunchCooperativeKernel_ptsz", "LAUNCH_COOP", _COOP),
    (6, "cuGraphLaunch", "PLAIN", ("hGraphExec", "hStream")),
    (7, "cuGraphLaunch_ptsz", "PLAIN", ("hGraphExec", "hStream")),
    (8, "cuModuleLoad", "LOAD_FILE", ("module", "fname")),
    (9, "cuModuleLoadData", "LOAD_IMAGE", ("module", "image")),
    (10, "cuModuleLoadDataEx", "LOAD_IMAGE", ("module", "image", "numOptions", "options",
                                              "optionValues")),
    (11, "cuModuleLoadFatBinary", "LOAD_IMAGE", ("module", "fatCubin")),
    (12, "cuLibraryLoadData", "LOAD_IMAGE", ("library", "code") + _LIB_OPTS),
    (13, "cuLibraryLoadFromFile", "LOAD_FILE", ("library", "fileName") + _LIB_OPTS),
    (14, "cuModuleGetFunction", "GET_BY_NAME", ("hfunc", "hmod", "name")),
    (15, "cuLibraryGetKernel", "GET_BY_NAME", ("pKernel", "library", "name")),
    (16, "cuKernelGetFunction", "OUT0", ("pFunc", "kernel")),
    (17, "cuMemAlloc_v2", "OUT0", ("dptr", "bytesize")),
    (18, "cuMemAllocAsync", "OUT0", ("dptr", "bytesize", "hStream")),
    (19, "cuMemAllocAsync_ptsz", "OUT0", ("dptr", "bytesize", "hStream")),
    (20, "cuMemAllocManaged", "OUT0", ("dptr", "bytesize", "flags")),
    (21, "cuMemFree_v2", "PLAIN", ("dptr",)),
    (22, "cuMemFreeAsync", "PLAIN", ("dptr", "hStream")),
    (23, "cuMemFreeAsync_ptsz", "PLAIN", ("dptr", "hStream")),
    (24, "cuMemcpy", "PLAIN", _CPY),
    (25, "cuMemcpy_ptds", "PLAIN", _CPY),
    (26, "cuMemcpyAsync", "PLAIN", _CPY + ("hStream",)),
    (27, "cuMemcpyAsync_ptsz", "PLAIN", _CPY + ("hStream",)),
    (28, "cuMemcpyHtoD_v2", "PLAIN", ("dstDevice", "srcHost", "ByteCount")),
    (29, "cuMemcpyHtoD_v2_ptds", "PLAIN", ("dstDevice", "srcHost", "ByteCount")),
    (30, "cuMemcpyDtoH_v2", "PLAIN", ("dstHost", "srcDevice", "ByteCount")),
    (31, "cuMemcpyDtoH_v2_ptds", "PLAIN", ("dstHost", "srcDevice", "ByteCount")),
    (32, "cuMemcpyDtoD_v2", "PLAIN", ("dstDevice", "srcDevice", "ByteCount")),
    (33, "cuMemcpyDtoD_v2_ptds", "PLAIN", ("dstDevice", "srcDevice", "ByteCount")),
    (34, "cuMemcpyHtoDAsync_v2", "PLAIN", ("dstDevice", "srcHost", "ByteCount", "hStream")),
    (35, "cuMemcpyHtoDAsync_v2_ptsz", "PLAIN", ("dstDevice", "srcHost", "ByteCount", "hStream")),
    (36, "cuMemcpyDtoHAsync_v2", "PLAIN", ("dstHost", "srcDevice", "ByteCount", "hStream")),
    (37, "cuMemcpyDtoHAsync_v2_ptsz", "PLAIN", ("dstHost", "srcDevice", "ByteCount", "hStream")),
    (38, "cuMemcpyDtoDAsync_v2", "PLAIN", ("dstDevice", "srcDevice", "ByteCount", "hStream")),
    (39, "cuMemcpyDtoDAsync_v2_ptsz", "PLAIN", ("dstDevice", "srcDevice", "ByteCount", "hStream")),
    (40, "cuMemsetD8_v2", "PLAIN", _SET),
    (41, "cuMemsetD8_v2_ptds", "PLAIN", _SET),
    (42, "cuMemsetD16_v2", "PLAIN", _SET),
    (43, "cuMemsetD16_v2_ptds", "PLAIN", _SET),
    (44, "cuMemsetD32_v2", "PLAIN", _SET),
    (45, "cuMemsetD32_v2_ptds", "PLAIN", _SET),
    (46, "cuMemsetD8Async", "PLAIN", _SET + ("hStream",)),
    (47, "cuMemsetD8Async_ptsz", "PLAIN", _SET + ("hStream",)),
    (48, "cuMemsetD16Async", "PLAIN", _SET + ("hStream",)),
    (49, "cuMemsetD16Async_ptsz", "PLAIN", _SET + ("hStream",)),
    (50, "cuMemsetD32Async", "PLAIN", _SET + ("hStream",)),
    (51, "cuMemsetD32Async_ptsz", "PLAIN", _SET + ("hStream",)),
    (52, "cuStreamSynchronize", "PLAIN", ("hStream",)),
    (53, "cuStreamSynchronize_ptsz", "PLAIN", ("hStream",)),
    (54, "cuCtxSynchronize", "PLAIN", ()),
    (55, "cuEventRecord", "PLAIN", ("hEvent", "hStream")),
    (56, "cuEventRecord_ptsz", "PLAIN", ("hEvent", "hStream")),
    (57, "cuStreamWaitEvent", "PLAIN", ("hStream", "hEvent", "Flags")),
    (58, "cuStreamWaitEvent_ptsz", "PLAIN", ("hStream", "hEvent", "Flags")),
    (59, "cuEventSynchronize", "PLAIN", ("hEvent",)),
    # CUDA 13: cuGetProcAddress("cuCtxSynchronize", 13000) answers this one (H100, 580.159.04)
    (60, "cuCtxSynchronize_v2", "PLAIN", ("ctx",)),
    # CUDA graphs: what each replay's kernel nodes were set to (cuda.h, CUDA 13.0; the
    # unsuffixed names are the CUDA 11 ABI, cuGetProcAddress answers the _v2 ones)
    (61, "cuGraphAddKernelNode", "GRAPH_KERNEL_NODE", _GNODE_ADD),
    (62, "cuGraphAddKernelNode_v2", "GRAPH_KERNEL_NODE", _GNODE_ADD),
    (63, "cuGraphKernelNodeSetParams", "GRAPH_KERNEL_NODE", ("hNode", "nodeParams")),
    (64, "cuGraphKernelNodeSetParams_v2", "GRAPH_KERNEL_NODE", ("hNode", "nodeParams")),
    (65, "cuGraphExecKernelNodeSetParams", "GRAPH_KERNEL_NODE", _GNODE_EXEC_SET),
    (66, "cuGraphExecKernelNodeSetParams_v2", "GRAPH_KERNEL_NODE", _GNODE_EXEC_SET),
    (67, "cuGraphInstantiateWithFlags", "GRAPH_INSTANTIATE", ("phGraphExec", "hGraph", "flags")),
    (68, "cuGraphUpload", "PLAIN", ("hGraphExec", "hStream")),
    (69, "cuGraphUpload_ptsz", "PLAIN", ("hGraphExec", "hStream")),
    (70, "cuGraphExecUpdate_v2", "GRAPH_EXEC_UPDATE", ("hGraphExec", "hGraph", "resultInfo")),
    # Graphs however they were built (issue 25). The unsuffixed cuGraphInstantiate and
    # cuGraphExecUpdate are the CUDA 11 ABI (cuGetProcAddress with cudaVersion < 12000
    # answers them); cuGraphAddNode is the CUDA 12.2 ABI, _v2 (12.3) adds edge data.
    (73, "cuGraphInstantiate", "GRAPH_INSTANTIATE", _GINST_V1),
    (74, "cuGraphInstantiate_v2", "GRAPH_INSTANTIATE", _GINST_V1),
    (75, "cuGraphInstantiateWithParams", "GRAPH_INSTANTIATE",
     ("phGraphExec", "hGraph", "instantiateParams")),
    (76, "cuGraphInstantiateWithParams_ptsz", "GRAPH_INSTANTIATE",
     ("phGraphExec", "hGraph", "instantiateParams")),
    (77, "cuGraphExecUpdate", "GRAPH_EXEC_UPDATE",
     ("hGraphExec", "hGraph", "hErrorNode_out", "updateResult_out")),
    (78, "cuGraphExecChildGraphNodeSetParams", "GRAPH_EXEC_CHILD",
     ("hGraphExec", "hNode", "childGraph")),
    (79, "cuGraphAddNode", "GRAPH_NODE_PARAMS",
     ("phGraphNode", "hGraph", "dependencies", "numDependencies", "nodeParams")),
    (80, "cuGraphAddNode_v2", "GRAPH_NODE_PARAMS",
     ("phGraphNode", "hGraph", "dependencies", "dependencyData", "numDependencies", "nodeParams")),
    (81, "cuGraphNodeSetParams", "GRAPH_NODE_PARAMS", ("hNode", "nodeParams")),
    (82, "cuGraphExecNodeSetParams", "GRAPH_NODE_PARAMS", ("hGraphExec", "hNode", "nodeParams")),
    (83, "cuGraphExecMemcpyNodeSetParams", "GRAPH_COPY_NODE",
     ("hGraphExec", "hNode", "copyParams", "ctx")),
    (84, "cuGraphExecMemsetNodeSetParams", "GRAPH_COPY_NODE",
     ("hGraphExec", "hNode", "memsetParams", "ctx")),
    (85, "cuGraphMemcpyNodeSetParams", "GRAPH_COPY_NODE", ("hNode", "nodeParams")),
    (86, "cuGraphMemsetNodeSetParams", "GRAPH_COPY_NODE", ("hNode", "nodeParams")),
    # 2D memsets and 2D / 3D copies (session 35, captures/copies-2d): the driver runs kernels
    # for the memsets, which rang their doorbells outside any bracketed call (unnamed). A
    # copy's CUDA_MEMCPY2D / CUDA_MEMCPY3D is passed by pointer: the shim copies it
    # (COPY_PARAMS, session 43; before, only the pointer was kept).
    (87, "cuMemsetD2D8_v2", "PLAIN", _SET2D),
    (88, "cuMemsetD2D8_v2_ptds", "PLAIN", _SET2D),
    (89, "cuMemsetD2D16_v2", "PLAIN", _SET2D),
    (90, "cuMemsetD2D16_v2_ptds", "PLAIN", _SET2D),
    (91, "cuMemsetD2D32_v2", "PLAIN", _SET2D),
    (92, "cuMemsetD2D32_v2_ptds", "PLAIN", _SET2D),
    (93, "cuMemsetD2D8Async", "PLAIN", _SET2D + ("hStream",)),
    (94, "cuMemsetD2D8Async_ptsz", "PLAIN", _SET2D + ("hStream",)),
    (95, "cuMemsetD2D16Async", "PLAIN", _SET2D + ("hStream",)),
    (96, "cuMemsetD2D16Async_ptsz", "PLAIN", _SET2D + ("hStream",)),
    (97, "cuMemsetD2D32Async", "PLAIN", _SET2D + ("hStream",)),
    (98, "cuMemsetD2D32Async_ptsz", "PLAIN", _SET2D + ("hStream",)),
    (99, "cuMemcpy2D_v2", "COPY_PARAMS", ("pCopy",)),
    (100, "cuMemcpy2D_v2_ptds", "COPY_PARAMS", ("pCopy",)),
    (101, "cuMemcpy2DUnaligned_v2", "COPY_PARAMS", ("pCopy",)),
    (102, "cuMemcpy2DUnaligned_v2_ptds", "COPY_PARAMS", ("pCopy",)),
    (103, "cuMemcpy2DAsync_v2", "COPY_PARAMS", ("pCopy", "hStream")),
    (104, "cuMemcpy2DAsync_v2_ptsz", "COPY_PARAMS", ("pCopy", "hStream")),
    (105, "cuMemcpy3D_v2", "COPY_PARAMS", ("pCopy",)),
    (106, "cuMemcpy3D_v2_ptds", "COPY_PARAMS", ("pCopy",)),
    (107, "cuMemcpy3DAsync_v2", "COPY_PARAMS", ("pCopy", "hStream")),
    (108, "cuMemcpy3DAsync_v2_ptsz", "COPY_PARAMS", ("pCopy", "hStream")),
    # Virtual memory management (cuda.h, CUDA 13.0): PyTorch's allocator on expandable
    # segments and NCCL's buffers (cuMem* by default since NCCL 2.19) map physical memory
    # into reserved VA ranges; a kernel argument that points there is named by its mapping
    # (decoders/cuda/attribute.py), as one into a cuMemAlloc is.
    (109, "cuMemAddressReserve", "OUT0", ("ptr", "size", "alignment", "addr", "flags")),
    (110, "cuMemAddressFree", "PLAIN", ("ptr", "size")),
    (111, "cuMemCreate", "OUT0", ("handle", "size", "prop", "flags")),
    (112, "cuMemRelease", "PLAIN", ("handle",)),
    (113, "cuMemMap", "PLAIN", ("ptr", "size", "offset", "handle", "flags")),
    (114, "cuMemUnmap", "PLAIN", ("ptr", "size")),
    # cudaProfilerStart/Stop reach the driver here (cudaProfiler.h, CUDA 13.0): the edges of
    # a --capture-range=cudaProfilerApi window (WINDOW_ROLES below)
    # TMA descriptors (session 44): cuBLASLt, cuDNN, XLA and Triton look these up by name
    # (measured on the H200's libraries, bench/probes/tma_probe.py). cuTensorMapEncodeIm2col
    # (15 words) is past what the shim forwards, and not bracketed.
    (115, "cuTensorMapEncodeTiled", "TENSOR_MAP",
     ("tensorMap", "tensorDataType", "tensorRank", "globalAddress", "globalDim",
      "globalStrides", "boxDim", "elementStrides", "interleave", "swizzle", "l2Promotion",
      "oobFill")),
    (116, "cuTensorMapReplaceAddress", "TENSOR_MAP", ("tensorMap", "globalAddress")),
    (71, "cuProfilerStart", "PLAIN", ()),
    (72, "cuProfilerStop", "PLAIN", ()),
)]
BY_SLOT = {f.slot: f for f in FUNCTIONS}
BY_NAME = {f.name: f for f in FUNCTIONS}
MAX_ARGS = 12   # cuTensorMapEncodeTiled: the shim forwards 12 integer-class words to every
                # slot (11 before session 44; a record holds its slot's own words only)

# Groups the report and the attribution use, by base name (variant suffixes dropped).
LAUNCH_KINDS = ("LAUNCH", "LAUNCH_COOP", "LAUNCH_EX")
# Calls that send a graph's QMDs ahead of a replay (they run at the next cuGraphLaunch).
GRAPH_PREPARE = ("cuGraphUpload", "cuGraphInstantiateWithFlags", "cuGraphExecUpdate",
                 "cuGraphInstantiate", "cuGraphInstantiateWithParams",
                 "cuGraphExecChildGraphNodeSetParams")
# Calls whose API_ENTER holds a walk of a graph (GRAPH_WALK + GRAPH_NODE sections).
GRAPH_WALK_KINDS = ("GRAPH_INSTANTIATE", "GRAPH_EXEC_UPDATE", "GRAPH_EXEC_CHILD")


# What each call is to a capture window (trace-launch --capture-range; docs/capture-format.md
# "Capture windows"): the shim's table (shim/abi.h TL_API_WINDOW_ROLES) is generated from
# window_role(). Outside a window the shim records KEEP calls (module loads, lookups,
# allocations, graph building: what the decode of the window needs) and drops the rest.
#   LAUNCH          a kernel launch: counted (--launch-range), recorded inside the window only
#                   (and anywhere when its stream is being captured: it builds a graph)
#   GRAPH_LAUNCH    recorded inside the window; outside it, a graph exec's first launch (after
#                   its instantiate or an update) is kept with its submissions, since the
#                   driver may write the node QMDs then
#   GRAPH_PREPARE   instantiate, upload, exec update, exec node set: recorded with their
#                   submissions everywhere (they write the QMDs later replays run)
#   WORK            copies, memsets, synchronisation, events: inside the window only
#   PROFILER_START, PROFILER_STOP   recorded everywhere; the cudaProfilerApi window's edges
WINDOW_ROLES = {"KEEP": 0, "LAUNCH": 1, "GRAPH_LAUNCH": 2, "GRAPH_PREPARE": 3, "WORK": 4,
                "PROFILER_START": 5, "PROFILER_STOP": 6}
_WORK = ("cuMemcpy", "cuMemset", "cuStreamSynchronize", "cuCtxSynchronize", "cuEventRecord",
         "cuStreamWaitEvent", "cuEventSynchronize")


def window_role(f):
    """The WINDOW_ROLES name of an Api."""
    base = base_name(f.name)
    if f.kind in LAUNCH_KINDS:
        return "LAUNCH"
    if base == "cuGraphLaunch":
        return "GRAPH_LAUNCH"
    if base in GRAPH_PREPARE or base in ("cuGraphExecKernelNodeSetParams",
                                         "cuGraphExecNodeSetParams",
                                         "cuGraphExecMemcpyNodeSetParams",
                                         "cuGraphExecMemsetNodeSetParams"):
        return "GRAPH_PREPARE"
    if base.startswith(_WORK):
        return "WORK"
    if base == "cuProfilerStart":
        return "PROFILER_START"
    if base == "cuProfilerStop":
        return "PROFILER_STOP"
    return "KEEP"


def base_name(name):
    """cuMemcpyHtoDAsync_v2_ptsz -> cuMemcpyHtoDAsync."""
    for suffix in ("_ptsz", "_ptds"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith("_v2"):
        name = name[:-3]
    return name


# Sections of an API record (TL_API_SECTION.tag).
SECTIONS = {
    1: "PARAM_LAYOUT",   # per kernel parameter: offset, size (cuFuncGetParamInfo)
    2: "PARAM_DATA",     # the argument bytes, each at its offset (as constant bank 0 holds them)
    3: "EXTRA_BUFFER",   # cuLaunchKernel `extra` CU_LAUNCH_PARAM_BUFFER_POINTER bytes
    4: "LAUNCH_CONFIG",  # CUlaunchConfig
    5: "LAUNCH_ATTRS",   # CUlaunchAttribute[numAttrs]
    6: "IMAGE",          # module image (cubin, fatbin or PTX)
    7: "NAME",           # a C string argument: function name or file path
    8: "OUT",            # u64 values read through the out pointer at exit
    # Without cuFuncGetParamInfo (drivers before CUDA 12.4) the layout comes from the cubin
    # at decode time; the shim keeps the first kernelParams pointers and a window of bytes
    # behind each (PARAM_WINDOW_BYTES), which the decoder cuts to the cubin's sizes.
    9: "PARAM_POINTERS",
    10: "PARAM_WINDOWS",
    11: "KERNEL_NODE_PARAMS",   # CUDA_KERNEL_NODE_PARAMS (its first 56 bytes)
    # Issue 25 (decoders/cuda/types.py declares the data):
    # a function handle no bracketed lookup handed out, named by the driver once per handle
    # (cuFuncGetName/cuFuncGetModule or cuKernelGetName/cuKernelGetLibrary): TL_FUNCTION_NAME
    12: "FUNCTION_NAME",
    # a graph walked through the driver: one GRAPH_WALK (TL_GRAPH_WALK), then one GRAPH_NODE
    # (TL_GRAPH_NODE) per node; a kernel node's GRAPH_NODE is followed by the sections a
    # launch of it would have (PARAM_LAYOUT, then PARAM_DATA or PARAM_POINTERS +
    # PARAM_WINDOWS, or EXTRA_BUFFER), which belong to it
    13: "GRAPH_WALK",
    14: "GRAPH_NODE",
    15: "COPY_PARAMS",      # CUDA_MEMCPY2D or CUDA_MEMCPY3D (KINDS COPY_PARAMS)
    16: "TENSOR_MAP",       # a CUtensorMap's 128 bytes (KINDS TENSOR_MAP)
    # cuTensorMapEncodeTiled's arrays of tensorRank (1..5) entries, end to end: globalDim
    # (u64), globalStrides (u64, one fewer), boxDim (u32), elementStrides (u32)
    17: "TENSOR_MAP_INPUTS",
}
PARAM_WINDOWS_MAX = 32      # pointers kept
TENSOR_MAP_BYTES = 128      # sizeof(CUtensorMap)
TENSOR_MAP_RANK_MAX = 5     # tensorRank 1..5: TENSOR_MAP_INPUTS holds 5*8 + 4*8 + 5*4 + 5*4 bytes at most
PARAM_WINDOW_BYTES = 64     # bytes kept behind each
SECTION_BY_NAME = {v: k for k, v in SECTIONS.items()}
# Sections that may repeat in one record (the rest appear at most once); the decoder keeps
# them in order (ApiCall.ordered).
REPEATED_SECTIONS = ("FUNCTION_NAME", "GRAPH_WALK", "GRAPH_NODE")

# Limits of the shim's graph walk (shim/cuapi.c); a walk that reaches one says so in its
# GRAPH_WALK flags and a NOTE record.
WALK_MAX_NODES = 4096       # nodes recorded per walk, every level together
WALK_MAX_DEPTH = 8          # child graphs and conditional bodies nested below the walked graph
WALK_MAX_BODIES = 8         # body graphs followed per conditional node (a SWITCH may have more)
# TL_FUNCTION_NAME.flags
FUNCTION_NAME_FLAGS = {
    0x1: "KERNEL",          # the handle is a CUkernel (cuKernelGetName answered); parent a CUlibrary
    0x2: "NO_NAME",         # neither name call answered (absent before CUDA 12.3, or refused)
    0x4: "NO_PARENT",       # cuFuncGetModule / cuKernelGetLibrary did not answer
    0x8: "NAME_TRUNCATED",  # the name was longer than the shim keeps (NAME_MAX_LEN)
}
# TL_GRAPH_WALK.flags
GRAPH_WALK_FLAGS = {
    0x1: "NODE_LIMIT",      # WALK_MAX_NODES reached: later nodes are not recorded
    0x2: "DEPTH_LIMIT",     # a graph nested deeper than WALK_MAX_DEPTH was not walked
    0x4: "NO_DRIVER",       # cuGraphGetNodes or cuGraphNodeGetType is not exported
    0x8: "FAILED",          # a graph or node query failed: what it would have given is missing
    0x10: "BODIES_UNKNOWN", # a conditional node whose body graphs the shim could not learn
}
# TL_GRAPH_NODE.flags
GRAPH_NODE_FLAGS = {
    0x1: "GENERIC",         # params are CUgraphNodeParams' union (cuGraphAddNode, *NodeSetParams,
                            # cuGraphNodeGetParams), not the per-type getter's struct
    0x2: "PARAMS_UNREADABLE",   # the type's getter failed: params are empty
    0x4: "BODIES_UNKNOWN",  # a conditional node whose body graphs were not learned
    0x8: "BODIES_CUT",      # more body graphs than WALK_MAX_BODIES: the rest not walked
}
# TL_API_SECTION.flags
SECTION_FLAGS = {
    0x1: "TRUNCATED",          # bigger than the shim's limit: `size` bytes of `full_size` kept
    0x2: "UNREADABLE",         # the pointer could not be read (bytes are zero)
    0x4: "LAYOUT_FROM_KERNEL", # cuKernelGetParamInfo answered (the handle was a CUkernel)
    0x8: "LAYOUT_UNKNOWN",     # neither param-info call answered: argument bytes not read
}

# CUresult names for the statuses a trace commonly shows (cuda.h cudaError_enum).
CURESULT = {
    0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED",
    100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE",
    200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT",
    209: "CUDA_ERROR_NO_BINARY_FOR_GPU", 218: "CUDA_ERROR_INVALID_PTX",
    400: "CUDA_ERROR_INVALID_HANDLE", 500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY",
    700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
    702: "CUDA_ERROR_LAUNCH_TIMEOUT", 719: "CUDA_ERROR_LAUNCH_FAILED",
    720: "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 800: "CUDA_ERROR_NOT_PERMITTED",
    801: "CUDA_ERROR_NOT_SUPPORTED", 999: "CUDA_ERROR_UNKNOWN",
}


# Sections the tracer's exit step writes, never the shim (so not in shim/abi.h): tags from
# 256 up, clear of the shim's. IMAGE_REF (capture format version 2): in place of an IMAGE
# whose bytes an earlier record holds (decoders/capture/writer.py compact_capture; data:
# decoders/capture/format.py TL_IMAGE_REF).
EXIT_STEP_SECTIONS = {256: "IMAGE_REF"}
EXIT_STEP_SECTION_BY_NAME = {v: k for k, v in EXIT_STEP_SECTIONS.items()}
# Section flags the exit step sets, from bit 16 up (clear of the shim's SECTION_FLAGS).
# ENTRIES_ELIDED: an IMAGE (or IMAGE_REF to one) whose fatbin entries for GPUs other than
# the capture's were left out (decoders/cubin image_for_gpus); `full_size` is the size the
# program passed.
EXIT_STEP_SECTION_FLAGS = {0x10000: "ENTRIES_ELIDED"}
EXIT_STEP_SECTION_FLAG_BY_NAME = {v: k for k, v in EXIT_STEP_SECTION_FLAGS.items()}
