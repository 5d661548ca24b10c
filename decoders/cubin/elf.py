"""CUDA ELF (cubin) reading with pyelftools, bounds-checked first (STYLE.md 14).

Provenance:
  ELF64 layout: System V gABI (fixed; pyelftools declares it, we do not redeclare it).
  CUDA specifics below are measured on cubins built here by nvcc 13.0.88
  (scripts/build_cubin_fixtures.sh) and read back with cuobjdump 13.2 / nvdisasm 13.5:
    e_machine 190 (EM_CUDA), EI_OSABI 0x41, EI_ABIVERSION 8;
    e_flags: ABI version >= 8 keeps the SM number in bits 8..15 (sm_90 -> 0x6005a04,
    sm_100 -> 0x6006402); older toolkits (ABI 7) keep it in bits 0..7 and the virtual SM
    in bits 16..23 (EF_CUDA_VIRTUAL_SM in cuobjdump's .headerflags).
    .text.<kernel> sh_info = (register count << 24) | symbol index.
    Kernels are FUNC symbols with st_other bit 0x10 (nvdisasm: STO_CUDA_ENTRY).
    .note.nv.tkinfo (note type 2000): tool name, toolkit version, build, options strings.

pyelftools parses lazily and raises its own errors (and construct's, struct's) on bad
input. We check the header and every section header against the file size before handing
the bytes over, so a corrupt file fails here with the offset of the bad field, and the
rest is wrapped into CaptureError.
"""
import io
import mmap
import struct
import zlib

from construct import ConstructError
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.enums import ENUM_ST_INFO_TYPE, ENUM_ST_SHNDX

from decoders.errors import CaptureError, TraceLaunchError
from decoders.fields import align_up, bits

EM_CUDA = 190
ELFOSABI_CUDA = 0x41
STO_CUDA_ENTRY = 0x10
SHT_NOBITS = 8
NT_CUDA_TKINFO = 2000
ELF64_EHDR_SIZE = 64
ELF64_SHDR_SIZE = 64

# Errors that pyelftools lets escape on malformed input; each is wrapped into CaptureError.
WRAPPED = (ELFError, ConstructError, struct.error, ValueError, IndexError, KeyError,
           UnicodeDecodeError, AssertionError, TypeError, OverflowError, AttributeError,
           zlib.error)

_SHDR = struct.Struct("<IIQQQQIIQQ")   # Elf64_Shdr: the bounds pre-check, and section names
# Elf64_Sym {st_name, st_info, st_other, st_shndx, st_value, st_size}, read a table at a time:
# pyelftools parses one symbol in ~60 us, and a cuBLAS cubin holds thousands.
_SYM = struct.Struct("<IBBHQQ")
_ST_TYPE = {v: k for k, v in reversed(ENUM_ST_INFO_TYPE.items()) if isinstance(v, int)}
_ST_SHNDX = {v: k for k, v in ENUM_ST_SHNDX.items() if isinstance(v, int)}


def is_elf(data):
    return bytes(data[:4]) == b"\x7fELF"


def check_elf(data):
    """Bounds-check an ELF64 little-endian image; raise CaptureError with the offset.
    Returns the section headers' names, in section order."""
    n = len(data)
    if n < ELF64_EHDR_SIZE:
        raise CaptureError(f"ELF header truncated (need {ELF64_EHDR_SIZE} B, have {n})", offset=0)
    if not is_elf(data):
        raise CaptureError("not an ELF file (bad magic)", offset=0)
    if data[4] != 2 or data[5] != 1:
        raise CaptureError(f"not a 64-bit little-endian ELF (class {data[4]}, data {data[5]})",
                           offset=4)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    if shnum == 0:
        return []
    if shentsize != ELF64_SHDR_SIZE:
        raise CaptureError(f"e_shentsize {shentsize}, expected {ELF64_SHDR_SIZE}", offset=0x3a)
    if shoff + shnum * ELF64_SHDR_SIZE > n:
        raise CaptureError(f"section headers run past the end ({shnum} at {shoff:#x}, "
                           f"file {n:#x} B)", offset=0x28)
    if shstrndx >= shnum:
        raise CaptureError(f"e_shstrndx {shstrndx} >= e_shnum {shnum}", offset=0x3e)
    headers = [_SHDR.unpack_from(data, shoff + i * ELF64_SHDR_SIZE) for i in range(shnum)]
    for i, h in enumerate(headers):
        name, stype, _flags, _addr, offset, size, link, _info, _align, entsize = h
        where = shoff + i * ELF64_SHDR_SIZE
        if stype != SHT_NOBITS and stype != 0 and offset + size > n:
            raise CaptureError(f"section {i} data [{offset:#x}, +{size:#x}) runs past the end "
                               f"of the {n:#x}-byte file", offset=where + 0x18)
        if link >= shnum and stype in (2, 11, 4, 9):   # SYMTAB, DYNSYM, RELA, REL
            raise CaptureError(f"section {i} sh_link {link} >= e_shnum {shnum}", offset=where + 0x28)
        if stype == 2 and entsize != 24:
            raise CaptureError(f"symbol table {i} sh_entsize {entsize}, expected 24",
                               offset=where + 0x38)
    strtab = headers[shstrndx]
    if strtab[1] == SHT_NOBITS:
        raise CaptureError("section-name table has no data", offset=shoff + shstrndx * ELF64_SHDR_SIZE)
    for i, h in enumerate(headers):
        if h[1] != 0 and h[0] >= strtab[5]:
            raise CaptureError(f"section {i} name offset {h[0]:#x} outside the name table",
                               offset=shoff + i * ELF64_SHDR_SIZE)
    names_at, names_end = strtab[4], strtab[4] + strtab[5]
    out = []
    for h in headers:
        start = names_at + h[0]
        end = data.find(b"\0", start, names_end)
        out.append(data[start:names_end if end < 0 else end].decode("utf-8", "replace")
                   if start < names_end else "")
    return out


class Elf:
    """A checked ELF image: sections by name, symbols, CUDA header facts."""

    def __init__(self, data, base_offset=0):
        # a payload mapped from a file (fatbin.FILE_PAYLOAD) is read where it lies
        self.data = data if isinstance(data, mmap.mmap) else bytes(data)
        self.base_offset = base_offset       # where this image sits in the outer file
        try:
            names = check_elf(self.data)
        except CaptureError as e:
            raise self._error(e.detail, e.offset) from None
        try:
            self.elf = ELFFile(self.data if isinstance(self.data, mmap.mmap)
                               else io.BytesIO(self.data))
            self.header = self.elf.header
        except TraceLaunchError:
            raise
        except WRAPPED as e:
            raise self._error(f"ELF unreadable: {type(e).__name__}: {e}", 0) from None
        # pyelftools section objects are made when a section is asked for: a library's
        # cubin has thousands of sections, of which a launch needs a few
        self.by_name = _Sections(self, names)
        self._sections = None

    @property
    def sections(self):
        """Every section, in order (pyelftools objects, each with its `index`)."""
        if self._sections is None:
            self._sections = [self.by_name.at(i) for i in range(len(self.by_name.names))]
        return self._sections

    def _section(self, index):
        try:
            sec = self.elf.get_section(index)
        except WRAPPED as e:
            raise self._error(f"ELF unreadable: {type(e).__name__}: {e}", 0) from None
        sec.index = index
        return sec

    def _error(self, message, offset):
        return CaptureError(message, offset=(offset or 0) + self.base_offset)

    # -- CUDA header ---------------------------------------------------------------

    @property
    def is_cuda(self):
        return self.header["e_machine"] in (EM_CUDA, "EM_CUDA")

    @property
    def abi_version(self):
        return self.data[8]

    @property
    def sm(self):
        """SM number from e_flags (90 for sm_90)."""
        flags = self.header["e_flags"]
        if self.abi_version >= 8:
            return bits(flags, 8, 8)
        return bits(flags, 0, 8)

    @property
    def arch(self):
        return f"sm_{self.sm}"

    # -- sections and symbols ------------------------------------------------------

    def section_data(self, sec):
        """Bytes of a section (b"" for NOBITS), offsets already checked by check_elf."""
        if sec["sh_type"] in ("SHT_NOBITS", SHT_NOBITS):
            return b""
        start = sec["sh_offset"]
        return self.data[start:start + sec["sh_size"]]

    def section_offset(self, sec):
        return self.base_offset + sec["sh_offset"]

    def symbols(self):
        """[(index, name, info_type, st_other, st_shndx, st_value, st_size)] of .symtab, with
        pyelftools' names for the type ("STT_FUNC") and special section indices ("SHN_UNDEF");
        st_other is the raw byte."""
        out = []
        sec = self.by_name.get(".symtab")
        if sec is None:
            return out
        try:
            table = self.section_data(sec)
            strtab = self.section_data(self.by_name.at(sec["sh_link"]))
        except WRAPPED as e:
            raise self._error(f"symbol table unreadable: {type(e).__name__}: {e}",
                              sec["sh_offset"]) from None
        n = len(strtab)
        table = table[:len(table) - len(table) % _SYM.size]
        for i, (name, info, other, shndx, value, size) in enumerate(_SYM.iter_unpack(table)):
            if name >= n and name:
                raise self._error(f"symbol {i} name offset {name:#x} outside its string table",
                                  sec["sh_offset"] + i * _SYM.size)
            end = strtab.find(b"\0", name)
            text = strtab[name:n if end < 0 else end].decode("utf-8", "replace")
            stype = bits(info, 0, 4)      # ELF64_ST_TYPE
            out.append((i, text, _ST_TYPE.get(stype, stype), other, _ST_SHNDX.get(shndx, shndx),
                        value, size))
        return out

    def kernel_symbols(self):
        """Names of entry functions (STO_CUDA_ENTRY), in symbol-table order."""
        return [s[1] for s in self.symbols()
                if s[2] == "STT_FUNC" and s[3] & STO_CUDA_ENTRY]

    def text_registers(self, name):
        """Register count from the high byte of .text.<name> sh_info, or None."""
        sec = self.by_name.get(f".text.{name}")
        if sec is None:
            return None
        return bits(sec["sh_info"], 24, 8)

    def toolkit_info(self):
        """Strings of .note.nv.tkinfo: {"tool", "toolkit", "build", "options"} (missing -> absent)."""
        sec = self.by_name.get(".note.nv.tkinfo")
        if sec is None:
            return {}
        data = self.section_data(sec)
        # Elf note: namesz, descsz, type, name (aligned 4), desc. The desc carries a
        # small header then NUL-separated strings; we read the strings only.
        if len(data) < 12:
            return {}
        namesz, descsz, ntype = struct.unpack_from("<III", data, 0)
        start = 12 + align_up(namesz, 4)
        desc = data[start:start + descsz]
        if ntype != NT_CUDA_TKINFO or len(desc) < 24:
            return {}
        strings = [s.decode("utf-8", "replace") for s in desc[24:].split(b"\0") if s]
        keys = ("tool", "toolkit", "build", "options")
        return dict(zip(keys, strings))


class _Sections:
    """Sections by name (the first of a name), made into pyelftools objects when looked up."""

    def __init__(self, elf, names):
        self.elf = elf
        self.names = names
        self.index = {}
        for i, name in enumerate(names):
            self.index.setdefault(name, i)
        self.made = {}

    def at(self, index):
        sec = self.made.get(index)
        if sec is None:
            if not 0 <= index < len(self.names):
                raise self.elf._error(f"section index {index} out of range", 0)
            sec = self.made[index] = self.elf._section(index)
        return sec

    def get(self, name, default=None):
        i = self.index.get(name)
        return default if i is None else self.at(i)

    def __getitem__(self, name):
        return self.at(self.index[name])

    def __contains__(self, name):
        return name in self.index

    def __iter__(self):
        return iter(self.index)
