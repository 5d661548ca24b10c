"""SASS instruction words (sm_70 and newer: 128 bits) and their scheduling control bits.

Provenance:
  Layout of the control bits (bits 105..125 of the 128-bit word, i.e. the high bits of the
  second 64-bit word): Jia, Maggioni, Smith, Scarpazza, "Dissecting the NVIDIA Volta GPU
  Architecture via Microbenchmarking" (arXiv:1804.06826, 2018) section 2.1, and the same
  split in cloudcores/CuAssembler (stall 4, yield 1, write barrier 3, read barrier 3,
  wait mask 6, reuse 4). Name prefix: none (these are not header names; the paper's).
  Checked here on every instruction of tests/fixtures/cubins/shapes.sm_{80,89,90,100}.cubin
  against cuobjdump 13.2 -sass: each printed (low, high) 64-bit pair equals our words
  (tests/test_cubin.py). The meaning of the fields is the paper's; the value 7 in a
  barrier field means "no barrier" (cuobjdump's 0x000fe2... second words: stall 1,
  yield 1, write 7, read 7, wait 0).

Mnemonics are not decoded here: when nvdisasm is installed, sass_listing() puts its text
beside the words; otherwise the words stand alone.
"""
import os
import re
import shutil
import subprocess
import tempfile

from decoders.errors import CaptureError
from decoders.fields import FieldTable, bits, join_u64, word_le

INSTRUCTION_BYTES = 16

# Fields over the instruction's four little-endian 32-bit words; bit 105 = word 3 bit 9.
CONTROL_FIELDS = FieldTable("sass.control", [
    ("STALL", 3, 9, 4, None),               # cycles to wait before issuing the next one
    ("YIELD", 3, 13, 1, None),              # raw bit; 1 in most instructions
    ("WRITE_BARRIER", 3, 14, 3, {7: "none"}),   # scoreboard set when the result is written
    ("READ_BARRIER", 3, 17, 3, {7: "none"}),    # scoreboard set when the sources are read
    ("WAIT_MASK", 3, 20, 6, None),          # scoreboards (bit i = SB i) waited on before issue
    ("REUSE", 3, 26, 4, None),              # operand reuse-cache flags, one per source slot
], provenance="Jia et al. 2018 section 2.1; CuAssembler; checked with cuobjdump 13.2",
    nwords=4)

CONTROL_NAMES = {"STALL": "stall", "YIELD": "yield", "WRITE_BARRIER": "write_barrier",
                 "READ_BARRIER": "read_barrier", "WAIT_MASK": "wait_mask", "REUSE": "reuse"}


def control(words):
    """{stall, yield, write_barrier, read_barrier, wait_mask, reuse}; barriers None when 7."""
    f = CONTROL_FIELDS.extract(words)
    out = {CONTROL_NAMES[k]: v for k, v in f.items()}
    for k in ("write_barrier", "read_barrier"):
        if out[k] == 7:
            out[k] = None
    return out


def control_text(c):
    """CuAssembler-style summary, e.g. B0-----:R-:W0:Y:S02 (wait mask, read, write, yield, stall)."""
    wait = "".join(str(i) if bits(c["wait_mask"], i, 1) else "-" for i in range(6))
    r = "-" if c["read_barrier"] is None else str(c["read_barrier"])
    w = "-" if c["write_barrier"] is None else str(c["write_barrier"])
    return f"B{wait}:R{r}:W{w}:{'Y' if c['yield'] else '-'}:S{c['stall']:02d}"


def instructions(text, base_offset=0):
    """[{offset, word0, word1, control...}] of one .text section's bytes."""
    n = len(text)
    if n % INSTRUCTION_BYTES:
        raise CaptureError(f".text size {n:#x} is not a multiple of {INSTRUCTION_BYTES}",
                           offset=base_offset + n - n % INSTRUCTION_BYTES)
    out = []
    for pos in range(0, n, INSTRUCTION_BYTES):
        words = [word_le(text, pos // 4 + i) for i in range(4)]
        lo64 = join_u64(words[0], words[1])
        hi64 = join_u64(words[2], words[3])
        item = {"offset": pos, "word0": f"{lo64:#018x}", "word1": f"{hi64:#018x}"}
        item.update(control(words))
        item["control"] = control_text(item)
        out.append(item)
    return out


_NVDISASM_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\*\s*0x[0-9a-f]+\s*\*/")
_NVDISASM_SECTION = re.compile(r"^\s*\.section\s+\.text\.(\S+?),")


def nvdisasm_path():
    return shutil.which("nvdisasm")


def nvdisasm_mnemonics(cubin_bytes, tool=None):
    """{kernel: {offset: text}} from nvdisasm, or {} when nvdisasm is not installed or fails."""
    tool = tool or nvdisasm_path()
    if not tool:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.cubin")
        with open(path, "wb") as f:
            f.write(cubin_bytes)
        try:
            res = subprocess.run([tool, "-c", "-hex", path], capture_output=True, text=True,
                                 timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return {}
    if res.returncode != 0:
        return {}
    out, current = {}, None
    for line in res.stdout.splitlines():
        m = _NVDISASM_SECTION.match(line)
        if m:
            current = out.setdefault(m.group(1), {})
            continue
        m = _NVDISASM_LINE.search(line)
        if m and current is not None:
            text = m.group(2).strip()
            current[int(m.group(1), 16)] = text.rstrip(" ;")
    return out
