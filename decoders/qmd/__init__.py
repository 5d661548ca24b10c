"""QMD (compute launch descriptor) layouts and version detection.

Each version module (v03_00, v04_00, v05_00) is generated plain data; here each becomes
a FieldTable over its little-endian 32-bit words. The version is read from the QMD's
own bits (hw-facts.md 4.2): V03_00 and V04_00 keep QMD_MAJOR_VERSION at dword 18 bits
7:4; V05_00 moves it to dword 14 bits 23:20.
"""
import struct

from decoders.fields import FieldTable
from decoders.qmd import v03_00, v04_00, v05_00

MODULES = {m.VERSION: m for m in (v03_00, v04_00, v05_00)}
TABLES = {v: FieldTable(f"QMD{v}", m.FIELDS, m.PROVENANCE, nwords=m.NWORDS)
          for v, m in MODULES.items()}
# Every field of a QMD, as a stream of QMDs differs from the last ones in a few words.
# Built on first use per version: compiling one costs ~10 ms, and a decode that never
# asks for every field of a QMD (the launch summaries do not) needs none.
_EXTRACT = {}


def _extractor(version):
    ex = _EXTRACT.get(version)
    if ex is None:
        ex = _EXTRACT[version] = TABLES[version].delta_extractor()
    return ex

_VERSION_0304 = TABLES["V04_00"].picker(("QMD_MAJOR_VERSION", "QMD_MINOR_VERSION"))
_VERSION_05 = TABLES["V05_00"].picker(("QMD_MAJOR_VERSION", "QMD_MINOR_VERSION"))
_V0304 = {(3, 0): "V03_00", (4, 0): "V04_00"}      # (major, minor) at dword 18

_WORDS = {}     # word count -> its struct.Struct


def words_of(data):
    """Little-endian 32-bit words of a QMD image (trailing partial word dropped)."""
    n = len(data) // 4
    if not n:
        return ()
    st = _WORDS.get(n)
    if st is None:
        st = _WORDS[n] = struct.Struct(f"<{n}I")
    return st.unpack_from(data)


def detect_version(data, prefer_v05=False):
    """'V03_00' / 'V04_00' / 'V05_00' from the QMD's own version bits, or None.

    prefer_v05: check the V05 location first (the launching class is Blackwell), since
    a V04_00 image has DEPENDENT_QMD0_POINTER bits where V05 keeps its version.
    """
    return version_of_words(words_of(data[:384]), prefer_v05)


# The whole words the version fields lie in: equal keys, equal version (remembered per key).
_VERSION_KEY_0304 = TABLES["V04_00"].word_key(("QMD_MAJOR_VERSION", "QMD_MINOR_VERSION"))
_VERSION_KEY_05 = TABLES["V05_00"].word_key(("QMD_MAJOR_VERSION", "QMD_MINOR_VERSION"))
_VERSION_OF = {}


def version_of_words(words, prefer_v05=False):
    """detect_version() of a QMD image's words (words_of(data[:384]))."""
    if len(words) < 19:
        return None
    key = (_VERSION_KEY_0304(words), _VERSION_KEY_05(words), prefer_v05, len(words) >= 96)
    version = _VERSION_OF.get(key, _VERSION_OF)
    if version is _VERSION_OF:
        version = _version_of_words(words, prefer_v05)
        if len(_VERSION_OF) >= 1024:
            _VERSION_OF.clear()
        _VERSION_OF[key] = version
    return version


def _version_of_words(words, prefer_v05):
    v0304 = _V0304.get(_VERSION_0304(words))
    v05 = "V05_00" if _VERSION_05(words) == (5, 0) else None
    if prefer_v05 and v05 and len(words) >= 96:
        return v05
    if v0304 == "V04_00" and len(words) < 96:
        return None
    if v0304:
        return v0304
    if v05 and len(words) >= 96:
        return v05
    return None


def padded_words(data, version):
    """The QMD's words for `version`, zero-padded to its full size."""
    module = MODULES[version]
    words = words_of(data[:module.SIZE])
    if len(words) < module.NWORDS:
        words = tuple(words) + (0,) * (module.NWORDS - len(words))
    return words


def extract_words(words, version):
    """{field: value} from a QMD's full-length word tuple (padded_words())."""
    return _extractor(version)(words)


def decode(data, version):
    """{field: value} for one QMD image of the given version (short images pad with 0)."""
    return _extractor(version)(padded_words(data, version))


# Version-neutral names the launch summary needs -> each version's field (hw-facts.md 4.3).
COMMON = {
    "V03_00": {
        "grid": ("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"),
        "block": ("CTA_THREAD_DIMENSION0", "CTA_THREAD_DIMENSION1", "CTA_THREAD_DIMENSION2"),
        "registers": "REGISTER_COUNT_V",
        "shared_memory": ("SHARED_MEMORY_SIZE", 0),
        "program": ("PROGRAM_ADDRESS_LOWER", "PROGRAM_ADDRESS_UPPER", 0),
        "cbank": ("CONSTANT_BUFFER_ADDR_LOWER({})", "CONSTANT_BUFFER_ADDR_UPPER({})", 0,
                  "CONSTANT_BUFFER_SIZE_SHIFTED4({})", "CONSTANT_BUFFER_VALID({})"),
        "release": ("RELEASE{}_ENABLE", "RELEASE{}_ADDRESS_LOWER", "RELEASE{}_ADDRESS_UPPER",
                    "RELEASE{}_PAYLOAD_LOWER", "RELEASE{}_PAYLOAD_UPPER",
                    ("RELEASE{}_STRUCTURE_SIZE", "RELEASE{}_PAYLOAD64B", "RELEASE{}_REDUCTION_ENABLE",
                     "RELEASE{}_REDUCTION_OP", "RELEASE{}_REDUCTION_FORMAT", "RELEASE{}_MEMBAR_TYPE")),
        "dependent": (("DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_ACTION", "DEPENDENT_QMD0_POINTER"),
                      ("DEPENDENT_QMD1_ENABLE", "DEPENDENT_QMD1_ACTION", None)),
        "qmd_type": None,
    },
    "V04_00": {
        "grid": ("GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH"),
        "block": ("CTA_THREAD_DIMENSION0", "CTA_THREAD_DIMENSION1", "CTA_THREAD_DIMENSION2"),
        "registers": "REGISTER_COUNT",
        "shared_memory": ("SHARED_MEMORY_SIZE", 0),
        "program": ("PROGRAM_ADDRESS_LOWER", "PROGRAM_ADDRESS_UPPER", 0),
        "cbank": ("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6({})", "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6({})",
                  6, "CONSTANT_BUFFER_SIZE_SHIFTED4({})", "CONSTANT_BUFFER_VALID({})"),
        "release": ("RELEASE_ENABLE({0})", "RELEASE_SEMAPHORE{0}_ADDR_LOWER",
                    "RELEASE_SEMAPHORE{0}_ADDR_UPPER", "RELEASE_SEMAPHORE{0}_PAYLOAD_LOWER",
                    "RELEASE_SEMAPHORE{0}_PAYLOAD_UPPER",
                    ("RELEASE_STRUCTURE_SIZE({0})", "RELEASE_PAYLOAD64B({0})",
                     "RELEASE_REDUCTION_ENABLE({0})", "RELEASE_REDUCTION_OP({0})",
                     "RELEASE_REDUCTION_FORMAT({0})", "RELEASE_MEMBAR_TYPE({0})")),
        "dependent": (("DEPENDENT_QMD_ENABLE(0)", "DEPENDENT_QMD_ACTION(0)", "DEPENDENT_QMD0_POINTER"),
                      ("DEPENDENT_QMD_ENABLE(1)", "DEPENDENT_QMD_ACTION(1)", "DEPENDENT_QMD1_POINTER")),
        "qmd_type": "QMD_TYPE",
        "gpc_cga": ("GPC_CGA_WIDTH", "GPC_CGA_HEIGHT", "GPC_CGA_DEPTH"),
        "gpu_cga": ("GPU_CGA_WIDTH", "GPU_CGA_HEIGHT", "GPU_CGA_DEPTH"),
    },
    # V05_00 differs from V04_00 only here (clcdc0qmd.h): shifted sizes/addresses and
    # per-index dependent-QMD names.
    "V05_00": {
        "shared_memory": ("SHARED_MEMORY_SIZE_SHIFTED7", 7),
        "program": ("PROGRAM_ADDRESS_LOWER_SHIFTED4", "PROGRAM_ADDRESS_UPPER_SHIFTED4", 4),
        "dependent": (("DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_ACTION", "DEPENDENT_QMD0_POINTER"),
                      ("DEPENDENT_QMD1_ENABLE", "DEPENDENT_QMD1_ACTION", "DEPENDENT_QMD1_POINTER")),
    },
}
COMMON["V05_00"] = {**COMMON["V04_00"], **COMMON["V05_00"]}
