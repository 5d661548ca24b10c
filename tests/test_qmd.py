"""QMD tables and version detection (synthetic images built with FieldTable.build)."""
import struct

from decoders.qmd import COMMON, MODULES, TABLES, decode, detect_version


def image(version, **values):
    return struct.pack(f"<{MODULES[version].NWORDS}I", *TABLES[version].build(**values))


def test_sizes_and_field_counts():
    assert (MODULES["V03_00"].SIZE, MODULES["V04_00"].SIZE, MODULES["V05_00"].SIZE) == (256, 384, 384)
    assert TABLES["V04_00"].by_name["GRID_WIDTH"].dword == 32          # h100-measured.md 1
    assert TABLES["V04_00"].by_name["CTA_THREAD_DIMENSION0"].dword == 36
    assert TABLES["V04_00"].by_name["REGISTER_COUNT"].dword == 37
    assert TABLES["V04_00"].by_name["DEPENDENT_QMD0_POINTER"].dword == 14
    assert TABLES["V04_00"].by_name["GPC_CGA_WIDTH"].dword == 67
    assert TABLES["V04_00"].by_name["SHARED_MEMORY_SIZE"].dword == 18
    assert TABLES["V04_00"].by_name["CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(7)"].dword == 48 + 14


def test_detect_versions():
    assert detect_version(image("V03_00", QMD_MAJOR_VERSION=3)) == "V03_00"
    assert detect_version(image("V04_00", QMD_MAJOR_VERSION=4)) == "V04_00"
    assert detect_version(image("V05_00", QMD_MAJOR_VERSION=5)) == "V05_00"
    assert detect_version(bytes(384)) is None
    assert detect_version(image("V04_00", QMD_MAJOR_VERSION=4)[:256]) is None   # too short
    assert detect_version(b"\x01\x02") is None


def test_v05_preferred_for_blackwell_when_both_look_valid():
    data = bytearray(image("V05_00", QMD_MAJOR_VERSION=5))
    data[18 * 4] = 0x40      # also a plausible V04 major at dword 18
    assert detect_version(bytes(data)) == "V04_00"
    assert detect_version(bytes(data), prefer_v05=True) == "V05_00"


def test_round_trip_every_field():
    for version, table in TABLES.items():
        for f in table.fields:
            value = (1 << f.width) - 1
            words = table.build(**{f.name: value})
            data = struct.pack(f"<{len(words)}I", *words)
            assert decode(data, version)[f.name] == value, (version, f.name)


def test_common_names_exist():
    for version, c in COMMON.items():
        fields = TABLES[version].by_name
        for key in ("grid", "block"):
            assert all(n in fields for n in c[key])
        assert c["registers"] in fields and c["shared_memory"][0] in fields
        for i in range(8):
            assert c["cbank"][0].format(i) in fields and c["cbank"][4].format(i) in fields
        for i in range(3):
            assert c["release"][0].format(i) in fields
