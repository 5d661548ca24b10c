"""Generate shim/abi.h: the byte offsets the C shim needs, taken from the construct
declarations, so each structure stays declared once (in decoders/).

`python3 -m decoders.shimabi` rewrites shim/abi.h; tests/test_shimabi.py checks that the
committed header equals what this module generates.
"""
import sys
from pathlib import Path

from construct import SizeofError

from decoders.capture import format as F
from decoders.cubin import fatbin
from decoders.cuda import api as API
from decoders.cuda import types as CT
from decoders.rm import nvos
from decoders.rm.allocparams import ALLOC_PARAMS
from decoders.uvm.sizes import UVM_PARAM_SIZE_580

# (C prefix, construct Struct): offsets of every fixed-position field are emitted.
STRUCTS = [
    ("TL_FILE_HEADER", F.TL_FILE_HEADER),
    ("TL_RECORD_HEADER", F.TL_RECORD_HEADER),
    ("TL_PROCESS_START", F.TL_PROCESS_START),
    ("TL_PROCESS_ENV", F.TL_PROCESS_ENV),
    ("TL_PROCESS_EXIT", F.TL_PROCESS_EXIT),
    ("TL_OPEN", F.TL_OPEN),
    ("TL_CLOSE", F.TL_CLOSE),
    ("TL_IOCTL", F.TL_IOCTL),
    ("TL_IOCTL_BUFFER", F.TL_IOCTL_BUFFER),
    ("TL_MMAP", F.TL_MMAP),
    ("TL_MUNMAP", F.TL_MUNMAP),
    ("TL_MREMAP", F.TL_MREMAP),
    ("TL_MARK", F.TL_MARK),
    ("TL_SUBMISSION", F.TL_SUBMISSION),
    ("TL_SEGMENT", F.TL_SEGMENT),
    ("TL_STATS", F.TL_STATS),
    ("TL_NOTE", F.TL_NOTE),
    ("TL_API", F.TL_API),
    ("TL_API_SECTION", F.TL_API_SECTION),
    ("TL_WINDOW", F.TL_WINDOW),
    ("CUlaunchConfig", CT.CUlaunchConfig),
    ("CUlaunchAttribute", CT.CUlaunchAttribute),
    ("CUDA_KERNEL_NODE_PARAMS", CT.CUDA_KERNEL_NODE_PARAMS),
    ("CU_LAUNCH_PARAM_EXTRA_ENTRY", CT.CU_LAUNCH_PARAM_EXTRA_ENTRY),
    ("CUDA_KERNEL_NODE_PARAMS_v2", CT.CUDA_KERNEL_NODE_PARAMS_v2),
    ("CUDA_MEMSET_NODE_PARAMS", CT.CUDA_MEMSET_NODE_PARAMS),
    ("CUDA_MEMCPY3D", CT.CUDA_MEMCPY3D),
    ("CUDA_MEMCPY2D", CT.CUDA_MEMCPY2D),
    ("CUDA_CONDITIONAL_NODE_PARAMS", CT.CUDA_CONDITIONAL_NODE_PARAMS),
    ("CUgraphNodeParams", CT.CUgraphNodeParams),
    ("TL_FUNCTION_NAME", CT.TL_FUNCTION_NAME),
    ("TL_GRAPH_WALK", CT.TL_GRAPH_WALK),
    ("TL_GRAPH_NODE", CT.TL_GRAPH_NODE),
    ("FATBIN_HEADER", fatbin.FATBIN_HEADER),
    ("FATBIN_WRAPPER", fatbin.FATBIN_WRAPPER),
    ("NVOS00_PARAMETERS", nvos.NVOS00_PARAMETERS),
    ("NVOS21_PARAMETERS", nvos.NVOS21_PARAMETERS),
    ("NVOS64_PARAMETERS", nvos.NVOS64_PARAMETERS),
    ("NVOS54_PARAMETERS", nvos.NVOS54_PARAMETERS),
    ("NVOS33_PARAMETERS", nvos.NVOS33_PARAMETERS),
    ("nv_ioctl_nvos33_parameters_with_fd", nvos.nv_ioctl_nvos33_parameters_with_fd),
    ("NVOS46_PARAMETERS", nvos.NVOS46_PARAMETERS),
    ("NVOS02_PARAMETERS", nvos.NVOS02_PARAMETERS),
    ("nv_ioctl_nvos02_parameters_with_fd", nvos.nv_ioctl_nvos02_parameters_with_fd),
    ("nv_ioctl_xfer_t", nvos.nv_ioctl_xfer_t),
    ("NV_CHANNEL_ALLOC_PARAMS", nvos.NV_CHANNEL_ALLOC_PARAMS),
    ("NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS",
     nvos.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS),
    ("UVM_MAP_EXTERNAL_ALLOCATION_PARAMS", nvos.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS),
]


def _field_offsets(struct):
    """[(name, offset, size)] for fields at a fixed offset; stops at the first variable size."""
    out, offset = [], 0
    for sub in struct.subcons:
        try:
            size = sub.sizeof()
        except SizeofError:
            if sub.name:
                out.append((sub.name, offset, None))
            return out, None
        if sub.name:
            out.append((sub.name, offset, size))
        offset += size
    return out, offset


def _elf64_ehdr():
    """Elf64_Ehdr as pyelftools declares it (not redeclared here): the shim sizes an
    in-memory cubin from e_phoff/e_shoff and the table sizes."""
    from elftools.elf.structs import ELFStructs
    s = ELFStructs(little_endian=True, elfclass=64)
    s.create_basic_structs()
    s.create_advanced_structs(e_type="ET_EXEC", e_machine=190, e_ident_osabi=0x41)
    out, off = [], 0
    for sub in s.Elf_Ehdr.subcons:
        out.append((sub.name, off))
        off += sub.sizeof()
    return out, off


def _pointer_rows():
    """TL_PTR_ROWS: the NvP64 + count pairs of RM_CONTROL params the shim follows, from
    decoders/rm/ctrlparams_ext.py POINTERS and the params Structs they belong to."""
    from decoders.rm.ctrlparams import CTRL_PARAMS, POINTERS
    out = ["/* RM_CONTROL params holding NvP64 + count (decoders/rm/ctrlparams_ext.py POINTERS):",
           " * { cmd, params size, NvP64 offset, count offset (~0u: fixed), count size,",
           " *   fixed count, element size } */",
           f"#define TL_PTR_MAX {F.TL_PTR_MAX}",
           "#define TL_PTR_ROWS { \\"]
    for cmd, rows in sorted(POINTERS.items()):
        st = CTRL_PARAMS[cmd][1]
        fields = {name: (off, size) for name, off, size in _field_offsets(st)[0]}
        for row in rows:
            ptr_off, ptr_size = fields[row.field]
            assert ptr_size == 8, row
            if isinstance(row.count, int):
                coff, csize, fixed = "~0u", 0, row.count
            else:
                off, csize = fields[row.count]
                coff, fixed = f"{off}u", 0
            out.append(f"    {{ 0x{cmd:08x}u, {st.sizeof()}u, {ptr_off}u, {coff}, {csize}u, "
                       f"{fixed}u, {row.entry.sizeof()}u }}, \\")
    out += ["}", ""]
    return out


def _window_roles():
    """TL_API_WINDOW_ROLES: a designated initializer of each slot's role in a capture window
    (decoders/cuda/api.py window_role); slots not named are KEEP (0)."""
    out = ["/* What each slot is to a capture window (decoders/cuda/api.py WINDOW_ROLES). */"]
    for name, num in API.WINDOW_ROLES.items():
        out.append(f"#define TL_WIN_ROLE_{name} {num}")
    out.append("#define TL_API_WINDOW_ROLES { \\")
    for f in API.FUNCTIONS:
        role = API.window_role(f)
        if role != "KEEP":
            out.append(f"    [{f.slot}] = TL_WIN_ROLE_{role}, \\")
    out.append("}")
    return out


def render():
    lines = [
        "/* Generated by `python3 -m decoders.shimabi` from the construct declarations in",
        " * decoders/capture/format.py, decoders/rm/nvos.py, decoders/cuda/ and the fatbin and",
        " * ELF declarations. Do not edit: edit those. */",
        "#ifndef TRACELAUNCH_ABI_H", "#define TRACELAUNCH_ABI_H", "",
        f"#define TL_MAGIC \"{F.TL_MAGIC.decode()}\"",
        f"#define TL_VERSION {F.TL_VERSION}",
        f"#define TL_HEADER_SIZE {F.TL_HEADER_SIZE}",
        f"#define TL_RECORD_SYNC 0x{F.TL_RECORD_SYNC:08x}u",
        f"#define TL_CURSOR_OFFSET {F.TL_CURSOR_OFFSET}",
        "",
    ]
    for num, name in sorted(F.TL_REC.items()):
        lines.append(f"#define TL_REC_{name} {num}")
    for num, name in sorted(F.TL_BUF.items()):
        lines.append(f"#define TL_BUF_{name} {num}")
    for num, name in sorted(F.TL_WINDOW_EDGE.items()):
        lines.append(f"#define TL_WINDOW_{name} {num}")
    for num, name in sorted(F.TL_WINDOW_TRIGGER.items()):
        lines.append(f"#define TL_WINDOW_BY_{name} {num}")
    for name in dir(F):
        if name.startswith(("TL_RF_", "TL_BF_", "TL_IF_", "TL_SF_", "TL_SUB_")):
            value = getattr(F, name)
            if isinstance(value, int):
                lines.append(f"#define {name} 0x{value:x}")
    lines.append("")
    for i, name in enumerate(F.TL_STATS_NAMES):
        lines.append(f"#define TL_STAT_{name.upper()} {i}")
    lines.append(f"#define TL_STAT_COUNT {len(F.TL_STATS_NAMES)}")
    lines.append("")
    lines.append("/* PROCESS_ENV: the environment variables the shim records (format.py TL_ENV_NAMES). */")
    lines.append("#define TL_ENV_NAMES { " + ", ".join(f'"{n}"' for n in F.TL_ENV_NAMES) + " }")
    lines.append(f"#define TL_ENV_VALUE_MAX {F.TL_ENV_VALUE_MAX}")
    lines.append(f"#define TL_ENV_MAX {F.TL_ENV_MAX}")
    lines.append("")
    for prefix, struct in STRUCTS:
        fields, total = _field_offsets(struct)
        for name, offset, size in fields:
            lines.append(f"#define {prefix}__{name} {offset}")
        if total is not None:
            lines.append(f"#define {prefix}__SIZE {total}")
        else:
            fixed = fields[-1][1]
            lines.append(f"#define {prefix}__FIXED {fixed}")
        lines.append("")
    fields, total = _elf64_ehdr()
    for name, offset in fields:
        lines.append(f"#define Elf64_Ehdr__{name} {offset}")
    lines.append(f"#define Elf64_Ehdr__SIZE {total}")
    lines.append("")
    lines.append("/* RM_ALLOC with paramsSize 0 (libcuda does this): RM sizes the params by class. */")
    lines.append("#define TL_ALLOC_SIZES { \\")
    for cls, struct in sorted(ALLOC_PARAMS.items()):
        lines.append(f"    {{ 0x{cls:x}u, {struct.sizeof()}u }}, \\")
    lines.append("}")
    lines.append("")
    lines += _pointer_rows()
    sizes = UVM_PARAM_SIZE_580
    lines.append("/* CUDA driver entry points the shim brackets (decoders/cuda/api.py):")
    lines.append(" * X(slot, symbol, TL_API_KIND_*, number of argument words). */")
    for name, num in API.KINDS.items():
        lines.append(f"#define TL_API_KIND_{name} {num}")
    for num, name in sorted(API.SECTIONS.items()):
        lines.append(f"#define TL_API_SEC_{name} {num}")
    for num, name in sorted(API.SECTION_FLAGS.items()):
        lines.append(f"#define TL_API_SF_{name} 0x{num:x}")
    lines.append(f"#define TL_API_MAX_ARGS {API.MAX_ARGS}")
    # issue 25: function names and graph walks
    for prefix, table in (("TL_FN", API.FUNCTION_NAME_FLAGS), ("TL_GW", API.GRAPH_WALK_FLAGS),
                          ("TL_GN", API.GRAPH_NODE_FLAGS)):
        for num, name in sorted(table.items()):
            lines.append(f"#define {prefix}_{name} 0x{num:x}")
    for num, name in sorted(CT.CU_GRAPH_NODE_TYPE.items()):
        lines.append(f"#define TL_CU_GRAPH_NODE_TYPE_{name} {num}")
    lines.append(f"#define TL_WALK_MAX_NODES {API.WALK_MAX_NODES}")
    lines.append(f"#define TL_WALK_MAX_DEPTH {API.WALK_MAX_DEPTH}")
    lines.append(f"#define TL_WALK_MAX_BODIES {API.WALK_MAX_BODIES}")
    lines.append(f"#define TL_CUDA_MEMCPY_NODE_PARAMS_PREFIX {CT.CUDA_MEMCPY_NODE_PARAMS_PREFIX}")
    lines.append(f"#define TL_PARAM_WINDOWS_MAX {API.PARAM_WINDOWS_MAX}")
    lines.append(f"#define TL_PARAM_WINDOW_BYTES {API.PARAM_WINDOW_BYTES}")
    lines.append(f"#define TL_TENSOR_MAP_BYTES {API.TENSOR_MAP_BYTES}")
    lines.append(f"#define TL_TENSOR_MAP_RANK_MAX {API.TENSOR_MAP_RANK_MAX}")
    lines.append(f"#define TL_FATBIN_MAGIC 0x{fatbin.FATBIN_MAGIC:08x}u")
    lines.append(f"#define TL_FATBIN_WRAPPER_MAGIC 0x{fatbin.FATBIN_WRAPPER_MAGIC:08x}u")
    lines.append(f"#define TL_CU_LAUNCH_PARAM_END 0x{CT.CU_LAUNCH_PARAM_END:x}")
    lines.append(f"#define TL_CU_LAUNCH_PARAM_BUFFER_POINTER 0x{CT.CU_LAUNCH_PARAM_BUFFER_POINTER:x}")
    lines.append(f"#define TL_CU_LAUNCH_PARAM_BUFFER_SIZE 0x{CT.CU_LAUNCH_PARAM_BUFFER_SIZE:x}")
    status = {name: num for num, name in API.CURESULT.items()}
    for name in ("CUDA_ERROR_INVALID_VALUE", "CUDA_ERROR_NOT_INITIALIZED"):
        lines.append(f"#define TL_{name} {status[name]}")
    # slots are numbered, not counted: a number not (yet) given leaves an empty entry
    lines.append(f"#define TL_API_COUNT {max(f.slot for f in API.FUNCTIONS) + 1}")
    lines.append("#define TL_API_SLOTS(X) \\")
    for f in API.FUNCTIONS:
        lines.append(f"    X({f.slot}, {f.name}, TL_API_KIND_{f.kind}, {len(f.params)}) \\")
    lines.append("")
    lines += _window_roles()
    lines.append("")
    lines.append("/* UVM commands are plain numbers: param sizes come from this table (580). */")
    lines.append("#define TL_UVM_SIZES { \\")
    for cmd, size in sorted(sizes.items()):
        lines.append(f"    {{ 0x{cmd:x}u, {size}u }}, \\")
    lines.append("}")
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv=None):
    path = Path(__file__).resolve().parent.parent / "shim" / "abi.h"
    text = render()
    if argv and argv[0] == "--check":
        return 0 if path.read_text() == text else 1
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
