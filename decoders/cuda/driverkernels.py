"""The driver's own kernels: the copy and memset kernels libcuda runs on the SMs for
cuMemcpyDtoD* and cuMemsetD* (on the H100 these are kernels, not copy-engine work), named
after the call and checked against its arguments as far as constant bank 0 and the QMD
allow.

Provenance:
  repository: none (libcuda's internal kernels; no header declares their parameters)
  path:       docs/driver-kernels.md (every fact below, with the capture and launch it
              comes from)
  driver:     580.159.04 (open kernel modules), NVIDIA H100 80GB HBM3, CUDA 13.0
  prefix:     none: the field names are ours (`dst`, `src`, `value`, `count`, `reserved*`)

Each layout is what the recordings show, and applies only where they show it: to the calls
it was seen with, to its parameter-block size and block shape, and to byte counts and
addresses that are multiples of its unit. Anything else is left unchecked, with the field
and the reason; a check never fails on a guess (issue 25).
"""
from collections import namedtuple

from construct import Int32ul, Int64ul, Struct

from decoders.cuda.types import CU_MEMORYTYPE
from decoders.fields import bits

PROVENANCE = {
    "repository": "none: libcuda's internal kernels",
    "path": "docs/driver-kernels.md",
    "commit": "captures recorded with driver 580.159.04 on an H100 80GB HBM3",
    "prefix": "none",
}

GRAPH_MEMCPY, GRAPH_MEMSET = "graph MEMCPY node", "graph MEMSET node"
# The calls whose kernels are the driver's: (operation, element size in bytes). Their
# arguments by cuda.h's (CUDA 13.0) names, as decoders/cuda/api.py declares them.
CALLS = {
    "cuMemsetD8": ("memset", 1), "cuMemsetD8Async": ("memset", 1),
    "cuMemsetD16": ("memset", 2), "cuMemsetD16Async": ("memset", 2),
    "cuMemsetD32": ("memset", 4), "cuMemsetD32Async": ("memset", 4),
    "cuMemcpy": ("copy", 1), "cuMemcpyAsync": ("copy", 1),
    "cuMemcpyDtoD": ("copy", 1), "cuMemcpyDtoDAsync": ("copy", 1),
    "cuMemcpyHtoD": ("copy", 1), "cuMemcpyHtoDAsync": ("copy", 1),
    "cuMemcpyDtoH": ("copy", 1), "cuMemcpyDtoHAsync": ("copy", 1),
    # 2D memsets and 2D / 3D copies (captures/copies-2d): named; the memsets' layouts below
    "cuMemsetD2D8": ("memset", 1), "cuMemsetD2D8Async": ("memset", 1),
    "cuMemsetD2D16": ("memset", 2), "cuMemsetD2D16Async": ("memset", 2),
    "cuMemsetD2D32": ("memset", 4), "cuMemsetD2D32Async": ("memset", 4),
    "cuMemcpy2D": ("copy", 1), "cuMemcpy2DAsync": ("copy", 1), "cuMemcpy2DUnaligned": ("copy", 1),
    "cuMemcpy3D": ("copy", 1), "cuMemcpy3DAsync": ("copy", 1),
    # a CUDA graph's MEMCPY and MEMSET nodes, run by the same kernels at a replay (the
    # node's parameters as the call's arguments: decoders/cuda/graphs.py copy_node_args;
    # a memset node's element size is its own)
    GRAPH_MEMCPY: ("copy", 1), GRAPH_MEMSET: ("memset", None),
}
# The side of a copy the kernel does not take from the call (field -> why), per call: a
# copy out of managed memory to the host runs the device copy's layouts and splits, src
# the call's, but dst is the call's only where the destination is page-locked
# (cuMemAllocHost); for pageable memory it is a buffer of the driver's (an
# NV01_MEMORY_SYSTEM_OS_DESCRIPTOR object) that the CPU copies out of afterwards
# (captures/managed-copies), and the call does not say which. A copy from pageable memory
# into managed memory is the mirror (captures/copies-2d).
_DTOH_DST = ("dst", "the kernel writes the call's host destination only where it is "
             "page-locked; for pageable memory it writes a staging buffer of the driver's, "
             "which the CPU then copies out (captures/managed-copies): not compared")
_HTOD_SRC = ("src", "the kernel reads a staging buffer of the driver's that the CPU filled "
             "from the call's pageable source (captures/copies-2d): not compared")
NOT_COMPARED = {"cuMemcpyDtoH": _DTOH_DST, "cuMemcpyDtoHAsync": _DTOH_DST,
                "cuMemcpyHtoD": _HTOD_SRC, "cuMemcpyHtoDAsync": _HTOD_SRC}
CALLS_2D = tuple(c for c in CALLS if "2D" in c or "3D" in c)
# What each compared quantity is called among a call's arguments (first one present).
API_ARGS = {"dst": ("dstDevice", "dst", "dstHost"), "src": ("srcDevice", "src", "srcHost"),
            "bytes": ("ByteCount",), "N": ("N",), "value": ("value",)}

# One parameter-block field: its name, C type (for the report), construct type, and what
# the call gives for it: "dst", "src", "value" (the call's value repeated to 32 bits),
# "units" (the bytes this kernel covers over the layout's unit), "pitch" (a 2D call's
# dstPitch), "src_pitch" (a 2D copy's srcPitch), "rows" (a 2D call's Height), or None
# (reserved: shown, not compared; not always zero: jax-loops leaves other bytes in the
# memset's reserved0).
DriverField = namedtuple("DriverField", "name ctype construct holds")
# The grid as a function of the count (in units): grid.x = count / per_block, rounded as
# `rounding` ("floor", "ceil", "floor1": the floor, and 1 below one block's worth, or
# "ceil+1": the ceiling and one block more), where
# the count is between lo and hi (the range seen); or "rows": the 2D call's Height as grid.y,
# for a Height between lo and hi, and grid.x 1 (per_block None) or the ceiling of count /
# per_block. Elsewhere the grid is not checked.
GridRule = namedtuple("GridRule", "per_block rounding lo hi")
# blocks: the block shapes it was seen with. align: (dst, src) the call's addresses must be
# multiples of, as in every launch seen (src None for memsets). fits: the calls (by `fit`) it was seen to run for, or None
# for any; where two layouts share an operation, parameter-block size and block, it is
# what tells which one the driver ran (captures/memset-sizes, captures/copy-sizes).
Layout = namedtuple("Layout", "name operation calls blocks unit align grid fields no_count "
                              "seen fits")
# A call's fit: "words" when its dst, src (copies) and byte count are all multiples of 4,
# "tail" when the addresses are and the byte count is not, "unaligned" when an address is not.
FITS = ("words", "tail", "unaligned")
# How a call's bytes are shared among the driver's kernels, for the byte counts seen: a call
# of lo..hi bytes runs the kernels of `parts` in this order, each (layout name, span): "all"
# (the whole call), "blocks" (whole 4096-byte blocks from the start: bytes // 4096 * 4096)
# or "rest" (the bytes after those blocks: no kernel when there are none). `calls`: the
# calls it was seen for (None: any); `whole_blocks`: True / False when it was seen only for
# byte counts that are / are not a multiple of 4096 (None: either); `fits`: the call fits
# it was seen for (None: any). A byte count outside every range is not checked: another
# split may run. A graph's MEMCPY node splits otherwise than the same count copied on a
# stream (captures/graph-copies).
Split = namedtuple("Split", "operation lo hi parts seen calls whole_blocks fits")
BLOCK_BYTES = 4096          # the 16-byte layout's block: 256 threads x 16 B

_DST = DriverField("dst", "CUdeviceptr dst", Int64ul, "dst")
_SRC = DriverField("src", "CUdeviceptr src", Int64ul, "src")


def _memset_fields(count_type, last=DriverField("reserved1", "size_t reserved1", Int64ul, None)):
    """The memset kernels' parameter block: dst, value, count (in the layout's unit), and
    a last word (reserved, or a 2D memset's pitch)."""
    return (_DST, DriverField("value", "unsigned int value", Int32ul, "value"),
            DriverField("reserved0", "unsigned int reserved0", Int32ul, None),
            DriverField("count", count_type, Int64ul, "units"), last)


LAYOUTS = (
    # 32-byte block, 512 threads: 4 words (16 B) per thread. The value is the call's value
    # repeated to 32 bits (0x5A -> 0x5a5a5a5a, D16 0xbeef -> 0xbeefbeef), the count is in
    # 32-bit words (N / 4 for D8, N / 2 for D16, N for D32). The grid is the floor of
    # count / 2048 (0x18c0 -> 3, 0x1718 -> 2, 0x1300 -> 2, 0x800 -> 1), and 1 below that
    # (0x7ff, 0x481, 0x480 words), where the block is smaller too: 288 threads for 0x480
    # and 0x481 words (memset-sizes). Run for a dst and byte count both multiples of 4,
    # and for a 2D memset whose rows touch (dstPitch = Width x its element: copies-2d's
    # D2D32 of 128 rows of 4096 B ran it for all of them, 0x20000 words).
    Layout(
        name="memset of 32-bit words", operation="memset",
        calls=("cuMemsetD8", "cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32",
               "cuMemsetD32Async", "cuMemsetD2D32Async"),
        blocks=((512, 1, 1), (288, 1, 1)), unit=4, align=(4, None),
        # (up to 0x40000c words: graph_copies.py's cuMemsetD8 of 16 MiB + 48 B, grid 2048)
        grid=GridRule(2048, "floor1", 0x480, 0x40000c),
        fields=_memset_fields("size_t count (32-bit words)"),
        no_count=None,
        seen=(("memcpy-memset", 789, "cuMemsetD8"), ("launch-paths", 793, "cuMemsetD32"),
              ("graph-replay", 775, "cuMemsetD8"), ("builtin-vadd", 806, "cuMemsetD32"),
              ("jax-jit", 953, "cuMemsetD8Async"),
              ("jax-jit", 1382, "cuMemsetD32Async"),
              ("torch-libs", 4141, "cuMemsetD8Async"), ("torch-libs", 4204, "cuMemsetD8Async"),
              ("graph-copies", 986, "cuMemsetD8"),
              # memset_sizes.py: 0x1200 B (block 288), 0x1ffc B (grid 1), D16 of 0x20000 B
              ("memset-sizes", 939, "cuMemsetD8Async"),
              ("memset-sizes", 945, "cuMemsetD8Async"),
              ("memset-sizes", 990, "cuMemsetD16Async"),
              ("copies-2d", 824, "cuMemsetD2D32Async")),
        fits=("words",)),
    # 32-byte block, one block of threads per row: a 2D memset whose rows do not touch
    # (dstPitch above the row's bytes). dst and value as above, the count the row's 32-bit
    # words (Width / 4 for D8, Width for D32), then dstPitch in bytes; grid 1 x Height, the
    # block 32, 64 or 256 threads for rows of 64, 250 and 1024 words (its rule is not
    # established: not checked). Seen for rows of 0x100 to 0x1000 B, 64 to 300 of them,
    # dst, pitch and row bytes multiples of 4 (captures/copies-2d).
    Layout(
        name="2D memset of 32-bit words", operation="memset",
        calls=("cuMemsetD2D8Async", "cuMemsetD2D32Async"),
        blocks=((32, 1, 1), (64, 1, 1), (256, 1, 1)), unit=4, align=(4, None),
        grid=GridRule(None, "rows", 64, 300),
        fields=_memset_fields("size_t count (32-bit words of a row)",
                              DriverField("pitch", "size_t pitch (bytes)", Int64ul, "pitch")),
        no_count=None,
        seen=(("copies-2d", 766, "cuMemsetD2D8Async"), ("copies-2d", 779, "cuMemsetD2D8Async"),
              ("copies-2d", 797, "cuMemsetD2D8Async"), ("copies-2d", 811, "cuMemsetD2D32Async")),
        fits=("words",)),
    # 32-byte block, 512 threads, the same fields, but the count is in bytes: what the driver
    # runs when the dst or the byte count is not a multiple of 4 (cuDNN's workspace clears
    # of 0xf01a7 B in a real training job, scripts/corpus/train_loader.py). The value is the
    # call's repeated to 32 bits as above (D8 0x5a, 0xa5 and 0; D16 0xbeef). The grid is the
    # floor of bytes / 8192 (0x180eb -> 12, 0xf01a7 -> 120, 0x39845b -> 460), and 1 below
    # that (0x1fff, 0x2000 .. 0x2002).
    Layout(
        name="memset of bytes", operation="memset",
        calls=("cuMemsetD8", "cuMemsetD8Async", "cuMemsetD16Async"),
        blocks=((512, 1, 1),), unit=1, align=(1, None),
        grid=GridRule(8192, "floor1", 0x1fff, 0x39845b),
        fields=_memset_fields("size_t count (bytes)"),
        no_count=None,
        seen=(("memset-sizes", 957, "cuMemsetD8Async"),
              ("memset-sizes", 969, "cuMemsetD8Async"),
              ("memset-sizes", 966, "cuMemsetD8"),
              ("memset-sizes", 987, "cuMemsetD16Async")),
        fits=("tail", "unaligned")),
    # 24-byte block, 256 threads: one 32-bit word per thread, the count in words, the grid
    # the ceiling of count / 256 (1000 -> 4, 4095 -> 16). The whole copy up to 512 KiB, and
    # the rest after the 16-byte kernel's blocks above 1 MiB (torch-copies), for dst, src
    # and byte count all multiples of 4 (dst +4 and +8 from 16: copy-sizes 1140, 1143).
    Layout(
        name="copy of 32-bit words", operation="copy",
        calls=("cuMemcpyDtoDAsync", GRAPH_MEMCPY, "cuMemcpyDtoHAsync", "cuMemcpyDtoH",
               "cuMemcpyHtoDAsync", "cuMemcpyAsync"),
        blocks=((256, 1, 1),), unit=4, align=(4, 4),
        # (up to 0x40000c words: a graph node of 16 MiB + 48 B, one kernel, grid 16385)
        grid=GridRule(256, "ceil", 1, 0x40000c),
        fields=(_DST, _SRC,
                DriverField("count", "size_t count (32-bit words)", Int64ul, "units")),
        no_count=None,
        seen=(("torch-eager", 1724, "cuMemcpyDtoDAsync"),
              ("torch-graph", 1933, "cuMemcpyDtoDAsync"),
              ("jax-jit", 1105, "cuMemcpyDtoDAsync"), ("jax-jit", 1134, "cuMemcpyDtoDAsync"),
              ("torch-copies", 1798, "cuMemcpyDtoDAsync"),
              ("copy-sizes", 1140, "cuMemcpyDtoDAsync"),
              ("torch-copies", 1991, "cuMemcpyDtoDAsync"),
              ("torch-copies", 2097, "cuMemcpyDtoDAsync"),
              # jax_cmdbuf.py (XLA's WHILE command buffers; docs/graphs.md): nodes of 4 to
              # 32768 B
              ("jax-cmdbuf", 9966, GRAPH_MEMCPY), ("jax-cmdbuf", 10317, GRAPH_MEMCPY),
              # graph_copies.py: nodes of 1 MiB + 64 B and 16 MiB + 48 B, each one kernel
              ("graph-copies", 1168, GRAPH_MEMCPY), ("graph-copies", 1170, GRAPH_MEMCPY),
              # managed_copies.py: out of managed memory to the host, 4 B to 64 KiB (dst:
              # see NOT_COMPARED above)
              ("managed-copies", 791, "cuMemcpyDtoHAsync"),
              ("managed-copies", 806, "cuMemcpyDtoHAsync"),
              ("managed-copies", 826, "cuMemcpyDtoHAsync"),
              ("managed-copies", 841, "cuMemcpyDtoHAsync"),
              ("managed-copies", 846, "cuMemcpyDtoH"), ("managed-copies", 849, "cuMemcpyDtoH"),
              # copies_2d.py: into managed memory from pageable host memory (NOT_COMPARED)
              ("copies-2d", 905, "cuMemcpyHtoDAsync"), ("copies-2d", 919, "cuMemcpyHtoDAsync"),
              # copy_sizes.py unified: cuMemcpyAsync runs the stream copy's kernels and splits
              ("copy-sizes-unified", 1084, "cuMemcpyAsync"),
              ("copy-sizes-unified", 1119, "cuMemcpyAsync")),
        fits=("words",)),
    # 24-byte block, 256 threads, one byte per thread: the word kernel's fields with the
    # count in bytes, the grid the ceiling of bytes / 256 (7 -> 1, 0x3ff -> 4, 0x1000 -> 16,
    # 0x1001 -> 17). Run for a byte count not a multiple of 4 below 0x400 B, for a copy
    # from or to an address not a multiple of 4 (0x1000 and 0x1001 B), and for the 1 or 3 B
    # left after the 16-byte kernel's blocks (captures/copy-sizes); torch-copies' 1-byte
    # copies (H200) fit it too.
    Layout(
        name="copy of bytes", operation="copy",
        calls=("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync"),
        blocks=((256, 1, 1),), unit=1, align=(1, 1),
        grid=GridRule(256, "ceil", 1, 0x1001),
        fields=(_DST, _SRC, DriverField("count", "size_t count (bytes)", Int64ul, "units")),
        no_count=None,
        seen=(("copy-sizes", 1087, "cuMemcpyDtoDAsync"), ("copy-sizes", 1102, "cuMemcpyDtoDAsync"),
              ("copy-sizes", 1134, "cuMemcpyDtoDAsync"), ("copy-sizes", 1155, "cuMemcpyDtoDAsync"),
              ("copy-sizes", 1131, "cuMemcpyDtoDAsync"),
              ("torch-copies", 1268, "cuMemcpyDtoDAsync"),
              ("managed-copies", 816, "cuMemcpyDtoHAsync"),
              ("managed-copies", 831, "cuMemcpyDtoHAsync"),
              ("copy-sizes-unified", 1063, "cuMemcpyAsync"),
              ("copy-sizes-unified", 1113, "cuMemcpyAsync")),
        fits=("tail", "unaligned")),
    # 40-byte block, 256 threads: the copy's 32-bit words, then its last 1 to 3 bytes: dst,
    # src, reserved0 (0 in every launch), the count in words (bytes / 4) and the tail in
    # bytes (bytes % 4); the grid the ceiling of words / 256, plus one block (0x401 B -> 2,
    # 0x40003 B -> 257, 0x7ffff B -> 513). Run for a byte count not a multiple of 4 from
    # 0x401 B, dst and src multiples of 4 (copy-sizes).
    Layout(
        name="copy of words and a tail", operation="copy",
        calls=("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync"),
        blocks=((256, 1, 1),), unit=4, align=(4, 4),
        grid=GridRule(256, "ceil+1", 0x100, 0x1ffff),
        fields=(_DST, _SRC, DriverField("reserved0", "size_t reserved0", Int64ul, None),
                DriverField("count", "size_t count (32-bit words)", Int64ul, "units"),
                DriverField("tail", "size_t tail (bytes after the words)", Int64ul, "tail")),
        no_count=None,
        seen=(("copy-sizes", 1108, "cuMemcpyDtoDAsync"), ("copy-sizes", 1114, "cuMemcpyDtoDAsync"),
              ("copy-sizes", 1123, "cuMemcpyDtoDAsync"),
              ("managed-copies", 821, "cuMemcpyDtoHAsync"),
              ("copy-sizes-unified", 1087, "cuMemcpyAsync")),
        fits=("tail",)),
    # 56-byte block, 128 threads: a 2D copy from device to device memory (cuMemcpy2DAsync,
    # CUDA_MEMCPY2D both DEVICE, no X or Y offset): dst, src, a row's bytes, the rows,
    # dstPitch, srcPitch and a word 0; grid the ceiling of the row's bytes / 512 (one word a
    # thread) x Height: 256 B -> 1, 1000 B -> 2 (captures/copies-2d, which holds the struct
    # since the shim copies it, session 43). The HtoD and DtoH ones ran on a copy engine.
    Layout(
        name="2D copy", operation="copy", calls=("cuMemcpy2DAsync",),
        blocks=((128, 1, 1),), unit=1, align=(4, 4),
        grid=GridRule(512, "rows", 64, 100),
        fields=(_DST, _SRC, DriverField("count", "size_t count (bytes of a row)", Int64ul, "units"),
                DriverField("rows", "size_t rows", Int64ul, "rows"),
                DriverField("pitch", "size_t dst pitch (bytes)", Int64ul, "pitch"),
                DriverField("src_pitch", "size_t src pitch (bytes)", Int64ul, "src_pitch"),
                DriverField("reserved0", "size_t reserved0", Int64ul, None)),
        no_count=None,
        seen=(("copies-2d", 845, "cuMemcpy2DAsync"), ("copies-2d", 866, "cuMemcpy2DAsync")),
        fits=("words",)),
    # 16-byte block, 256 threads: no count in constant bank 0. Each block copies 4096 B
    # (256 threads x 16 B): the grid is the call's whole 4096-byte blocks, and a 24-byte
    # kernel copies the rest (torch-copies 4194300 B: 1023 blocks, then 0x3ff words).
    Layout(
        name="copy with no count", operation="copy",
        calls=("cuMemcpyDtoD", "cuMemcpyDtoDAsync", GRAPH_MEMCPY, "cuMemcpyDtoHAsync",
               "cuMemcpyAsync"),
        blocks=((256, 1, 1),), unit=16, align=(16, 4),
        grid=GridRule(256, "floor", 0x10000, 0x100000),
        fields=(_DST, _SRC),
        no_count=("constant bank 0 holds none (the block is dst, src): the grid carries it, "
                  "4096 B a block, and is checked instead"),
        seen=(("memcpy-memset", 783, "cuMemcpyDtoD"),
              ("torch-copies", 1984, "cuMemcpyDtoDAsync"),
              ("torch-copies", 1990, "cuMemcpyDtoDAsync"),
              ("torch-copies", 2096, "cuMemcpyDtoDAsync"),
              # graph_copies.py: nodes of 1 MiB and 4 MiB (XLA's weight copies are so)
              ("graph-copies", 1167, GRAPH_MEMCPY), ("graph-copies", 1169, GRAPH_MEMCPY),
              ("managed-copies", 811, "cuMemcpyDtoHAsync"),
              ("copy-sizes-unified", 1105, "cuMemcpyAsync")),
        fits=None),
)
SPLITS = (
    Split("memset", 0x1200, 0x1000030, (("memset of 32-bit words", "all"),),
          seen=(("memset-sizes", 0x1200), ("torch-libs", 0x2000), ("torch-libs", 0x4c00),
                ("ddp-2rank", 0x5c60), ("jax-loops", 0x800000), ("graph-copies", 0x1000030)),
          calls=None, whole_blocks=None, fits=("words",)),
    # a dst or byte count not a multiple of 4: the byte kernel, the whole call (memset-sizes;
    # 0x1000 B and less ran no kernel: inline-to-memory methods)
    Split("memset", 0x1fff, 0x39845b, (("memset of bytes", "all"),),
          seen=(("memset-sizes", 0x1fff), ("memset-sizes", 0x39845b)),
          calls=None, whole_blocks=None, fits=("tail", "unaligned")),
    # a 2D memset whose rows do not touch: its bytes are a row's (Width x its element); one
    # whose rows touch: all of them, as a 1D memset (seen for 0x80000 B)
    Split("memset", 0x100, 0x1000, (("2D memset of 32-bit words", "all"),),
          seen=(("copies-2d", 0x100), ("copies-2d", 0x3e8), ("copies-2d", 0x1000)),
          calls=("cuMemsetD2D8Async", "cuMemsetD2D32Async"), whole_blocks=None,
          fits=("words",)),
    Split("memset", 0x80000, 0x80000, (("memset of 32-bit words", "all"),),
          seen=(("copies-2d", 0x80000),), calls=("cuMemsetD2D32Async",), whole_blocks=None,
          fits=("words",)),
    # a 2D copy between device memory: a row's bytes
    Split("copy", 0x100, 0x3e8, (("2D copy", "all"),),
          seen=(("copies-2d", 0x100), ("copies-2d", 0x3e8)), calls=("cuMemcpy2DAsync",),
          whole_blocks=None, fits=("words",)),
    Split("copy", 4, 0x80000, (("copy of 32-bit words", "all"),),
          seen=(("jax-jit", 4), ("ddp-2rank", 0x80000)), calls=None, whole_blocks=None,
          fits=("words",)),
    # a byte count not a multiple of 4 (copy-sizes): below 0x400 B one byte kernel, from
    # 0x401 B one kernel of words and a tail; an address not a multiple of 4: bytes
    Split("copy", 1, 0x3ff, (("copy of bytes", "all"),),
          seen=(("torch-copies", 1), ("copy-sizes", 2), ("copy-sizes", 0x3ff),
                ("managed-copies", 3), ("copy-sizes-unified", 0x3ff)),
          calls=("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync"), whole_blocks=None,
          fits=("tail",)),
    Split("copy", 0x401, 0x7ffff, (("copy of words and a tail", "all"),),
          seen=(("copy-sizes", 0x401), ("copy-sizes", 0x7ffff), ("managed-copies", 0x1001),
                ("copy-sizes-unified", 0x401), ("copy-sizes-unified", 0x7ffff)),
          calls=("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync"), whole_blocks=None,
          fits=("tail",)),
    Split("copy", 0x1000, 0x1001, (("copy of bytes", "all"),),
          seen=(("copy-sizes", 0x1000), ("copy-sizes", 0x1001), ("managed-copies", 0x1000),
                ("copy-sizes-unified", 0x1000), ("copy-sizes-unified", 0x1001)),
          calls=("cuMemcpyDtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyAsync"), whole_blocks=None,
          fits=("unaligned",)),
    Split("copy", 0x100000, 0x1000030,
          (("copy with no count", "blocks"), ("copy of 32-bit words", "rest")),
          seen=(("memcpy-memset", 0x100000), ("torch-copies", 0x1000030)),
          calls=("cuMemcpyDtoD", "cuMemcpyDtoDAsync"), whole_blocks=None, fits=("words",)),
    Split("copy", 0x100001, 0x100003,
          (("copy with no count", "blocks"), ("copy of bytes", "rest")),
          seen=(("copy-sizes", 0x100001), ("copy-sizes", 0x100003),
                ("copy-sizes-unified", 0x100001), ("copy-sizes-unified", 0x100003)),
          calls=("cuMemcpyDtoDAsync", "cuMemcpyAsync"), whole_blocks=None, fits=("tail",)),
    # out of managed memory to the host, 1 MiB: one 16-byte kernel, nothing left over
    # (managed-copies; larger counts not recorded)
    Split("copy", 0x100000, 0x100000,
          (("copy with no count", "blocks"), ("copy of 32-bit words", "rest")),
          seen=(("managed-copies", 0x100000),),
          calls=("cuMemcpyDtoHAsync",), whole_blocks=None, fits=("words",)),
    # a graph's MEMCPY node: whole 4096-byte blocks all by the 16-byte kernel, any other
    # count all by the word kernel (not blocks and then the rest, as on a stream)
    Split("copy", 0x100000, 0x400000, (("copy with no count", "all"),),
          seen=(("graph-copies", 0x100000), ("graph-copies", 0x400000)),
          calls=(GRAPH_MEMCPY,), whole_blocks=True, fits=("words",)),
    Split("copy", 0x100040, 0x1000030, (("copy of 32-bit words", "all"),),
          seen=(("graph-copies", 0x100040), ("graph-copies", 0x1000030)),
          calls=(GRAPH_MEMCPY,), whole_blocks=False, fits=("words",)),
)
# construct Structs of the parameter blocks, made from the tables (one declaration each)
STRUCTS = {lay.name: Struct(*(f.name / f.construct for f in lay.fields)) for lay in LAYOUTS}
PARAM_BYTES = {lay.name: STRUCTS[lay.name].sizeof() for lay in LAYOUTS}
_COMPILED = {name: s.compile() for name, s in STRUCTS.items()}
_OFFSETS = {}
for _lay in LAYOUTS:
    _at = 0
    for _f in _lay.fields:
        _OFFSETS[_lay.name, _f.name] = _at
        _at += _f.construct.sizeof()
del _lay, _at, _f

def kernel_name(operation, base):
    """The name a driver kernel is shown and tallied under: `[driver memset, cuMemsetD8Async]`."""
    return f"[driver {operation}, {base}]"


def _arg(call, what):
    for key in API_ARGS[what]:
        if key in call.args:
            return call.args[key]
    return None


def _call_bytes(call, operation, esize):
    if operation == "memset":
        n = _arg(call, "N")
        return None if n is None else n * esize
    return _arg(call, "bytes")


def _value32(value, esize):
    """The call's memset value (its low 8, 16 or 32 bits: the rest of the recorded register
    word is not the value) repeated to 32 bits, as the kernel reads it."""
    v = bits(value, 0, 8 * esize)
    return int.from_bytes(v.to_bytes(esize, "little") * (4 // esize), "little")


def _fit(nbytes, dst, src):
    """The call's fit (FITS), or None when its arguments are not at hand."""
    if nbytes is None or dst is None:
        return None
    if dst % 4 or (src is not None and src % 4):
        return "unaligned"
    return "tail" if nbytes % 4 else "words"


def _layout(operation, size, block, fit=None):
    """The layout of this shape; of two that share it, the one seen for the call's `fit`."""
    block = tuple(block or ())
    for lay in LAYOUTS:
        if lay.operation == operation and PARAM_BYTES[lay.name] == size and \
                block in lay.blocks and (fit is None or lay.fits is None or fit in lay.fits):
            return lay
    return None


def check(call, s, hw_bytes, resolve=None, at_index=None, esize=None):
    """What a kernel the driver ran for `call` is and what of it matches the call, or None
    when `call` is not one whose kernels are the driver's copies or memsets.

    {'kernel', 'driver_kernel', 'args', 'verified', 'checked', 'unchecked', 'differences',
    'why'}: `verified` is True/False over the fields compared, None when none could be
    (`why` names what is missing); `unchecked` lists {'field', 'why'} left out."""
    base = call.base
    what = CALLS.get(base)
    if what is None:
        return None
    operation, esize = what[0], what[1] or esize
    name = kernel_name(operation, base)
    out = {"kernel": {"name": name, "mangled": None, "module": None, "image_call": None,
                      "cubin_arch": None},
           "driver_kernel": None, "args": None, "verified": None, "checked": [],
           "unchecked": [], "differences": [], "why": None}
    nbytes = _call_bytes(call, operation, esize)
    out["driver_kernel"] = {"operation": operation, "layout": None, "bytes": nbytes,
                            "element_size": esize if operation == "memset" else None,
                            "span": None, "source": "docs/driver-kernels.md"}
    own = f"the driver's own {operation} kernel for {base}"
    rows = None     # a 2D call's (Height, dstPitch, srcPitch) where its kernel runs by rows
    given = {}      # dst and src where the call's arguments do not hold them (2D copies)
    if base in CALLS_2D:
        if operation == "copy":
            p = getattr(call, "copy_params", None)
            why = _copy_2d_why(p, base)
            if why:
                out["why"] = f"{own}: {why}: not checked"
                return out
            given = {"dst": p["dstDevice"], "src": p["srcDevice"]}
            shape = [p["WidthInBytes"], p["Height"], p["dstPitch"], p["srcPitch"]]
            row = shape[0]
        else:
            shape = [call.args.get(k) for k in ("Width", "Height", "dstPitch")] + [None]
            if None in shape[:3]:
                out["why"] = f"{own}: the capture's record of {base} lacks its arguments"
                return out
            row = shape[0] * esize
        height, pitch, src_pitch = shape[1:]
        if operation == "memset" and pitch == row:  # rows that touch: one memset of them all
            nbytes = row * height
        else:               # a row's bytes: the kernel's grid has a row of blocks per row
            nbytes, rows = row, (height, pitch, src_pitch)
            out["driver_kernel"]["rows"] = height
        out["driver_kernel"]["bytes"] = nbytes
    params = s.get("params")
    if not params or not params.get("uploaded") or hw_bytes is None:
        out["why"] = (f"{own}: the capture holds no upload of its parameter block to constant "
                      "bank 0, so there is nothing to read dst, src, value or count from")
        return out
    size, block = params["size"], s.get("block")
    dst, src = given.get("dst", _arg(call, "dst")), given.get("src", _arg(call, "src"))
    fit = _fit(nbytes, dst, src if operation == "copy" else None)
    if rows is not None and any(x % 4 for x in rows[1:] if x is not None):     # pitches
        fit = "unaligned"
    lay = _layout(operation, size, block, fit)
    if lay is None:
        out["why"] = (f"{own}: no {operation} kernel with a {size}-byte parameter block and "
                      f"block {'x'.join(map(str, block or ()))} is in the recordings "
                      "(docs/driver-kernels.md): its layout is not known")
        return out
    out["driver_kernel"]["layout"] = lay.name
    if base not in lay.calls:
        out["why"] = (f"{own}: the recordings hold no {base} run as this kernel (the "
                      f"{lay.name} layout was seen for {', '.join(lay.calls)} only), so how it "
                      "lays out its arguments is not established")
        return out
    value = _arg(call, "value")
    if nbytes is None or dst is None or (operation == "copy" and src is None) or \
            (operation == "memset" and value is None):
        out["why"] = f"{own}: the capture's record of {base} lacks its arguments"
        return out
    odd = [f"{label} is not a multiple of {a} B" for v, a, label in
           ((dst, lay.align[0], "dst"), (src, lay.align[1], "src")) if a and v % a]
    if odd:
        out["why"] = (f"{own}: its {' and its '.join(odd)}, and the {lay.name} layout was seen "
                      f"only for dst at multiples of {lay.align[0]} B" +
                      (f" and src at multiples of {lay.align[1]} B" if lay.align[1] else "") +
                      " (another kernel may run): not checked")
        return out
    split = _split(operation, nbytes, base, fit)
    if split is None:
        seen = ", ".join(f"{x.lo:#x}..{x.hi:#x}" for x in SPLITS if x.operation == operation
                         and (x.calls is None or base in x.calls))
        out["why"] = (f"{own}: no {operation} of {nbytes:#x} B by {base} is in the recordings "
                      f"(they hold {seen} B), and how the driver splits one among its kernels "
                      "is not established: not checked")
        return out
    span = dict(split.parts).get(lay.name)
    if span is None:
        out["why"] = (f"{own}: a {operation} of {nbytes:#x} B was seen run as "
                      f"{' then '.join(n for n, _ in split.parts)}, not as the {lay.name} layout")
        return out
    blocks = nbytes // BLOCK_BYTES * BLOCK_BYTES
    start, length = {"all": (0, nbytes), "blocks": (0, blocks),
                     "rest": (blocks, nbytes - blocks)}[span]
    tail = any(f.holds == "tail" for f in lay.fields)     # (its words, then the rest)
    if length % lay.unit and not tail:
        out["why"] = (f"{own}: its byte count is not a multiple of {lay.unit} B"
                      + (f" ({length} B for this kernel)" if span != "all" else "") +
                      f", and the {lay.name} layout was seen only for multiples"
                      " (another kernel may run): not checked")
        return out
    fields = _COMPILED[lay.name].parse(hw_bytes[:PARAM_BYTES[lay.name]])
    units = max(1, length // lay.unit)
    expect = {"dst": dst + start, "src": None if src is None else src + start, "units": units,
              "tail": length % lay.unit, "rows": rows[0] if rows else None,
              "pitch": rows[1] if rows else None, "src_pitch": rows[2] if rows else None}
    if operation == "memset":
        expect["value"] = _value32(value, esize)
    if base in NOT_COMPARED:
        side, why = NOT_COMPARED[base]
        expect[side] = None
        out["unchecked"].append({"field": side, "why": why})
    out["driver_kernel"]["span"] = {"offset": start, "bytes": length}
    base_off = params["offset"]
    args, checked, diffs = [], out["checked"], out["differences"]
    for i, f in enumerate(lay.fields):
        off, width = _OFFSETS[lay.name, f.name], f.construct.sizeof()
        got = fields[f.name]
        want = expect.get(f.holds) if f.holds else None
        a = {"index": i, "type": f.ctype, "offset": off, "size": width,
             "hex": hw_bytes[off:off + width].hex(), "value": got,
             "api_hex": want.to_bytes(width, "little").hex() if want is not None else None,
             "field": f.name}
        if f.holds in ("dst", "src") and resolve is not None:
            r = resolve(got, at_index)
            if r is not None:
                a["points_to"] = r
        args.append(a)
        if want is None:
            continue
        checked.append(f.name)
        if got != want:
            diffs.append({"field": f"{f.name} @c[0x0][{base_off + off:#x}]", "api": f"{want:#x}",
                          "qmd": f"{got:#x}"})
    out["args"] = args
    if lay.no_count:
        out["unchecked"].append({"field": "count", "why": lay.no_count})
    _check_grid(lay, units, s.get("grid"), out, rows[0] if rows else None)
    out["verified"] = not diffs
    return out


def split_calls(x):
    """The calls a Split answers: its `calls`, or (None) every call but the 2D / 3D ones,
    whose bytes are a row's and which were seen only where named."""
    return x.calls if x.calls is not None else tuple(c for c in CALLS if c not in CALLS_2D)


def _split(operation, nbytes, base, fit=None):
    whole = not nbytes % BLOCK_BYTES
    for x in SPLITS:
        if x.operation == operation and x.lo <= nbytes <= x.hi and base in split_calls(x) and \
                (x.whole_blocks is None or x.whole_blocks == whole) and \
                (fit is None or x.fits is None or fit in x.fits):
            return x
    return None


def _copy_2d_why(p, base):
    """Why a 2D or 3D copy's kernel is not checked (None: it can be): its struct absent,
    3D, or other than the device-to-device rows without offsets the recordings hold."""
    if p is None:
        return (f"a {'2D' if '2D' in base else '3D'} copy, whose pitches, width and height "
                "are in the CUDA_MEMCPY struct the call points to; the capture lacks it "
                "(recorded before the shim copied it, or unreadable)")
    if "Depth" in p:
        return "a 3D copy: no recording holds one run as a kernel"
    if CU_MEMORYTYPE.get(p["srcMemoryType"]) != "DEVICE" or \
            CU_MEMORYTYPE.get(p["dstMemoryType"]) != "DEVICE":
        return ("a 2D copy other than device to device: the recordings hold those run on a "
                "copy engine only")
    if p["srcXInBytes"] or p["srcY"] or p["dstXInBytes"] or p["dstY"]:
        return "a 2D copy with an X or Y offset: no recording holds one"
    return None


def _check_grid(lay, units, grid, out, rows=None):
    rule = lay.grid
    if rule is None:
        return
    if rule.rounding == "rows":
        if rows is None or not rule.lo <= rows <= rule.hi:
            out["unchecked"].append({"field": "grid", "why": (
                f"seen only for {rule.lo:,} to {rule.hi:,} rows (grid.y the rows), and this "
                f"is {rows} rows")})
            return
        want = [1 if rule.per_block is None else -(-units // rule.per_block), rows, 1]
        out["checked"].append("grid")
        if list(grid or ()) != want:
            out["differences"].append({"field": "grid", "api": want, "qmd": grid})
        return
    if not rule.lo <= units <= rule.hi:
        out["unchecked"].append({"field": "grid", "why": (
            f"seen only for counts of {rule.lo:,} to {rule.hi:,} units ({rule.rounding} of "
            f"count / {rule.per_block:,}), and this is {units:,} units of {lay.unit} B")})
        return
    n = -(-units // rule.per_block) if rule.rounding in ("ceil", "ceil+1") else \
        units // rule.per_block
    if rule.rounding == "floor1":
        n = max(1, n)
    elif rule.rounding == "ceil+1":     # one block more (the tail's)
        n += 1
    want = [n, 1, 1]
    out["checked"].append("grid")
    if list(grid or ()) != want:
        out["differences"].append({"field": "grid", "api": want, "qmd": grid})


# -- conditional nodes -------------------------------------------------------------------------
# The kernel the driver runs for a CUDA graph's CONDITIONAL node (docs/graphs.md), measured on
# captures/jax-cmdbuf (XLA: three WHILE nodes, 44 launches) and captures/cond-nodes
# (cuda-python: IF true and false, SWITCH of 3 bodies, WHILE of 4, 0 and 3 trips, an IF
# inside a WHILE body): grid 1x1x1, block 32x1x1, one program in none of the program's
# modules, a 32-byte parameter block. Per replay: one at the end of each body's
# DEPENDENT_QMD chain and one for a node inside a body, where it sits in the chain (word0
# non-zero: it numbers the exec's conditional kernels), and one for the top-level node,
# sent last (word0 = 0). All conditional kernels of an exec have the same pointer0 and
# pointer1 (its conditional state in driver memory); pointer2 is one for the process. What
# it does is not in the capture: a WHILE body's later iterations are not in the pushbuffer,
# so the GPU launches them.
ConditionalField = namedtuple("ConditionalField", "name ctype construct")
CONDITIONAL_FIELDS = (
    ConditionalField("word0", "unsigned int word0 (0: the top-level node's own, sent last; "
                     "else a body's end or a nested node's own)", Int32ul),
    ConditionalField("word1", "unsigned int word1 (1 in every launch seen)", Int32ul),
    ConditionalField("pointer0", "void *pointer0 (driver memory, one per graph exec)",
                     Int64ul),
    ConditionalField("pointer1", "void *pointer1 (driver memory, one per graph exec)",
                     Int64ul),
    ConditionalField("pointer2", "void *pointer2 (driver memory, one per process)", Int64ul),
)
CONDITIONAL_STRUCT = Struct(*(f.name / f.construct for f in CONDITIONAL_FIELDS))
CONDITIONAL_SHAPE = {"grid": (1, 1, 1), "block": (32, 1, 1),
                     "param_bytes": CONDITIONAL_STRUCT.sizeof()}
CONDITIONAL_SEEN = (("jax-cmdbuf", 9967), ("jax-cmdbuf", 10318), ("jax-cmdbuf", 10479),
                    ("cond-nodes", 960), ("cond-nodes", 1009))
# word0 of the kernel that ends body b of a node of (type, size bodies), in an exec with
# that one conditional node, as measured (captures/cond-nodes, jax-cmdbuf); it fits
# 2 * size - b. With more conditional nodes the numbering differs (an IF inside a WHILE
# body: 2 for the IF's own kernel, 5 for its body's end, 6 for the WHILE body's end), and a
# (type, size) not here was never seen: word0 is then not checked.
CONDITIONAL_BODY_END = {
    ("IF", 1): {0: 2},
    ("WHILE", 1): {0: 2},
    ("SWITCH", 3): {0: 6, 1: 5, 2: 4},
}


def conditional_fields(s, hw_bytes):
    """The parameter block of the driver's conditional-node kernel, parsed, when this QMD
    has its grid, block and block size (CONDITIONAL_SHAPE) and its pointers are set; else
    None. Asked only for a replay's QMD that matched no node, in an exec with conditional
    nodes."""
    params = s.get("params")
    shape = CONDITIONAL_SHAPE
    if not params or not params.get("uploaded") or hw_bytes is None or \
            params["size"] != shape["param_bytes"] or \
            tuple(s.get("grid") or ()) != shape["grid"] or \
            tuple(s.get("block") or ()) != shape["block"]:
        return None
    fields = CONDITIONAL_STRUCT.parse(hw_bytes[:shape["param_bytes"]])
    if not (fields.pointer0 and fields.pointer1 and fields.pointer2):
        return None
    return fields


def conditional_kernel(fields, hw_bytes, where, role):
    """The attribution of the driver's kernel for a conditional node (fields from
    conditional_fields): named, its fields shown, nothing checked yet (decoders/cuda/
    graphdriver.py checks which node and body). `where`: which node; `role`: which of its
    kernels (text)."""
    args, at = [], 0
    for i, f in enumerate(CONDITIONAL_FIELDS):
        width = f.construct.sizeof()
        args.append({"index": i, "type": f.ctype, "offset": at, "size": width,
                     "hex": hw_bytes[at:at + width].hex(), "value": fields[f.name],
                     "api_hex": None, "field": f.name})
        at += width
    return _unchecked("[driver kernel, conditional node]", "conditional", "conditional node",
                      "docs/graphs.md", f"the driver's own kernel for {where} ({role})", args)


def _unchecked(name, operation, layout, source, why, args=None):
    """The attribution of a kernel of the driver's own that nothing is checked against:
    named, its `driver_kernel` (no bytes, element size or span), `why`."""
    return {"kernel": {"name": name, "mangled": None, "module": None, "image_call": None,
                       "cubin_arch": None},
            "driver_kernel": {"operation": operation, "layout": layout, "bytes": None,
                              "element_size": None, "span": None, "source": source},
            "args": args, "verified": None, "checked": [], "unchecked": [], "differences": [],
            "why": why}


def chained_kernel(base, first, program, device_runtime):
    """The attribution of a kernel QMD that the QMD of a launch call's kernel (`first`, its
    name) names as its DEPENDENT_QMD, running another `program`: a kernel of the driver's
    own that runs after the call's (captures/cdp: a grid of one thread after a kernel of a
    module linked with the device runtime, kernels/corpus_cdp.cu). The call's grid, block
    and arguments are not its own: nothing to check it against."""
    why = (f"the driver's own kernel, chained to by {first}'s QMD (DEPENDENT_QMD), program "
           f"{program:#x}: not {base}'s, not checked")
    if device_runtime:
        why += (f"; {first}'s module has the device runtime: launches from the GPU are not "
                "in the capture")
    return _unchecked(f"[driver kernel, chained after {first}]", "chained", None,
                      "docs/driver-kernels.md", why)


def before_entry_kernel(base, kernel, device_runtime):
    """The attribution of a kernel QMD whose doorbell rang inside a launch call `base`
    before the shim wrote its entry record: the shim's lookups on the call's kernel (its
    parameter layout) made libcuda load the kernel's module, and the driver ran this
    kernel then (captures/cdp: the device runtime's set-up). Not the call's kernel: not
    checked."""
    of = f"{kernel}'s" if kernel else "the kernel's"
    why = (f"the driver's own kernel, rung inside {base} before its entry record while the "
           f"shim's lookup loaded {of} module: not checked")
    if device_runtime:
        why += "; the module has the device runtime"
    name = f"[driver kernel, loading {kernel}]" if kernel else "[driver kernel, module load]"
    return _unchecked(name, "module load", None, "docs/driver-kernels.md", why)
