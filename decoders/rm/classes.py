"""Every RM class the driver defines: value -> NVIDIA name, per driver branch.

Provenance: NVIDIA/open-gpu-kernel-modules, src/nvidia/generated/g_allclasses.h at tag
595.45.04 (commit df1c9a3de2be4b130f4fc7680f7198193d8ac6ad), as listed (aliases omitted) in
shared/reference/hw-facts.md Appendix B, with the 580.105.08 delta of the same file
(commit 2af9f1f0f7de4988432d4ae875b5858ffdb09cc2, hw-facts.md 6.5): 580 also has
NV_MEMORY_EXTENDED_USER 0x0042 and NV01_MEMORY_FLA 0x00F3, and lacks KERNEL_WATCHDOG 0x008F
and NVA083_GRID_DISPLAYLESS 0xA083. Driver 580.159.04 itself is not in the mirror: deltas
between 580.105.08 and 580.159.04 are unknown. Name prefixes: NV01_, NVxxxx_, <ARCH>_.
Roles (memory/channel/compute ...) are ours, for the object tree; they come from the class
names and hw-facts.md 7.1.
"""
from decoders.fields import bits

# (value, name) as in g_allclasses.h 595.45.04.
CLASSES_595 = (
    (0x0000, "NV01_ROOT"),
    (0x0001, "NV01_ROOT_NON_PRIV"),
    (0x0002, "NV01_CONTEXT_DMA"),
    (0x0004, "NV01_TIMER"),
    (0x0005, "NV01_EVENT"),
    (0x000F, "FABRIC_MANAGER_SESSION"),
    (0x0020, "NV0020_GPU_MANAGEMENT"),
    (0x0030, "NV01_NULL"),
    (0x003E, "NV01_MEMORY_SYSTEM"),
    (0x003F, "NV01_MEMORY_LOCAL_PRIVILEGED"),
    (0x0040, "NV01_MEMORY_LOCAL_USER"),
    (0x0041, "NV01_ROOT_CLIENT"),
    (0x0050, "NV_CE_UTILS"),
    (0x0060, "NV0060_SYNC_GPU_BOOST"),
    (0x0070, "NV01_MEMORY_VIRTUAL"),
    (0x0071, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR"),
    (0x0073, "NV04_DISPLAY_COMMON"),
    (0x0076, "NV01_MEMORY_FRAMEBUFFER_CONSOLE"),
    (0x0078, "NV01_EVENT_KERNEL_CALLBACK"),
    (0x0079, "NV01_EVENT_OS_EVENT"),
    (0x007D, "NV04_SOFTWARE_TEST"),
    (0x007E, "NV01_EVENT_KERNEL_CALLBACK_EX"),
    (0x0080, "NV01_DEVICE_0"),
    (0x0081, "NV01_MEMORY_LIST_SYSTEM"),
    (0x0082, "NV01_MEMORY_LIST_FBMEM"),
    (0x0083, "NV01_MEMORY_LIST_OBJECT"),
    (0x008F, "KERNEL_WATCHDOG"),
    (0x0090, "KERNEL_GRAPHICS_CONTEXT"),
    (0x0092, "NV0092_RG_LINE_CALLBACK"),
    (0x00B1, "NV01_MEMORY_HW_RESOURCES"),
    (0x00C2, "NV01_MEMORY_LOCAL_PHYSICAL"),
    (0x00C3, "NV01_MEMORY_SYNCPOINT"),
    (0x00DA, "NV_SEMAPHORE_SURFACE"),
    (0x00DB, "NV40_DEBUG_BUFFER"),
    (0x00DE, "RM_USER_SHARED_DATA"),
    (0x00E0, "NV_MEMORY_EXPORT"),
    (0x00F1, "NV_IMEX_SESSION"),
    (0x00F2, "IO_VASPACE_A"),
    (0x00F8, "NV_MEMORY_FABRIC"),
    (0x00F9, "NV_MEMORY_FABRIC_IMPORT_V2"),
    (0x00FB, "NV_MEMORY_FABRIC_IMPORTED_REF"),
    (0x00FC, "FABRIC_VASPACE_A"),
    (0x00FD, "NV_MEMORY_MULTICAST_FABRIC"),
    (0x00FE, "NV_MEMORY_MAPPER"),
    (0x0100, "LOCK_STRESS_OBJECT"),
    (0x0101, "LOCK_TEST_RELAXED_DUP_OBJECT"),
    (0x2080, "NV20_SUBDEVICE_0"),
    (0x2081, "NV2081_BINAPI"),
    (0x2082, "NV2082_BINAPI_PRIVILEGED"),
    (0x208F, "NV20_SUBDEVICE_DIAG"),
    (0x30F1, "NV30_GSYNC"),
    (0x402C, "NV40_I2C"),
    (0x503B, "NV50_P2P"),
    (0x503C, "NV50_THIRD_PARTY_P2P"),
    (0x506F, "NV50_CHANNEL_GPFIFO"),
    (0x5080, "NV50_DEFERRED_API_CLASS"),
    (0x50A0, "NV50_MEMORY_VIRTUAL"),
    (0x83DE, "GT200_DEBUGGER"),
    (0x844C, "G84_PERFBUFFER"),
    (0x900E, "MPS_COMPUTE"),
    (0x9010, "NV9010_VBLANK_CALLBACK"),
    (0x902D, "FERMI_TWOD_A"),
    (0x9067, "FERMI_CONTEXT_SHARE_A"),
    (0x906F, "GF100_CHANNEL_GPFIFO"),
    (0x9072, "GF100_DISP_SW"),
    (0x9074, "GF100_TIMED_SEMAPHORE_SW"),
    (0x9096, "GF100_ZBC_CLEAR"),
    (0x90CC, "GF100_PROFILER"),
    (0x90CD, "NV_EVENT_BUFFER"),
    (0x90CE, "NV01_MEMORY_DEVICELESS"),
    (0x90E6, "GF100_SUBDEVICE_MASTER"),
    (0x90E7, "GF100_SUBDEVICE_INFOROM"),
    (0x90EC, "GF100_HDACODEC"),
    (0x90F1, "FERMI_VASPACE_A"),
    (0xA06C, "KEPLER_CHANNEL_GROUP_A"),
    (0xA06F, "KEPLER_CHANNEL_GPFIFO_A"),
    (0xA080, "KEPLER_DEVICE_VGPU"),
    (0xA081, "NVA081_VGPU_CONFIG"),
    (0xA083, "NVA083_GRID_DISPLAYLESS"),
    (0xA084, "NVA084_KERNEL_HOST_VGPU_DEVICE"),
    (0xA0BC, "NVENC_SW_SESSION"),
    (0xA0BD, "NVFBC_SW_SESSION"),
    (0xA140, "KEPLER_INLINE_TO_MEMORY_B"),
    (0xA16F, "KEPLER_CHANNEL_GPFIFO_B"),
    (0xB06F, "MAXWELL_CHANNEL_GPFIFO_A"),
    (0xB0B5, "MAXWELL_DMA_COPY_A"),
    (0xB0CC, "MAXWELL_PROFILER"),
    (0xB1CC, "MAXWELL_PROFILER_CONTEXT"),
    (0xB2CC, "MAXWELL_PROFILER_DEVICE"),
    (0xB4B7, "NVB4B7_VIDEO_ENCODER"),
    (0xB8B0, "NVB8B0_VIDEO_DECODER"),
    (0xB8D1, "NVB8D1_VIDEO_NVJPG"),
    (0xB8FA, "NVB8FA_VIDEO_OFA"),
    (0xC06F, "PASCAL_CHANNEL_GPFIFO_A"),
    (0xC076, "GP100_UVM_SW"),
    (0xC0B5, "PASCAL_DMA_COPY_A"),
    (0xC361, "VOLTA_USERMODE_A"),
    (0xC365, "ACCESS_COUNTER_NOTIFY_BUFFER"),
    (0xC369, "MMU_FAULT_BUFFER"),
    (0xC36F, "VOLTA_CHANNEL_GPFIFO_A"),
    (0xC371, "NVC371_DISP_SF_USER"),
    (0xC372, "NVC372_DISPLAY_SW"),
    (0xC461, "TURING_USERMODE_A"),
    (0xC46F, "TURING_CHANNEL_GPFIFO_A"),
    (0xC4B0, "NVC4B0_VIDEO_DECODER"),
    (0xC4B7, "NVC4B7_VIDEO_ENCODER"),
    (0xC4D1, "NVC4D1_VIDEO_NVJPG"),
    (0xC561, "AMPERE_USERMODE_A"),
    (0xC56F, "AMPERE_CHANNEL_GPFIFO_A"),
    (0xC570, "NVC570_DISPLAY"),
    (0xC573, "NVC573_DISP_CAPABILITIES"),
    (0xC574, "UVM_CHANNEL_RETAINER"),
    (0xC57A, "NVC57A_CURSOR_IMM_CHANNEL_PIO"),
    (0xC57B, "NVC57B_WINDOW_IMM_CHANNEL_DMA"),
    (0xC57D, "NVC57D_CORE_CHANNEL_DMA"),
    (0xC57E, "NVC57E_WINDOW_CHANNEL_DMA"),
    (0xC597, "TURING_A"),
    (0xC5B5, "TURING_DMA_COPY_A"),
    (0xC5C0, "TURING_COMPUTE_A"),
    (0xC637, "AMPERE_SMC_PARTITION_REF"),
    (0xC638, "AMPERE_SMC_EXEC_PARTITION_REF"),
    (0xC639, "AMPERE_SMC_CONFIG_SESSION"),
    (0xC640, "AMPERE_SMC_MONITOR_SESSION"),
    (0xC661, "HOPPER_USERMODE_A"),
    (0xC670, "NVC670_DISPLAY"),
    (0xC671, "NVC671_DISP_SF_USER"),
    (0xC673, "NVC673_DISP_CAPABILITIES"),
    (0xC67A, "NVC67A_CURSOR_IMM_CHANNEL_PIO"),
    (0xC67B, "NVC67B_WINDOW_IMM_CHANNEL_DMA"),
    (0xC67D, "NVC67D_CORE_CHANNEL_DMA"),
    (0xC67E, "NVC67E_WINDOW_CHANNEL_DMA"),
    (0xC697, "AMPERE_A"),
    (0xC6B0, "NVC6B0_VIDEO_DECODER"),
    (0xC6B5, "AMPERE_DMA_COPY_A"),
    (0xC6C0, "AMPERE_COMPUTE_A"),
    (0xC6FA, "NVC6FA_VIDEO_OFA"),
    (0xC761, "BLACKWELL_USERMODE_A"),
    (0xC763, "MMU_VIDMEM_ACCESS_BIT_BUFFER"),
    (0xC770, "NVC770_DISPLAY"),
    (0xC771, "NVC771_DISP_SF_USER"),
    (0xC773, "NVC773_DISP_CAPABILITIES"),
    (0xC77D, "NVC77D_CORE_CHANNEL_DMA"),
    (0xC77F, "NVC77F_ANY_CHANNEL_DMA"),
    (0xC797, "AMPERE_B"),
    (0xC7B0, "NVC7B0_VIDEO_DECODER"),
    (0xC7B5, "AMPERE_DMA_COPY_B"),
    (0xC7B7, "NVC7B7_VIDEO_ENCODER"),
    (0xC7C0, "AMPERE_COMPUTE_B"),
    (0xC7FA, "NVC7FA_VIDEO_OFA"),
    (0xC863, "HOPPER_MMU_VIDMEM_ACCESS_BIT_BUFFER"),
    (0xC86F, "HOPPER_CHANNEL_GPFIFO_A"),
    (0xC8B5, "HOPPER_DMA_COPY_A"),
    (0xC96F, "BLACKWELL_CHANNEL_GPFIFO_A"),
    (0xC970, "NVC970_DISPLAY"),
    (0xC971, "NVC971_DISP_SF_USER"),
    (0xC973, "NVC973_DISP_CAPABILITIES"),
    (0xC97A, "NVC97A_CURSOR_IMM_CHANNEL_PIO"),
    (0xC97B, "NVC97B_WINDOW_IMM_CHANNEL_DMA"),
    (0xC97D, "NVC97D_CORE_CHANNEL_DMA"),
    (0xC97E, "NVC97E_WINDOW_CHANNEL_DMA"),
    (0xC997, "ADA_A"),
    (0xC9B0, "NVC9B0_VIDEO_DECODER"),
    (0xC9B5, "BLACKWELL_DMA_COPY_A"),
    (0xC9B7, "NVC9B7_VIDEO_ENCODER"),
    (0xC9C0, "ADA_COMPUTE_A"),
    (0xC9D1, "NVC9D1_VIDEO_NVJPG"),
    (0xC9FA, "NVC9FA_VIDEO_OFA"),
    (0xCA6F, "BLACKWELL_CHANNEL_GPFIFO_B"),
    (0xCA70, "NVCA70_DISPLAY"),
    (0xCA71, "NVCA71_DISP_SF_USER"),
    (0xCA73, "NVCA73_DISP_CAPABILITIES"),
    (0xCA7A, "NVCA7A_CURSOR_IMM_CHANNEL_PIO"),
    (0xCA7B, "NVCA7B_WINDOW_IMM_CHANNEL_DMA"),
    (0xCA7D, "NVCA7D_CORE_CHANNEL_DMA"),
    (0xCA7E, "NVCA7E_WINDOW_CHANNEL_DMA"),
    (0xCAB5, "BLACKWELL_DMA_COPY_B"),
    (0xCB33, "NV_CONFIDENTIAL_COMPUTE"),
    (0xCB70, "NVCB70_DISPLAY"),
    (0xCB71, "NVCB71_DISP_SF_USER"),
    (0xCB73, "NVCB73_DISP_CAPABILITIES"),
    (0xCB7A, "NVCB7A_CURSOR_IMM_CHANNEL_PIO"),
    (0xCB7B, "NVCB7B_WINDOW_IMM_CHANNEL_DMA"),
    (0xCB7D, "NVCB7D_CORE_CHANNEL_DMA"),
    (0xCB7E, "NVCB7E_WINDOW_CHANNEL_DMA"),
    (0xCB97, "HOPPER_A"),
    (0xCBA2, "HOPPER_SEC2_WORK_LAUNCH_A"),
    (0xCBC0, "HOPPER_COMPUTE_A"),
    (0xCBCA, "NV_COUNTER_COLLECTION_UNIT"),
    (0xCC70, "NVCC70_DISPLAY"),
    (0xCC71, "NVCC71_DISP_SF_USER"),
    (0xCC73, "NVCC73_DISP_CAPABILITIES"),
    (0xCC7A, "NVCC7A_CURSOR_IMM_CHANNEL_PIO"),
    (0xCC7B, "NVCC7B_WINDOW_IMM_CHANNEL_DMA"),
    (0xCC7D, "NVCC7D_CORE_CHANNEL_DMA"),
    (0xCC7E, "NVCC7E_WINDOW_CHANNEL_DMA"),
    (0xCD40, "BLACKWELL_INLINE_TO_MEMORY_A"),
    (0xCD97, "BLACKWELL_A"),
    (0xCDB0, "NVCDB0_VIDEO_DECODER"),
    (0xCDC0, "BLACKWELL_COMPUTE_A"),
    (0xCDD1, "NVCDD1_VIDEO_NVJPG"),
    (0xCDFA, "NVCDFA_VIDEO_OFA"),
    (0xCE97, "BLACKWELL_B"),
    (0xCEB0, "NVCEB0_VIDEO_DECODER"),
    (0xCEB7, "NVCEB7_VIDEO_ENCODER"),
    (0xCEC0, "BLACKWELL_COMPUTE_B"),
    (0xCED0, "NVCED0_VIDEO_NVJPG"),
    (0xCEFA, "NVCEFA_VIDEO_OFA"),
    (0xCFB0, "NVCFB0_VIDEO_DECODER"),
    (0xCFB7, "NVCFB7_VIDEO_ENCODER"),
    (0xCFD1, "NVCFD1_VIDEO_NVJPG"),
    (0xCFFA, "NVCFFA_VIDEO_OFA"),
    (0xD1B0, "NVD1B0_VIDEO_DECODER"),
    (0xD1B7, "NVD1B7_VIDEO_ENCODER"),
    (0xD1FA, "NVD1FA_VIDEO_OFA"),
)

# Branch deltas against the 595 list (hw-facts.md 6.5, g_allclasses.h diff).
ONLY_580 = ((0x0042, "NV_MEMORY_EXTENDED_USER"), (0x00F3, "NV01_MEMORY_FLA"))
NOT_IN_580 = (0x008F, 0xA083)

# Aliases the headers define for the same value (cl0000.h: NV01_NULL_OBJECT == NV01_ROOT).
ALIASES = {0x0000: ("NV01_NULL_OBJECT",)}

BRANCHES_KNOWN = ("580", "595")


def _table(branch):
    table = dict(CLASSES_595)
    if branch == "580":
        for value in NOT_IN_580:
            table.pop(value, None)
        table.update(ONLY_580)
    return table


CLASSES = {"595": _table("595"), "580": _table("580")}
# Every class any known branch defines, for naming when the branch is unknown.
ALL_CLASSES = {**CLASSES["595"], **CLASSES["580"]}


def class_name(value, branch="580"):
    """(name, note): the class name on `branch`; note says when only another branch has it."""
    table = CLASSES.get(branch)
    if table is not None and value in table:
        return table[value], ""
    if value in ALL_CLASSES:
        other = [b for b in BRANCHES_KNOWN if value in CLASSES[b]]
        if table is None:
            return ALL_CLASSES[value], f"branch {branch} unknown: name from {'/'.join(other)}"
        return ALL_CLASSES[value], f"not in the {branch} class list (only {'/'.join(other)})"
    return None, "unknown class"


def class_display(value, branch="580"):
    name, note = class_name(value, branch)
    if name is None:
        return f"{value:#06x} CLASS_???"
    return name


# Role of a class in the object tree, from its name (data, applied once at import).
_ROLE_BY_NAME_PART = (
    ("CHANNEL_GPFIFO", "channel"), ("_COMPUTE_", "compute"), ("DMA_COPY", "copy"),
    ("USERMODE", "usermode"), ("INLINE_TO_MEMORY", "i2m"), ("VIDEO_", "video"),
    ("DISP", "display"), ("CURSOR", "display"), ("WINDOW", "display"), ("PROFILER", "profiler"),
)
_ROLE_EXPLICIT = {
    0x0041: "client", 0x0000: "client", 0x0001: "client", 0x0080: "device", 0x2080: "subdevice",
    0x003E: "memory", 0x003F: "memory", 0x0040: "memory", 0x0042: "memory", 0x0070: "virtual",
    0x0071: "memory", 0x0081: "memory", 0x0082: "memory", 0x0083: "memory", 0x00B1: "memory",
    0x00C2: "memory", 0x00C3: "memory", 0x00F3: "memory", 0x00F8: "memory", 0x00F9: "memory",
    0x00FB: "memory", 0x00FD: "memory", 0x90CE: "memory", 0x0076: "memory", 0x00DA: "memory",
    0x50A0: "virtual", 0x90F1: "vaspace", 0x00F2: "vaspace", 0x00FC: "vaspace",
    0xA06C: "channel_group", 0x9067: "context_share", 0x0005: "event", 0x0078: "event",
    0x0079: "event", 0x007E: "event", 0x83DE: "debugger", 0xCB33: "confidential_compute",
    0x503B: "p2p", 0x503C: "p2p", 0x00DE: "user_shared_data", 0xA140: "i2m", 0x902D: "twod",
    0xC076: "uvm_sw",
}
# 3D classes: <ARCH>_A/_B with low byte 0x97.
ROLE = {}
for _value, _name in ALL_CLASSES.items():
    _role = _ROLE_EXPLICIT.get(_value)
    if _role is None:
        _role = next((r for part, r in _ROLE_BY_NAME_PART if part in _name), None)
    if _role is None and bits(_value, 0, 8) == 0x97 and _value >= 0xC000:
        _role = "3d"
    ROLE[_value] = _role or "other"

# Memory classes whose backing is system memory / video memory by definition (cl003e.h,
# cl0040.h, cl0071.h); others depend on NVOS32_ATTR_LOCATION in the alloc params.
SYSMEM_CLASSES = frozenset((0x003E, 0x0071, 0x0081))
VIDMEM_CLASSES = frozenset((0x003F, 0x0040, 0x0042, 0x0082, 0x00C2))
