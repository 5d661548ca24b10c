"""Cubins, fatbins and SASS: what a kernel expects from a launch (issue 6).

Public API (dotted names and dict keys are API; see STYLE.md 10):
  load_cubin(data) -> Cubin                  one CUDA ELF image
  find_cubins(path_or_bytes) -> [(source, Cubin)]
                                             a cubin, a fatbin, or a host ELF with fatbins
  kernels_json(cubins_or_cubin) -> {"kernels": [...]}
  sass_listing(cubin, kernel=None) -> [instruction dict]
  fatbin_entries(path_or_bytes) -> [FatbinEntry]  every entry, PTX included (listed only)
  image_cubin(image, sm) -> Cubin or None    the cubin a GPU of `sm` runs from a module image,
                                             decompressing only that entry
  demangle(name) -> str                      one long-lived c++filt per process (or cxxfilt)

Errors: CaptureError (with the file offset) for corrupt or truncated input; nothing else.
"""
import os
import re
import select
import shutil
import subprocess

from decoders.cubin import fatbin as _fatbin
from decoders.cubin import nvinfo as _nvinfo
from decoders.cubin.elf import STO_CUDA_ENTRY, WRAPPED, Elf, is_elf
from decoders.errors import CaptureError, DecodeError, TraceLaunchError

# Constant bank 0 offset of the first kernel parameter when a cubin carries no
# EIATTR_PARAM_CBANK (shared/reference/hw-facts.md 5.1, measured with ptxas).
PARAM_BASE_BY_SM = ((100, 0x380), (90, 0x210), (70, 0x160))


def default_param_base(sm):
    for first, base in PARAM_BASE_BY_SM:
        if sm >= first:
            return base
    return None


# The device runtime's launch entry points (CUDA 12's CDP2, and the CDP1 name before it):
# a cubin that defines one was linked with libcudadevrt (nvcc -rdc=true -lcudadevrt).
DEVICE_LAUNCH = ("__cudaCDP2LaunchDevice", "cudaLaunchDevice")


class Kernel:
    """One entry function of a cubin, with what its .nv.info and sections say."""

    def __init__(self, cubin, mangled):
        elf = cubin.elf
        self.mangled = mangled
        self.device_runtime = cubin.device_runtime
        self._name = None
        self.arch = cubin.arch
        info_sec = elf.by_name.get(f".nv.info.{mangled}")
        self.attributes = []
        if info_sec is not None:
            self.attributes = _nvinfo.parse_nv_info(elf.section_data(info_sec),
                                                    elf.section_offset(info_sec))
        a = self.attributes
        first = _nvinfo.first
        cbank = first(a, "EIATTR_PARAM_CBANK")
        self.param_base = cbank["offset"] if isinstance(cbank, dict) else default_param_base(cubin.sm)
        size = first(a, "EIATTR_CBANK_PARAM_SIZE")
        if size is None and isinstance(cbank, dict):
            size = cbank["size"]
        self.param_size = _int(size, 0)
        params = [p for p in _nvinfo.all_of(a, "EIATTR_KPARAM_INFO") if isinstance(p, dict)]
        self.params = [{"index": p["ordinal"], "offset": p["offset"], "size": p["size"],
                        "kind": p["kind"], "log_alignment": p["log_alignment"],
                        "space": p["space"], "cbank": p["cbank"]}
                       for p in sorted(params, key=lambda p: p["ordinal"])]
        g = cubin.global_info.get(mangled, {})
        self.registers = g.get("EIATTR_REGCOUNT", elf.text_registers(mangled))
        self.local_memory_bytes = g.get("EIATTR_FRAME_SIZE", 0)
        self.min_stack_bytes = g.get("EIATTR_MIN_STACK_SIZE")
        self.max_stack_bytes = g.get("EIATTR_MAX_STACK_SIZE")
        shared = elf.by_name.get(f".nv.shared.{mangled}")
        self.shared_memory_bytes = shared["sh_size"] if shared is not None else 0
        const0 = elf.by_name.get(f".nv.constant0.{mangled}")
        self.constant0_size = const0["sh_size"] if const0 is not None else None
        text = elf.by_name.get(f".text.{mangled}")
        self.code_bytes = text["sh_size"] if text is not None else 0
        self.max_threads_dims = _dims(first(a, "EIATTR_MAX_THREADS"))
        self.max_threads = _product(self.max_threads_dims)
        self.required_block_dims = _dims(first(a, "EIATTR_REQNTID"))
        self.required_cluster_dims = _dims(first(a, "EIATTR_CTA_PER_CLUSTER"))
        self.explicit_cluster = any(x.name == "EIATTR_EXPLICIT_CLUSTER" for x in a)
        self.max_cluster_blocks = _int(first(a, "EIATTR_MAX_CLUSTER_RANK"))
        self.max_registers = _int(first(a, "EIATTR_MAXREG_COUNT"))
        exits = first(a, "EIATTR_EXIT_INSTR_OFFSETS")
        self.exit_offsets = exits if isinstance(exits, list) else []
        self.barriers = _int(first(a, "EIATTR_NUM_BARRIERS"), 0)
        self.mbarriers = _int(first(a, "EIATTR_NUM_MBARRIERS"))
        self.cuda_api_version = _int(first(a, "EIATTR_CUDA_API_VERSION"))

    @property
    def name(self):
        """The demangled name, made when first shown (demangle() batches them)."""
        if self._name is None:
            self._name = demangle(self.mangled)
        return self._name

    def to_json(self):
        return {
            "name": self.name, "mangled": self.mangled, "arch": self.arch,
            "param_base": self.param_base, "param_size": self.param_size,
            "params": self.params, "registers": self.registers,
            "shared_memory_bytes": self.shared_memory_bytes,
            "local_memory_bytes": self.local_memory_bytes,
            "min_stack_bytes": self.min_stack_bytes,
            "max_threads": self.max_threads, "max_threads_dims": self.max_threads_dims,
            "required_block_dims": self.required_block_dims,
            "required_cluster_dims": self.required_cluster_dims,
            "explicit_cluster": self.explicit_cluster,
            "max_cluster_blocks": self.max_cluster_blocks,
            "max_registers": self.max_registers,
            "constant0_size": self.constant0_size, "code_bytes": self.code_bytes,
            "exit_offsets": self.exit_offsets, "barriers": self.barriers,
            "mbarriers": self.mbarriers, "cuda_api_version": self.cuda_api_version,
        }


def _int(v, default=None):
    """An attribute value that should be a number; a payload of another shape gives default."""
    return v if isinstance(v, int) else default


def _dims(v):
    return list(v) if isinstance(v, list) and len(v) == 3 else None


def _product(dims):
    if dims is None:
        return None
    return dims[0] * dims[1] * dims[2]


class Cubin:
    """A CUDA ELF image: arch, toolkit note, global .nv.info, kernels."""

    def __init__(self, data, base_offset=0):
        self.elf = Elf(data, base_offset)
        if not self.elf.is_cuda:
            raise CaptureError(f"ELF e_machine {self.elf.header['e_machine']} is not EM_CUDA (190)",
                               offset=base_offset + 0x12)
        self.data = self.elf.data
        self.base_offset = base_offset
        self.sm = self.elf.sm
        self.arch = self.elf.arch
        self.toolkit = self.elf.toolkit_info()
        self._symbols = self.elf.symbols()
        self._global_info = None
        self.global_attributes = []
        names = [s[1] for s in self._symbols if s[2] == "STT_FUNC" and s[3] & STO_CUDA_ENTRY]
        if not names:   # no symbol table: fall back to the per-kernel info sections
            names = [s.name[len(".nv.info."):] for s in self.elf.sections
                     if s.name.startswith(".nv.info.")]
        self.kernel_names = names
        # linked with CUDA's device runtime: its kernels may launch kernels from the GPU
        # (dynamic parallelism), which never pass through the host's pushbuffer
        self.device_runtime = any(s[1].startswith(DEVICE_LAUNCH) for s in self._symbols)
        self._built = {}        # mangled -> Kernel: only those asked for are parsed
        self._kernels = None

    def release(self):
        """Let go of the image bytes now, for a cache that drops this cubin: pyelftools'
        objects form reference cycles, which a decode with the collector off (session.py)
        would keep, bytes and all. Kernels already parsed stay usable; nothing else is."""
        self.elf.elf.stream.close()
        self.elf.data = self.data = None

    @property
    def global_info(self):
        """{mangled: {EIATTR name: value}} from the global .nv.info (parsed when first read)."""
        if self._global_info is None:
            self._global_info = {}
            sec = self.elf.by_name.get(".nv.info")
            if sec is not None:
                by_index = {s[0]: s[1] for s in self._symbols}
                self.global_attributes = self._wrapped(
                    _nvinfo.parse_nv_info, self.elf.section_data(sec), self.elf.section_offset(sec))
                for attr in self.global_attributes:
                    if isinstance(attr.value, dict) and "symbol" in attr.value:
                        name = by_index.get(attr.value["symbol"])
                        if name is not None:
                            self._global_info.setdefault(name, {})[attr.name] = \
                                attr.value["value"]
        return self._global_info

    def _wrapped(self, fn, *args):
        try:
            return fn(*args)
        except TraceLaunchError:
            raise
        except WRAPPED as e:
            raise CaptureError(f"cubin unreadable: {type(e).__name__}: {e}",
                               offset=self.base_offset) from None

    def _kernel_of(self, mangled):
        k = self._built.get(mangled)
        if k is None:
            self.global_info        # noqa: B018  (parsed first: Kernel reads it)
            k = self._built[mangled] = self._wrapped(Kernel, self, mangled)
        return k

    @property
    def kernels(self):
        """Every kernel, sorted by mangled name (each parsed once)."""
        if self._kernels is None:
            self._kernels = sorted((self._kernel_of(n) for n in self.kernel_names),
                                   key=lambda k: k.mangled)
        return self._kernels

    def kernel(self, name):
        """The kernel of that mangled name (only it is parsed), or of that demangled name."""
        if name in self.kernel_names:
            return self._kernel_of(name)
        for k in self.kernels:
            if name in (k.name, k.mangled):
                return k
        raise KeyError(name)

    def to_json(self):
        return {"arch": self.arch, "toolkit": self.toolkit,
                "kernels": [k.to_json() for k in self.kernels]}


_MANGLED = re.compile(r"_Z[A-Za-z0-9_$.]+")
DEMANGLE_TIMEOUT_S = 10


class _Demangler:
    """Demangled names, each distinct name asked once. The tool is one c++filt process,
    started at the first C++ name and fed a name per line for as long as this process
    lives (at most one per capture decoded: issue 17; it was one per name). c++filt keeps
    the text the reports always had (its verbose std:: expansions); without it, the
    cxxfilt package (libstdc++'s __cxa_demangle, in process); without either, names stay
    mangled. Only names of the shape c++filt reads as one word go to it (no newline can
    desynchronise the pipe, no name can be an option)."""

    def __init__(self):
        self.cache = {}
        self.proc = None
        self.started = 0        # processes started (tests count them)
        self.broken = False

    def __call__(self, name):
        if not name.startswith("_Z"):
            return name
        out = self.cache.get(name)
        if out is None:
            out = self._tool(name) if _MANGLED.fullmatch(name) else None
            if out is None:
                out = _cxxfilt(name) if not shutil.which("c++filt") else name
            if len(self.cache) < 65536:
                self.cache[name] = out
        return out

    def _tool(self, name):
        if self.broken:
            return None
        if self.proc is None:
            tool = shutil.which("c++filt")
            if not tool:
                return None
            try:
                self.proc = subprocess.Popen([tool], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                             text=True, bufsize=1)
            except OSError:
                self.broken = True
                return None
            self.started += 1
        try:
            self.proc.stdin.write(name + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], DEMANGLE_TIMEOUT_S)
            line = self.proc.stdout.readline() if ready else ""
        except (OSError, ValueError):
            line = ""
        if not line.endswith("\n"):        # c++filt died or hung: names stay mangled from here
            self.close()
            self.broken = True
            return None
        return line[:-1] or name

    def close(self):
        if self.proc is not None:
            proc, self.proc = self.proc, None
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.kill()
            proc.wait()


def _cxxfilt(name):
    try:
        import cxxfilt     # noqa: PLC0415  (only where c++filt is not installed)
    except ImportError:
        return name
    try:
        return cxxfilt.demangle(name) or name
    except cxxfilt.Error:   # InvalidName (not a C++ name), LibraryNotFound (no libstdc++)
        return name


demangle = _Demangler()
demangle.__doc__ = "A C++ name demangled (extern \"C\" names are returned as they are)."


def load_cubin(data, base_offset=0):
    """Cubin of one CUDA ELF image (bytes)."""
    return Cubin(data, base_offset)


def _read(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes), "<bytes>"
    path = os.fspath(path_or_bytes)
    with open(path, "rb") as f:
        return f.read(), path


def _fatbin_cubins(blob, base, source, out):
    for i, entry in enumerate(_fatbin.parse_fatbin(blob, base)):
        if entry.kind == "ELF" and entry.payload is not None:
            out.append((f"{source}: fatbin entry {i} ({entry.arch}"
                        f"{', ' + entry.compression if entry.compression else ''})",
                        load_cubin(entry.payload, 0 if entry.compression else entry.offset +
                                   entry.header.header_size)))


def find_cubins(path_or_bytes):
    """[(source description, Cubin)] from a cubin file, a fatbin, or a host executable / .so.

    PTX entries are not compiled (fatbin_entries() lists them)."""
    data, source = _read(path_or_bytes)
    out = []
    if len(data) >= 4 and int.from_bytes(data[:4], "little") == _fatbin.FATBIN_MAGIC:
        _fatbin_cubins(data, 0, source, out)
        return out
    if not is_elf(data):
        raise CaptureError("neither an ELF file nor a fatbin (bad magic)", offset=0)
    elf = Elf(data)
    if elf.is_cuda:
        return [(source, Cubin(data))]
    for where, offset, blob in _fatbin.find_fatbins(elf):
        _fatbin_cubins(blob, offset, f"{source} {where}", out)
    return out


def image_cubin(image, sm):
    """The cubin a GPU of compute capability `sm` (90 for 9.0) runs from a module image (the
    bytes of cuModuleLoadData / cuLibraryLoadData): the image itself if it is a cubin, else
    the last sm_<sm> ELF entry of its fatbin(s), or the first ELF entry when none is for
    `sm` (what find_cubins(image) then picking by Cubin.sm chose). Only that entry is
    decompressed (DecompressBudget: IMAGE_DECOMPRESS_CAP), and no kernel is parsed until
    Cubin.kernel() asks for it. None for an image with no ELF entry (PTX, JIT-compiled by
    the driver); CaptureError for one that does not decode."""
    data = bytes(image) if not isinstance(image, (bytes, bytearray)) else image
    if len(data) >= 4 and int.from_bytes(data[:4], "little") == _fatbin.FATBIN_MAGIC:
        entries = _fatbin.parse_fatbin(data, 0, decompress=False, views=True)
    elif is_elf(data):
        elf = Elf(data)
        if elf.is_cuda:
            return Cubin(data)
        entries = []
        for _, offset, blob in _fatbin.find_fatbins(elf):
            entries.extend(_fatbin.parse_fatbin(blob, offset, decompress=False, views=True))
    elif _looks_like_ptx(data):
        return None
    else:
        raise CaptureError("neither an ELF file, a fatbin nor PTX text (bad magic)", offset=0)
    elves = [e for e in entries if e.kind == "ELF"]
    if not elves:
        return None
    best = ([e for e in elves if e.header.arch == sm] or elves[:1])[-1]
    payload = best.decoded(_fatbin.DecompressBudget(), to_file=True)
    return load_cubin(payload, 0 if best.compression else best.payload_offset)


def _runs_on(entry, sm):
    """The driver runs an sm_XY cubin on a GPU of the same major version and at least its
    minor; PTX of compute_XY it compiles for any GPU of XY or later."""
    arch = entry.header.arch
    if entry.kind == "PTX":
        return arch <= sm
    return arch // 10 == sm // 10 and arch <= sm


def entries_in_use(data, sms):
    """Header offsets of the fatbin entries of module image `data` that matter on GPUs of
    compute capabilities `sms` (90 for 9.0): every cubin or PTX the driver could pick for
    one of them, the entry image_cubin() reads for each, and entries of kinds not known
    here. None when `data` is not a fatbin (nothing is then left out)."""
    if len(data) < 4 or int.from_bytes(data[:4], "little") != _fatbin.FATBIN_MAGIC or not sms:
        return None
    entries = _fatbin.parse_fatbin(data, 0, decompress=False, views=True)
    elves = [e for e in entries if e.kind == "ELF"]
    keep = {e.offset for e in entries if e.kind not in ("ELF", "PTX")}
    for sm in sms:
        keep.update(e.offset for e in entries if e.kind in ("ELF", "PTX") and _runs_on(e, sm))
        pick = [e for e in elves if e.header.arch == sm] or elves[:1]
        keep.update(e.offset for e in pick[-1:])
    return keep, entries


def bytes_in_use(data, sms):
    """How many bytes of module image `data` GPUs of compute capabilities `sms` may use:
    its length less the fatbin entries image_for_gpus() leaves out (what the capture's exit
    step keeps of it)."""
    try:
        got = entries_in_use(data, sms)
    except TraceLaunchError:
        return len(data)
    if got is None:
        return len(data)
    keep, entries = got
    return len(data) - sum(e.header.header_size + e.header.size for e in entries
                           if e.offset not in keep)


def image_for_gpus(data, sms):
    """(image, [(arch, bytes) left out]): module image `data` without the fatbin entries no
    GPU of compute capabilities `sms` can run (entries_in_use). The capture's exit step
    uses it: a framework's libraries carry cubins for six or more GPU generations, and
    only one generation's ever runs here. `data` itself when nothing is left out or it is
    not a fatbin that parses."""
    try:
        got = entries_in_use(data, sms)
        if got is None:
            return data, []
        keep, entries = got
        drop = [e for e in entries if e.offset not in keep]
        if not drop:
            return data, []
        return (_fatbin.fatbin_without(data, {e.offset for e in drop}),
                [(e.arch, e.header.header_size + e.header.size) for e in drop])
    except TraceLaunchError:
        return data, []


def _looks_like_ptx(data):
    head = bytes(data[:4096])
    return (b".version" in head or b".target" in head) and b"\0" not in head.rstrip(b"\0")


def fatbin_entries(path_or_bytes, decompress=True):
    """Every fatbin entry (PTX and ELF) in a fatbin file or a host ELF."""
    data, _ = _read(path_or_bytes)
    if len(data) >= 4 and int.from_bytes(data[:4], "little") == _fatbin.FATBIN_MAGIC:
        return _fatbin.parse_fatbin(data, 0, decompress)
    elf = Elf(data)
    out = []
    for _, offset, blob in _fatbin.find_fatbins(elf):
        out.extend(_fatbin.parse_fatbin(blob, offset, decompress))
    return out


def kernels_json(cubins):
    """{"kernels": [...]} for a Cubin, a list of Cubins, or find_cubins() output."""
    if isinstance(cubins, Cubin):
        cubins = [cubins]
    kernels = []
    for c in cubins:
        if isinstance(c, tuple):
            c = c[1]
        kernels.extend(k.to_json() for k in c.kernels)
    return {"kernels": kernels}


def sass_listing(cubin, kernel=None, nvdisasm=True):
    """[{kernel, offset, word0, word1, stall, yield, write_barrier, read_barrier, wait_mask,
    reuse, control, text?}] of every kernel (or one). `text` is nvdisasm's, when installed."""
    from decoders.cubin import sass as _sass     # only `trace-decode sass` lists instructions
    names = [k.mangled for k in cubin.kernels]
    if kernel is not None:
        try:
            names = [cubin.kernel(kernel).mangled]
        except KeyError:
            have = ", ".join(k.name for k in cubin.kernels) or "none"
            raise DecodeError(f"no kernel {kernel!r} in this {cubin.arch} cubin "
                              f"(its kernels: {have})", path="cubin") from None
    texts = _sass.nvdisasm_mnemonics(cubin.data) if nvdisasm else {}
    out = []
    for name in names:
        sec = cubin.elf.by_name.get(f".text.{name}")
        if sec is None:
            continue
        for ins in _sass.instructions(cubin.elf.section_data(sec), cubin.elf.section_offset(sec)):
            ins = {"kernel": name, **ins}
            text = texts.get(name, {}).get(ins["offset"])
            if text is not None:
                ins["text"] = text
            out.append(ins)
    return out
