""".nv.info and .nv.info.<kernel>: EIATTR attribute records, declared once as data.

Provenance:
  Attribute numbers and names: public reimplementations that list them, chiefly
  redplait/denvdis test/nvd.cc (map s_ei, names EIATTR_*), cross-checked number by
  number against the names nvdisasm 13.5 and cuobjdump 13.2 print for the cubins in
  tests/fixtures/cubins (built by scripts/build_cubin_fixtures.sh with nvcc 13.0.88).
  0x5f EIATTR_MERCURY_ISA_VERSION: named by cuobjdump 13.2 on those cubins (nvdisasm 13.5
  prints it as EIATTR_UNKNOWN).
  Formats EIFMT_NVAL 1, EIFMT_BVAL 2, EIFMT_HVAL 3, EIFMT_SVAL 4: same sources.
  KPARAM_INFO word layout (log alignment, space, cbank, not-cbank bit, size in bits
  18..31): vivekpanyam cuda_parsers (deku declarations) and denvdis (is_cbank =
  ((w >> 16) & 2) == 0), checked against cuobjdump -elf "Pointee's logAlignment / Space /
  cbank / Parameter Space" on the fixtures.
  Name prefix: EIATTR_, EIFMT_.

Record framing (nvdisasm shows each record 4-byte aligned): u8 format, u8 attribute,
then for EIFMT_SVAL a u16 payload size and the payload, for EIFMT_HVAL a u16 value, for
EIFMT_BVAL a u8 value and a pad byte, for EIFMT_NVAL two zero bytes.
"""
from construct import Int8ul, Int16ul, Int32ul, Struct

from decoders.errors import CaptureError
from decoders.fields import FieldTable, align_up, bits, int_struct

EIFMT = {1: "EIFMT_NVAL", 2: "EIFMT_BVAL", 3: "EIFMT_HVAL", 4: "EIFMT_SVAL"}
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4

# How a payload is read, by attribute. Kinds:
#   None         raw bytes, shown as hex
#   "u32"        one 32-bit value
#   "u32_list"   a list of 32-bit values (instruction offsets, options)
#   "sym_u32"    (symbol index, value) pairs: the global .nv.info per-function records
#   "dim3"       (x, y, z)
#   "param_cbank", "kparam_info"  structures declared below
# (number, name, kind)
EIATTR_TABLE = [
    (0x01, "EIATTR_PAD", None),
    (0x02, "EIATTR_IMAGE_SLOT", None),
    (0x03, "EIATTR_JUMPTABLE_RELOCS", "u32_list"),
    (0x04, "EIATTR_CTAIDZ_USED", None),
    (0x05, "EIATTR_MAX_THREADS", "dim3"),
    (0x06, "EIATTR_IMAGE_OFFSET", None),
    (0x07, "EIATTR_IMAGE_SIZE", None),
    (0x08, "EIATTR_TEXTURE_NORMALIZED", None),
    (0x09, "EIATTR_SAMPLER_INIT", None),
    (0x0a, "EIATTR_PARAM_CBANK", "param_cbank"),
    (0x0b, "EIATTR_SMEM_PARAM_OFFSETS", None),
    (0x0c, "EIATTR_CBANK_PARAM_OFFSETS", None),
    (0x0d, "EIATTR_SYNC_STACK", None),
    (0x0e, "EIATTR_TEXID_SAMPID_MAP", None),
    (0x0f, "EIATTR_EXTERNS", "u32_list"),
    (0x10, "EIATTR_REQNTID", "dim3"),
    (0x11, "EIATTR_FRAME_SIZE", "sym_u32"),
    (0x12, "EIATTR_MIN_STACK_SIZE", "sym_u32"),
    (0x13, "EIATTR_SAMPLER_FORCE_UNNORMALIZED", None),
    (0x14, "EIATTR_BINDLESS_IMAGE_OFFSETS", None),
    (0x15, "EIATTR_BINDLESS_TEXTURE_BANK", None),
    (0x16, "EIATTR_BINDLESS_SURFACE_BANK", None),
    (0x17, "EIATTR_KPARAM_INFO", "kparam_info"),
    (0x18, "EIATTR_SMEM_PARAM_SIZE", None),
    (0x19, "EIATTR_CBANK_PARAM_SIZE", None),
    (0x1a, "EIATTR_QUERY_NUMATTRIB", None),
    (0x1b, "EIATTR_MAXREG_COUNT", None),
    (0x1c, "EIATTR_EXIT_INSTR_OFFSETS", "u32_list"),
    (0x1d, "EIATTR_S2RCTAID_INSTR_OFFSETS", "u32_list"),
    (0x1e, "EIATTR_CRS_STACK_SIZE", "u32"),
    (0x1f, "EIATTR_NEED_CNP_WRAPPER", None),
    (0x20, "EIATTR_NEED_CNP_PATCH", None),
    (0x21, "EIATTR_EXPLICIT_CACHING", None),
    (0x22, "EIATTR_ISTYPEP_USED", None),
    (0x23, "EIATTR_MAX_STACK_SIZE", "sym_u32"),
    (0x24, "EIATTR_SUQ_USED", None),
    (0x25, "EIATTR_LD_CACHEMOD_INSTR_OFFSETS", "u32_list"),
    (0x26, "EIATTR_LOAD_CACHE_REQUEST", None),
    (0x27, "EIATTR_ATOM_SYS_INSTR_OFFSETS", "u32_list"),
    (0x28, "EIATTR_COOP_GROUP_INSTR_OFFSETS", "u32_list"),
    (0x29, "EIATTR_COOP_GROUP_MASK_REGIDS", None),
    (0x2a, "EIATTR_SW1850030_WAR", None),
    (0x2b, "EIATTR_WMMA_USED", None),
    (0x2c, "EIATTR_HAS_PRE_V10_OBJECT", None),
    (0x2d, "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS", "u32_list"),
    (0x2e, "EIATTR_ATOM16_EMUL_INSTR_REG_MAP", None),
    (0x2f, "EIATTR_REGCOUNT", "sym_u32"),
    (0x30, "EIATTR_SW2393858_WAR", None),
    (0x31, "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS", "u32_list"),
    (0x32, "EIATTR_SHARED_SCRATCH", None),
    (0x33, "EIATTR_STATISTICS", None),
    (0x34, "EIATTR_INDIRECT_BRANCH_TARGETS", None),
    (0x35, "EIATTR_SW2861232_WAR", None),
    (0x36, "EIATTR_SW_WAR", "u32_list"),
    (0x37, "EIATTR_CUDA_API_VERSION", "u32"),
    (0x38, "EIATTR_NUM_MBARRIERS", None),
    (0x39, "EIATTR_MBARRIER_INSTR_OFFSETS", "u32_list"),
    (0x3a, "EIATTR_COROUTINE_RESUME_ID_OFFSETS", "u32_list"),
    (0x3b, "EIATTR_SAM_REGION_STACK_SIZE", None),
    (0x3c, "EIATTR_PER_REG_TARGET_PERF_STATS", None),
    (0x3d, "EIATTR_CTA_PER_CLUSTER", "dim3"),
    (0x3e, "EIATTR_EXPLICIT_CLUSTER", None),
    (0x3f, "EIATTR_MAX_CLUSTER_RANK", None),
    (0x40, "EIATTR_INSTR_REG_MAP", None),
    (0x41, "EIATTR_RESERVED_SMEM_USED", None),
    (0x42, "EIATTR_RESERVED_SMEM_0_SIZE", None),
    (0x43, "EIATTR_UCODE_SECTION_DATA", None),
    (0x44, "EIATTR_UNUSED_LOAD_BYTE_OFFSET", None),
    (0x45, "EIATTR_KPARAM_INFO_V2", None),
    (0x46, "EIATTR_SYSCALL_OFFSETS", "u32_list"),
    (0x47, "EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS", "u32_list"),
    (0x48, "EIATTR_GRAPHICS_GLOBAL_CBANK", None),
    (0x49, "EIATTR_SHADER_TYPE", None),
    (0x4a, "EIATTR_VRC_CTA_INIT_COUNT", None),
    (0x4b, "EIATTR_TOOLS_PATCH_FUNC", None),
    (0x4c, "EIATTR_NUM_BARRIERS", None),
    (0x4d, "EIATTR_TEXMODE_INDEPENDENT", None),
    (0x4e, "EIATTR_PERF_STATISTICS", None),
    (0x4f, "EIATTR_AT_ENTRY_FRAGMENTS", None),
    (0x50, "EIATTR_SPARSE_MMA_MASK", None),
    (0x51, "EIATTR_TCGEN05_1CTA_USED", None),
    (0x52, "EIATTR_TCGEN05_2CTA_USED", None),
    (0x53, "EIATTR_GEN_ERRBAR_AT_EXIT", None),
    (0x54, "EIATTR_REG_RECONFIG", None),
    (0x55, "EIATTR_ANNOTATIONS", None),
    (0x56, "EIATTR_SANITIZE", None),
    (0x57, "EIATTR_STACK_CANARY_TRAP_OFFSETS", "u32_list"),
    (0x58, "EIATTR_STUB_FUNCTION_KIND", None),
    (0x59, "EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS", "u32_list"),
    (0x5a, "EIATTR_MERCURY_FINALIZER_OPTIONS", None),
    (0x5f, "EIATTR_MERCURY_ISA_VERSION", None),
]
EIATTR = {number: name for number, name, _ in EIATTR_TABLE}
EIATTR_KIND = {number: kind for number, _, kind in EIATTR_TABLE}
EIATTR_BY_NAME = {name: number for number, name, _ in EIATTR_TABLE}

NV_INFO_RECORD = Struct(
    "format" / Int8ul,       # EIFMT
    "attribute" / Int8ul,    # EIATTR
    "value" / Int16ul,       # SVAL: payload size; HVAL: the value; BVAL: value in the low byte
)
NV_INFO_RECORD_SIZE = 4

EIATTR_PARAM_CBANK_VALUE = Struct(
    "section" / Int32ul,     # symbol index of .nv.constant0.<kernel>
    "offset" / Int16ul,      # param base inside constant bank 0
    "size" / Int16ul,        # bytes of parameters
)

EIATTR_KPARAM_INFO_VALUE = Struct(
    "index" / Int32ul,
    "ordinal" / Int16ul,     # parameter number in the declaration, from 0
    "offset" / Int16ul,      # from the param base
    "info" / Int32ul,        # KPARAM_INFO_FIELDS
)

KPARAM_INFO_FIELDS = FieldTable("EIATTR_KPARAM_INFO.info", [
    ("LOG_ALIGNMENT", 0, 0, 8, None),      # pointee's log2 alignment
    ("SPACE", 0, 8, 4, None),
    ("CBANK", 0, 12, 5, None),
    ("PARAM_SPACE", 0, 17, 1, {0: "CBANK", 1: "SMEM"}),
    ("SIZE", 0, 18, 14, None),             # bytes
], provenance="see module docstring: cuda_parsers, denvdis, cuobjdump -elf on fixtures")

_PARAM_CBANK_S = int_struct(EIATTR_PARAM_CBANK_VALUE)
_KPARAM_S = int_struct(EIATTR_KPARAM_INFO_VALUE)
_RECORD_S = int_struct(NV_INFO_RECORD)


def _u32s(payload):
    return [int.from_bytes(payload[i:i + 4], "little") for i in range(0, len(payload) - 3, 4)]


def decode_payload(attribute, payload):
    """Value of an EIFMT_SVAL payload by the attribute's declared kind (raw bytes if none)."""
    kind = EIATTR_KIND.get(attribute)
    if kind == "u32" and len(payload) == 4:
        return _u32s(payload)[0]
    if kind == "u32_list" and len(payload) % 4 == 0:
        return _u32s(payload)
    if kind == "sym_u32" and len(payload) == 8:
        sym, value = _u32s(payload)
        return {"symbol": sym, "value": value}
    if kind == "dim3" and len(payload) == 12:
        return _u32s(payload)
    if kind == "param_cbank" and len(payload) == 8:
        section, offset, size = _PARAM_CBANK_S.unpack_from(payload)
        return {"section": section, "offset": offset, "size": size}
    if kind == "kparam_info" and len(payload) == 12:
        index, ordinal, offset, info = _KPARAM_S.unpack_from(payload)
        f = KPARAM_INFO_FIELDS.extract([info])
        return {"index": index, "ordinal": ordinal, "offset": offset,
                "size": f["SIZE"], "log_alignment": f["LOG_ALIGNMENT"], "space": f["SPACE"],
                "cbank": f["CBANK"],
                "kind": KPARAM_INFO_FIELDS.render("PARAM_SPACE", f["PARAM_SPACE"]).lower()}
    return bytes(payload)


class Attribute:
    """One EIATTR record: number, name, format, value, and its file offset."""
    __slots__ = ("attribute", "name", "format", "value", "offset")

    def __init__(self, attribute, fmt, value, offset):
        self.attribute = attribute
        self.name = EIATTR.get(attribute, f"{attribute:#x} EIATTR_???")
        self.format = fmt
        self.value = value
        self.offset = offset

    def to_json(self):
        value = self.value.hex() if isinstance(self.value, bytes) else self.value
        return {"attribute": self.name, "number": self.attribute,
                "format": EIFMT.get(self.format, self.format), "value": value,
                "offset": self.offset}


def parse_nv_info(data, base_offset=0):
    """[Attribute] of one .nv.info section; CaptureError (with the file offset) if corrupt."""
    out = []
    pos, n = 0, len(data)
    while pos < n:
        if n - pos < NV_INFO_RECORD_SIZE:
            if not any(data[pos:]):
                break   # trailing alignment
            raise CaptureError(f".nv.info record truncated (need {NV_INFO_RECORD_SIZE} B, "
                               f"have {n - pos})", offset=base_offset + pos)
        fmt, attribute, rvalue = _RECORD_S.unpack_from(data, pos)
        if fmt == EIFMT_SVAL:
            size = rvalue
            if pos + NV_INFO_RECORD_SIZE + size > n:
                raise CaptureError(f".nv.info {EIATTR.get(attribute, hex(attribute))} "
                                   f"payload truncated (need {size} B, have "
                                   f"{n - pos - NV_INFO_RECORD_SIZE})", offset=base_offset + pos)
            payload = data[pos + NV_INFO_RECORD_SIZE:pos + NV_INFO_RECORD_SIZE + size]
            value = decode_payload(attribute, payload)
            step = NV_INFO_RECORD_SIZE + align_up(size, 4)
        elif fmt == EIFMT_HVAL:
            value, step = rvalue, NV_INFO_RECORD_SIZE
        elif fmt == EIFMT_BVAL:
            value, step = bits(rvalue, 0, 8), NV_INFO_RECORD_SIZE
        elif fmt == EIFMT_NVAL:
            value, step = None, NV_INFO_RECORD_SIZE
        else:
            raise CaptureError(f".nv.info record with unknown format {fmt:#x}",
                               offset=base_offset + pos)
        out.append(Attribute(attribute, fmt, value, base_offset + pos))
        pos += step
    return out


def first(attrs, name):
    """Value of the first attribute called `name`, or None."""
    for a in attrs:
        if a.name == name:
            return a.value
    return None


def all_of(attrs, name):
    return [a.value for a in attrs if a.name == name]
