"""GPFIFO (GP) entry: 8 bytes, two little-endian 32-bit words, as a field table.

hw-facts.md 2.4: NV_PPBDMA_GP_ENTRY* (dev_pbdma.ref), NVC56F_GP_ENTRY* (clc56f.h) and
NVC86F_GP_ENTRY1_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE (clc86f.h/clc96f.h/clca6f.h).
An entry with LENGTH 0 is a control entry: OPCODE in ENTRY1 7:0, OPERAND in ENTRY0.
"""
from decoders.fields import FieldTable, join_u64, split_u64

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc56f.h, clc86f.h (NVC*6F_GP_ENTRY*)",
    "commit": "df1c9a3de2be4b130f4fc7680f7198193d8ac6ad",
    "prefix": "NVC86F_GP_ENTRY",
}
OPCODES = {0: "NOP", 1: "ILLEGAL", 2: "GP_CRC", 3: "PB_CRC", 4: "SET_PB_SEGMENT_EXTENDED_BASE"}

ENTRY = FieldTable("NVC86F_GP_ENTRY", [
    ("ENTRY0_FETCH", 0, 0, 1, {0: "UNCONDITIONAL", 1: "CONDITIONAL"}),
    ("ENTRY0_GET", 0, 2, 30, None),
    ("ENTRY0_OPERAND", 0, 0, 32, None),
    ("ENTRY0_PB_EXTENDED_BASE_OPERAND", 0, 8, 17, None),
    ("ENTRY1_GET_HI", 1, 0, 8, None),
    ("ENTRY1_LEVEL", 1, 9, 1, {0: "MAIN", 1: "SUBROUTINE"}),
    ("ENTRY1_LENGTH", 1, 10, 21, None),
    ("ENTRY1_SYNC", 1, 31, 1, {0: "PROCEED", 1: "WAIT"}),
    ("ENTRY1_OPCODE", 1, 0, 8, OPCODES),
], PROVENANCE, nwords=2)
# Fields over the same bits by design (segment vs control-entry meaning).
OVERLAPS = {"ENTRY0_FETCH", "ENTRY0_GET", "ENTRY0_OPERAND", "ENTRY0_PB_EXTENDED_BASE_OPERAND",
            "ENTRY1_GET_HI", "ENTRY1_OPCODE"}
_extract = ENTRY.extractor()
# Values the entry splits over fields: the segment's VA bits 39:2 (GET, GET_HI) and, in a
# SET_PB_SEGMENT_EXTENDED_BASE control entry, VA bits 63:40.
_address = ENTRY.composer([(("ENTRY0_GET", 2), ("ENTRY1_GET_HI", 32))])
_extended_base = ENTRY.composer([(("ENTRY0_PB_EXTENDED_BASE_OPERAND", 40),)])


def decode_entry(value, extended_base=0):
    """One GP entry (u64) -> dict. extended_base: VA bits 63:40 set by a preceding
    SET_PB_SEGMENT_EXTENDED_BASE control entry (Hopper+), as a byte address."""
    words = split_u64(value)
    f = _extract(words)
    length = f["ENTRY1_LENGTH"]
    out = {"raw": f"{value:#018x}", "fields": f}
    if length:
        (address,) = _address(words)
        out.update({
            "kind": "segment",
            "address": extended_base | address,
            "length_dwords": length,
            "length_bytes": 4 * length,
            "level": ENTRY.render("ENTRY1_LEVEL", f["ENTRY1_LEVEL"]),
            "sync": ENTRY.render("ENTRY1_SYNC", f["ENTRY1_SYNC"]),
            "fetch": ENTRY.render("ENTRY0_FETCH", f["ENTRY0_FETCH"]),
        })
    else:
        opcode = f["ENTRY1_OPCODE"]
        out.update({"kind": "control", "opcode": ENTRY.render("ENTRY1_OPCODE", opcode),
                    "operand": f["ENTRY0_OPERAND"]})
        if opcode == 4:
            (out["extended_base"],) = _extended_base(words)
    return out


_SEGMENT = {}       # ENTRY1 word -> (length_bytes, level, sync) of a segment entry, or None


def segment_brief(value):
    """decode_entry(value)'s kind, address, length_bytes, level and sync, as a tuple, for a
    segment entry (None for a control entry): the same values, with what depends on the
    ENTRY1 word alone (length, level, sync) remembered per ENTRY1 word, since a ring's
    entries differ mostly in their addresses."""
    words = split_u64(value)
    hi = words[1]
    part = _SEGMENT.get(hi, _SEGMENT)
    if part is _SEGMENT:
        f = _extract([0, hi])
        length = f["ENTRY1_LENGTH"]
        part = (4 * length, ENTRY.render("ENTRY1_LEVEL", f["ENTRY1_LEVEL"]),
                ENTRY.render("ENTRY1_SYNC", f["ENTRY1_SYNC"])) if length else None
        if len(_SEGMENT) >= 4096:
            _SEGMENT.clear()
        _SEGMENT[hi] = part
    if part is None:
        return None
    return ("segment",) + _address(words) + part


_LENGTH = ENTRY.by_name["ENTRY1_LENGTH"]
_unpack_entry1_length = FieldTable(
    "NVC86F_GP_ENTRY1_LENGTH", [("ENTRY1_LENGTH", 0, _LENGTH.lo, _LENGTH.width, None)],
    PROVENANCE, nwords=1).unpacker()


def segment_lengths(entries):
    """Byte lengths of the segment entries (LENGTH != 0) among raw u64 GP entries, in
    order: what each captured segment should hold. Control entries are skipped."""
    out = []
    for value in entries:
        (length,) = _unpack_entry1_length(split_u64(value)[1])
        if length:
            out.append(4 * length)
    return out


def encode_entry(address, length_dwords, level=0, sync=0):
    """u64 of a segment entry (for tests and synthetic rings)."""
    low, high = split_u64(address)
    w = ENTRY.build(ENTRY0_GET=low // 4, ENTRY1_GET_HI=high, ENTRY1_LENGTH=length_dwords,
                    ENTRY1_LEVEL=level, ENTRY1_SYNC=sync)
    return join_u64(w[0], w[1])
