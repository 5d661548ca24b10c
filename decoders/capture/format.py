"""The trace-launch capture file, declared once (docs/capture-format.md).

The shim (shim/tracelaunch.c) writes this layout; shim/abi.h carries its numbers,
generated from these declarations by decoders/shimabi.py.

File = TL_FILE_HEADER (header_size bytes) + records, each 8-byte aligned:
TL_RECORD_HEADER, then a body whose layout depends on `type`. A record whose
`type` is still 0 was reserved but never published (the process died while
writing it, or the call never returned).
"""
from construct import (Aligned, Array, Bytes, Const, Int16ul, Int32sl, Int32ul, Int64sl,
                       Int64ul, PaddedString, Struct, this)

TL_MAGIC = b"TRACELNC"
TL_VERSION = 1               # what the tracer creates and the shim appends to
# Version 2: written by the tracer's exit step (writer.compact_capture), which stores each
# distinct module image once: a repeated image's API_ENTER record carries an IMAGE_REF
# section (TL_IMAGE_REF) in place of its IMAGE section. Everything else is version 1.
TL_VERSION_IMAGE_REFS = 2
TL_VERSIONS = (TL_VERSION, TL_VERSION_IMAGE_REFS)       # what the reader accepts
TL_HEADER_SIZE = 4096
TL_RECORD_SYNC = 0x52434C54  # "TLCR" little-endian: lets a reader resync after a hole
TL_ALIGN = 8

TL_FILE_HEADER_PREFIX = Struct(
    "magic" / Const(TL_MAGIC),
    "version" / Int32ul,
    "header_size" / Int32ul,
    "cursor" / Int64ul,          # next free byte; the shim reserves records by atomic add here
    "t_start_ns" / Int64ul,      # CLOCK_MONOTONIC when the tracer created the file
    "wall_ns" / Int64ul,         # CLOCK_REALTIME at the same moment
    "tracer_pid" / Int32ul,
    "flags" / Int32ul,
    "meta_len" / Int32ul,
    "reserved0" / Int32ul,
)
TL_FILE_HEADER = Struct(
    *TL_FILE_HEADER_PREFIX.subcons,
    "meta" / Bytes(this.meta_len),   # UTF-8 JSON: driver, GPU, command line (never eval'd)
)
TL_FILE_HEADER_FIXED = TL_FILE_HEADER_PREFIX.sizeof()   # bytes before `meta`
TL_CURSOR_OFFSET = 16

TL_RECORD_HEADER = Struct(
    "sync" / Int32ul,
    "length" / Int32ul,          # whole record, header included, multiple of 8
    "type" / Int16ul,            # TL_REC_*; 0 = reserved, never published
    "flags" / Int16ul,
    "pid" / Int32ul,
    "tid" / Int32ul,
    "seq" / Int32ul,             # per-process sequence number
    "t_start" / Int64ul,         # CLOCK_MONOTONIC ns
    "t_end" / Int64ul,
)
TL_RECORD_HEADER_SIZE = 40

# Record types. Numbers are part of the file format: never reuse one.
TL_REC = {
    1: "PROCESS_START", 2: "PROCESS_EXIT", 3: "OPEN", 4: "CLOSE", 5: "IOCTL", 6: "MMAP",
    7: "MUNMAP", 8: "MREMAP", 9: "MARK", 10: "SUBMISSION", 11: "STATS", 12: "END", 13: "NOTE",
    14: "API_ENTER", 15: "API_EXIT", 16: "WINDOW", 17: "PROCESS_ENV",
}
TL_REC_BY_NAME = {v: k for k, v in TL_REC.items()}

# TL_RECORD_HEADER.flags
TL_RF_COMPLETE = 0x1             # the call returned and its "after" copies are valid
TL_RF_CHILD = 0x2                # written by a forked child before its first exec

Padded8 = lambda n: Aligned(TL_ALIGN, Bytes(n))  # noqa: E731  (payload padded to 8)

TL_PROCESS_START = Struct(
    "ppid" / Int32ul, "how" / Int32ul,             # how: TL_START_*
    "exe_len" / Int32ul, "cmdline_len" / Int32ul,
    "exe" / Padded8(this.exe_len), "cmdline" / Padded8(this.cmdline_len))
TL_START = {1: "exec", 2: "fork"}

# PROCESS_ENV (issue 26): the launcher's rank variables of the process, written right after
# its PROCESS_START when at least one is set: "NAME=VALUE" entries, each NUL-terminated, in
# the order of the process's environment. Only the names below are read (never the rest of
# the environment); a value longer than TL_ENV_VALUE_MAX is cut there. A new record type
# (no version bump): a reader that predates it reports one unknown record per process and
# skips it; a capture without one simply has no ranks.
TL_PROCESS_ENV = Struct("env_len" / Int32ul, "reserved0" / Int32ul, "env" / Padded8(this.env_len))
TL_ENV_NAMES = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",   # torchrun
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",   # Open MPI
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",                              # srun
    "CUDA_VISIBLE_DEVICES")     # which GPUs the rank sees: its device 0 may be any of them
TL_ENV_VALUE_MAX = 256
TL_ENV_MAX = 2048               # bytes of entries at most (the shim's buffer)

TL_PROCESS_EXIT = Struct("status" / Int32sl, "reserved0" / Int32ul)

TL_OPEN = Struct("fd" / Int32sl, "oflags" / Int32sl, "path_len" / Int32ul, "reserved0" / Int32ul,
                 "path" / Padded8(this.path_len))

TL_CLOSE = Struct("fd" / Int32sl, "ret" / Int32sl)

TL_IOCTL_BUFFER = Struct(
    "role" / Int32ul,            # TL_BUF_*
    "size" / Int32ul,
    "addr" / Int64ul,
    "flags" / Int32ul,           # TL_BF_*
    "field" / Int32ul,           # RM_PARAMS_POINTER: offset of the NvP64 in the params; else 0
    "before" / Padded8(this.size),
    "after" / Padded8(this.size))
# Role 5 (issue 18): a buffer an NvP64 field of the RM_CONTROL params points to, copied with
# the count the params give (decoders/rm/ctrlparams_ext.py POINTERS), at most TL_PTR_MAX
# bytes. `field` says which NvP64. Additive: a reader that does not know role 5 finds its
# buffers by role and skips it; records written before have no role-5 buffer and no
# TL_IF_PTRS_FOLLOWED, and decode as before.
TL_BUF = {1: "RM_CONTROL_PARAMS", 2: "RM_ALLOC_PARAMS", 3: "XFER_ARGS", 4: "ALLOC_RIGHTS",
          5: "RM_PARAMS_POINTER"}
TL_BUF_BY_NAME = {v: k for k, v in TL_BUF.items()}
TL_PTR_MAX = 64 << 10
TL_BF_BEFORE = 0x1               # before-copy succeeded
TL_BF_AFTER = 0x2                # after-copy succeeded
TL_BF_TRUNCATED = 0x4            # larger than the shim's per-buffer limit; size was cut
TL_BF_SIZE_FROM_CLASS = 0x8      # RM_ALLOC gave paramsSize 0: size taken from the class table

TL_IOCTL = Struct(
    "fd" / Int32sl, "request" / Int32ul, "arg" / Int64ul,
    "ret" / Int32sl, "err" / Int32sl,
    "arg_size" / Int32ul, "nbufs" / Int32ul, "flags" / Int32ul, "path_len" / Int32ul,
    "path" / Padded8(this.path_len),
    "before" / Padded8(this.arg_size),
    "after" / Padded8(this.arg_size),
    "buffers" / Array(this.nbufs, TL_IOCTL_BUFFER))
TL_IF_ARG_BEFORE = 0x1
TL_IF_ARG_AFTER = 0x2
TL_IF_UVM_SIZE_UNKNOWN = 0x4     # a UVM command not in the shim's size table: no bytes copied
TL_IF_PTRS_FOLLOWED = 0x8        # the params' NvP64 fields were looked at (role-5 buffers for
                                 # those non-NULL with a non-zero count); absent: the shim
                                 # predates issue 18 or the control has no pointer row

TL_MMAP = Struct(
    "addr" / Int64ul, "length" / Int64ul, "prot" / Int32sl, "flags" / Int32sl, "fd" / Int32sl,
    "err" / Int32sl, "offset" / Int64ul, "path_len" / Int32ul, "reserved0" / Int32ul,
    "path" / Padded8(this.path_len))

TL_MUNMAP = Struct("addr" / Int64ul, "length" / Int64ul, "ret" / Int32sl, "err" / Int32sl)

TL_MREMAP = Struct("old_addr" / Int64ul, "old_length" / Int64ul, "new_length" / Int64ul,
                   "flags" / Int32sl, "err" / Int32sl, "new_addr" / Int64ul)

TL_MARK = Struct("kind" / Int32ul, "id" / Int32ul, "label_len" / Int32ul, "reserved0" / Int32ul,
                 "label" / Padded8(this.label_len))
TL_MARK_KIND = {1: "BEGIN", 2: "END", 3: "POINT"}

TL_SEGMENT = Struct(
    "va" / Int64ul, "size" / Int32ul, "flags" / Int32ul,   # TL_SF_*
    "data" / Padded8(this.size))
TL_SF_COPIED = 0x1
TL_SF_UNMAPPED = 0x2             # no CPU mapping found for the VA: nothing copied
TL_SF_CLIPPED = 0x4              # copy stopped at the end of the CPU mapping or the size limit

TL_SUBMISSION = Struct(
    "token" / Int32ul, "hClient" / Int32ul, "hChannel" / Int32ul, "hClass" / Int32ul,
    "gp_put_prev" / Int32ul, "gp_put" / Int32ul, "gp_entries" / Int32ul, "flags" / Int32ul,
    "gpfifo_va" / Int64ul, "doorbell_addr" / Int64ul, "rip" / Int64ul,
    "nentries" / Int32ul, "nsegments" / Int32ul, "lost" / Int32ul, "insn_len" / Int32ul,
    "entries" / Array(this.nentries, Int64ul),
    "segments" / Array(this.nsegments, TL_SEGMENT))
TL_SUB_CHANNEL_KNOWN = 0x1       # the token matched a channel the shim saw created
TL_SUB_FALLBACK = 0x2            # store not emulated: single-stepped (slow path)
TL_SUB_LOST = 0x4                # entries since the last GP_PUT could not be read: `lost` counts them
TL_SUB_NO_USERD = 0x8            # USERD not mapped in this process: GP_PUT unknown
TL_SUB_HOOKED = 0x10             # caught by the patched store site (shim/patch.c), not a fault
TL_SUB_ENTRIES_SHADOWED = 0x20   # every entry as libcuda's hooked GP entry writer made it (I14), no ring read

# Counters in a STATS record, by index: the shim writes them in this order.
TL_STATS_NAMES = ("records", "records_dropped", "bytes_dropped", "ioctls", "mmaps", "doorbells",
                  "submissions", "submissions_lost", "fallbacks", "segments_unmapped",
                  "faults_not_ours", "trap_setup_failed", "cycles_lookup", "cycles_device_reads",
                  "cycles_copy", "cycles_capture", "cycles_gp_put", "cycles_reserve", "cycles_clock",
                  "populate_failed", "api_calls", "api_unwrapped", "api_layout_unknown",
                  "sites_patched", "sites_refused", "doorbells_hooked", "gp_put_hooked",
                  "gp_put_shadow_mismatch", "traps_moved", "gp_entries_hooked",
                  "gp_entries_shadowed", "gp_entry_shadow_mismatch", "gp_entry_shadow_busy",
                  "grows_helper", "grows_inline",
                  # capture windows (TL_WINDOW): doorbells whose submission was not recorded,
                  # submissions recorded outside the window (graph QMD writes), API calls not
                  # recorded, and of those the kernel and graph launches
                  "window_submissions_skipped", "window_submissions_kept",
                  "window_api_calls_skipped", "window_launches_skipped")
TL_STATS = Struct("count" / Int32ul, "reserved0" / Int32ul,
                  "counters" / Array(this.count, Int64ul))

# A CUDA driver API call (decoders/cuda/api.py): API_ENTER before the real call, API_EXIT
# after it, both with the argument words; `call` pairs them within a process. Sections
# carry what the pointers pointed to (decoders/cuda/api.py SECTIONS).
TL_API_SECTION = Struct(
    "tag" / Int32ul, "size" / Int32ul,
    "flags" / Int32ul,           # decoders/cuda/api.py SECTION_FLAGS
    "full_size" / Int32ul,       # the object's size when `size` was cut (TRUNCATED)
    "data" / Padded8(this.size))
TL_API = Struct(
    "slot" / Int32ul,            # decoders/cuda/api.py FUNCTIONS
    "call" / Int32ul,            # per-process call number: the same in API_ENTER and API_EXIT
    "result" / Int32sl,          # CUresult (API_EXIT only)
    "nargs" / Int16ul, "nsections" / Int16ul,
    "args" / Array(this.nargs, Int64ul),
    "sections" / Array(this.nsections, TL_API_SECTION))

# The data of an IMAGE_REF section (decoders/cuda/api.py SECTIONS 11): the image is the
# IMAGE section of the API_ENTER record at file `offset` (of the uncompressed capture).
TL_IMAGE_REF = Struct(
    "offset" / Int64ul,          # file offset of the earlier API_ENTER record with the bytes
    "size" / Int64ul)            # the image's length (that IMAGE section's `size`)

# A capture window's edge (trace-launch --capture-range; docs/capture-format.md "Capture
# windows"): the shim writes BEGIN when the window opens and END when it closes, one window
# per process. Outside it the shim records every ioctl and mmap, the API calls the decode
# needs (decoders/cuda/api.py WINDOW_ROLES) and the submissions graphs need, and counts the
# rest; the counts so far ride along at each edge.
TL_WINDOW = Struct(
    "edge" / Int32ul,                # TL_WINDOW_EDGE
    "trigger" / Int32ul,             # TL_WINDOW_TRIGGER: what opened or closed it
    "ordinal" / Int32ul,             # PROFILER_API: n-th cuProfilerStart (1 = first); NVTX: the
                                     # range's number among those named `name`; LAUNCHES: the
                                     # launch's number among kernel launch calls
    "call" / Int32ul,                # the API call (TL_API.call) that triggered it; 0 for NVTX
    "launches" / Int64ul,            # kernel launch calls the process had entered before the edge
    "submissions_skipped" / Int64ul, # doorbells whose submission was not recorded, so far
    "api_calls_skipped" / Int64ul,   # API calls not recorded, so far
    "name_len" / Int32ul, "reserved0" / Int32ul,
    "name" / Padded8(this.name_len)) # NVTX: the range's message; else the API function's name
TL_WINDOW_EDGE = {1: "BEGIN", 2: "END"}
TL_WINDOW_TRIGGER = {1: "PROFILER_API", 2: "NVTX", 3: "LAUNCHES"}

TL_END = Struct("exit_status" / Int32sl, "reserved0" / Int32ul, "cursor" / Int64ul)

TL_NOTE = Struct("level" / Int32ul, "text_len" / Int32ul, "text" / Padded8(this.text_len))

# The most a record of each kind may hold, header included (whole record `length`): the
# reader checks a record's declared length against these before it reads the body, so a
# capture cannot make the decoder allocate more than this for one record (issue 20).
# Each comes from what the shim writes (shim/tracelaunch.c, shim/cuapi.c), with a margin:
#   PROCESS_START exe[1024] + cmdline[4096]; OPEN/MMAP a path (PATH_MAX 4096); NOTE one
#   line of text; IOCTL two copies of the arg (size field 14 bits) + one buffer of at most
#   MAX_BUF 256 KiB twice; SUBMISSION at most MAX_ENTRIES_PER_REC 128 entries, each a segment
#   of at most MAX_SEG 4 MiB (the real recordings stay under 64 KiB); API_ENTER a module image
#   of at most TRACE_LAUNCH_IMAGE_MAX (256 MiB by default; the largest in captures/ is 64 KiB).
#   The large kinds are capped at 64 MiB to keep a decode under 512 MiB: a record's bytes
#   are held about three times while it is read (stream window, body, parsed fields), and
#   the session keeps up to 128 MiB of images and bodies besides (decoders/session/budget.py).
# A record over its kind's maximum is reported; NOTE/MARK/OPEN/MMAP keep their first
# TL_TEXT_MAX bytes of text (the true length stays in the length field), others are skipped.
KIB, MIB = 1 << 10, 1 << 20
TL_REC_MAX = {
    "PROCESS_START": 64 * KIB, "PROCESS_EXIT": 4 * KIB, "OPEN": 64 * KIB, "CLOSE": 4 * KIB,
    "IOCTL": 4 * MIB, "MMAP": 64 * KIB, "MUNMAP": 4 * KIB, "MREMAP": 4 * KIB, "MARK": 64 * KIB,
    "SUBMISSION": 64 * MIB, "STATS": 64 * KIB, "END": 4 * KIB, "NOTE": 64 * KIB,
    "API_ENTER": 64 * MIB, "API_EXIT": 64 * MIB, "WINDOW": 64 * KIB, "PROCESS_ENV": 4 * KIB,
}
TL_REC_MAX_ANY = 64 * MIB       # a record of unknown type, or UNFINISHED (type 0)
TL_TEXT_MAX = 4 * KIB           # text kept of a NOTE/MARK/OPEN/MMAP record over its maximum
# The most items a count field may declare, by field name: zero-filled bytes parse as
# empty items, so without these a 128 MiB SUBMISSION of zeros would be 8 M segments.
# SUBMISSION: the shim writes at most MAX_ENTRIES_PER_REC 128 entries and one segment per
# entry; IOCTL: one buffer (shim/tracelaunch.c); STATS: TL_STATS_NAMES (35 today).
# (nargs, nsections are 16-bit: 65535 items at most.)
TL_COUNT_MAX = {"nentries": 1024, "nsegments": 1024, "nbufs": 16, "count": 1024}

BODY = {
    "PROCESS_START": TL_PROCESS_START, "PROCESS_EXIT": TL_PROCESS_EXIT, "OPEN": TL_OPEN,
    "CLOSE": TL_CLOSE, "IOCTL": TL_IOCTL, "MMAP": TL_MMAP, "MUNMAP": TL_MUNMAP,
    "MREMAP": TL_MREMAP, "MARK": TL_MARK, "SUBMISSION": TL_SUBMISSION, "STATS": TL_STATS,
    "END": TL_END, "NOTE": TL_NOTE, "API_ENTER": TL_API, "API_EXIT": TL_API,
    "WINDOW": TL_WINDOW, "PROCESS_ENV": TL_PROCESS_ENV,
}
