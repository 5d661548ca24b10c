"""Launch reconstruction on synthetic streams (no GPU).

synthetic-h100-*: the exact method order of h100-measured.md section 1 (I2M cbank0
driver constants, I2M arguments at +0x210, I2M QMD, SEND_PCAS_A + PCAS2_B, the launch's
own QMD with DEPENDENT_QMD0_POINTER at the previous one, semaphore seed, report).
A real H100 capture will be added by the capture owner; until then these are the
only launch tests.
synthetic-ada-inline: SET_INLINE_QMD_ADDRESS_A/B + 64 LOAD_INLINE_QMD_DATA words.
"""
import struct

from decoders.launch import LaunchDecoder, SparseMemory
from decoders.pushbuf import INC, NON_INC, IMMD, StreamDecoder, decode_dump, encode, pack_words
from decoders.qmd import TABLES
from tests.conftest import capture_file

C = 1  # compute subchannel

QMD_VA = 0x7F_0010_0000
QMD_PREV_VA = 0x7F_0010_0200
CB0_VA = 0x7F_0020_0000
SEM_VA = 0x7F_0030_0000
ARGS = struct.pack("<QQQI", 0x7F0000400000, 0x7F0000500000, 0x7F0000600000, 1 << 20)


def i2m(dst, data):
    """h100-measured.md 1: OFFSET_OUT_UPPER/OFFSET_OUT, LINE_LENGTH_IN, LINE_COUNT,
    LAUNCH_DMA 0x41, LOAD_INLINE_DATA NON_INC."""
    data = data + b"\0" * (-len(data) % 4)
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    return (encode(INC, C, 0x188, [dst >> 32, dst & 0xFFFFFFFF])
            + encode(INC, C, 0x180, [len(data), 1])
            + encode(INC, C, 0x1B0, [0x41])
            + encode(NON_INC, C, 0x1B4, words))


def v04_qmd(**over):
    f = dict(QMD_MAJOR_VERSION=4, QMD_TYPE=2, GRID_WIDTH=4096, GRID_HEIGHT=1, GRID_DEPTH=1,
             CTA_THREAD_DIMENSION0=256, CTA_THREAD_DIMENSION1=1, CTA_THREAD_DIMENSION2=1,
             REGISTER_COUNT=16, SHARED_MEMORY_SIZE=0, PROGRAM_ADDRESS_LOWER=0x12345600,
             PROGRAM_ADDRESS_UPPER=0x7F, **{"CONSTANT_BUFFER_VALID(0)": 1,
                                             "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)": (CB0_VA >> 6) & 0xFFFFFFFF,
                                             "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)": CB0_VA >> 38,
                                             "CONSTANT_BUFFER_SIZE_SHIFTED4(0)": 0x1000,
                                             "RELEASE_ENABLE(0)": 1},
             RELEASE_SEMAPHORE0_ADDR_LOWER=SEM_VA & 0xFFFFFFFF, RELEASE_SEMAPHORE0_ADDR_UPPER=SEM_VA >> 32,
             RELEASE_SEMAPHORE0_PAYLOAD_LOWER=5)
    f.update(over)
    return pack_words(TABLES["V04_00"].build(**f))


def driver_constants(block=(256, 1, 1), grid=(4096, 1, 1)):
    data = bytearray(0x210)
    struct.pack_into("<6I", data, 0, *block, *grid)
    struct.pack_into("<I", data, 0x28, 0x00FFFDC0)
    return bytes(data)


def synthetic_h100_launch(seq=1, **qmd_over):
    """One cuLaunchKernel in the measured H100 order (h100-measured.md 1, steps 1-7)."""
    words = []
    words += i2m(CB0_VA, driver_constants())                                    # 1
    words += i2m(CB0_VA + 0x210, ARGS)                                          # 2
    words += i2m(QMD_PREV_VA, v04_qmd(GRID_WIDTH=1, CTA_THREAD_DIMENSION0=32))  # 3
    words += encode(INC, C, 0x2B4, [QMD_PREV_VA >> 8])                          # 4
    words += encode(INC, C, 0x2C0, [0xA])
    words += i2m(QMD_VA, v04_qmd(**{"DEPENDENT_QMD0_POINTER": QMD_PREV_VA >> 8, **qmd_over}))  # 5
    words += encode(INC, C, 0x2B4, [QMD_VA >> 8])
    words += encode(INC, C, 0x2C0, [0xA])
    words += i2m(SEM_VA, struct.pack("<I", 5))                                  # 6
    words += encode(INC, C, 0x1B00, [SEM_VA >> 32, SEM_VA & 0xFFFFFFFF, seq, 4])  # 7
    return pack_words(words)


def decode(data, gpu="hopper"):
    dec = StreamDecoder(gpu=gpu)
    pkts = dec.feed(data, 0x7F00_0000_0000)
    dec.finish()
    ld = LaunchDecoder(gpu=gpu)
    ld.feed_methods(pkts)
    return dec, ld


def test_synthetic_h100_order_reconstructs_launch():
    dec, ld = decode(synthetic_h100_launch())
    assert dec.problems == []
    assert ld.problems == []
    assert len(ld.launches) == 2
    s = ld.launches[1].summary
    assert s["qmd_version"] == "V04_00"
    assert s["qmd_address"] == QMD_VA
    assert s["grid"] == [4096, 1, 1] and s["cluster"] is None
    assert s["block"] == [256, 1, 1]
    assert s["registers"] == 16
    assert s["program_address"] == 0x7F12345600
    assert s["constant_buffers"][0] == {"index": 0, "address": CB0_VA, "size": 0x10000, "valid": True}
    assert s["params"]["offset"] == 0x210
    assert bytes.fromhex(s["params"]["hex"]) == ARGS
    drv = s["cbank0_driver"]["fields"]
    assert (drv["blockDim.x"], drv["gridDim.x"], drv["stack_pointer_init"]) == (256, 4096, 0x00FFFDC0)
    sources = [x["source"] for x in s["semaphores"]]
    assert sources == ["qmd.RELEASE0", "SET_REPORT_SEMAPHORE"]
    assert s["semaphores"][0]["address"] == SEM_VA and s["semaphores"][0]["payload"] == 5
    assert s["semaphores"][1]["payload"] == 1
    assert s["semaphores"][1]["fields"]["STRUCTURE_SIZE"] == "FOUR_WORDS"
    assert s["qmd_fields"]["GRID_WIDTH"] == 4096
    # The launch's QMD points at the previous one: it is not decoded twice.
    assert s["dependents"] == []  # DEPENDENT_QMD_ENABLE(0) is 0 in this stream
    assert ld.memory.read(SEM_VA, 4) == struct.pack("<I", 5)


def test_node_tree_paths():
    _, ld = decode(synthetic_h100_launch())
    node = ld.launches[1].node
    assert node.find("qmd.v04_00.grid_width").raw == 4096
    assert node.find("qmd.v04_00.qmd_type").display == "GRID_CTA"
    assert node.find("qmd.v04_00.constant_buffer_valid_0").raw == 1
    assert node.find("launch.grid").raw == [4096, 1, 1]


def test_cluster_grid_counts_clusters():
    _, ld = decode(synthetic_h100_launch(QMD_TYPE=3, GRID_WIDTH=64, GRID_HEIGHT=2,
                                         GPC_CGA_WIDTH=2, GPC_CGA_HEIGHT=1, GPC_CGA_DEPTH=1))
    s = ld.launches[1].summary
    assert s["qmd_type"] == "GRID_GPC_CGA"
    assert s["cluster"] == [2, 1, 1]
    assert s["grid_raw"] == [64, 2, 1]
    assert s["grid"] == [128, 2, 1]
    assert s["grid_units"] == "clusters"


def test_dynamic_shared_memory_reserved_part():
    _, ld = decode(synthetic_h100_launch(SHARED_MEMORY_SIZE=4096 + 1024))
    s = ld.launches[1].summary
    assert s["shared_memory_bytes"] == 5120
    assert s["shared_memory_driver_reserved_bytes"] == 1024


def test_dependent_qmd_chain_followed():
    # Previous QMD written but never scheduled by SEND_PCAS: reached only through the pointer.
    words = i2m(QMD_PREV_VA, v04_qmd(GRID_WIDTH=7))
    words += i2m(QMD_VA, v04_qmd(**{"DEPENDENT_QMD0_POINTER": QMD_PREV_VA >> 8,
                                    "DEPENDENT_QMD_ENABLE(0)": 1, "DEPENDENT_QMD_ACTION(0)": 1}))
    words += encode(INC, C, 0x2B4, [QMD_VA >> 8])
    _, ld = decode(pack_words(words))
    assert [l.summary["qmd_address"] for l in ld.launches] == [QMD_VA, QMD_PREV_VA]
    assert ld.launches[1].summary["grid"] == [7, 1, 1]
    assert ld.launches[1].summary["source"] == "DEPENDENT_QMD0_POINTER"
    assert ld.launches[1].summary["parent_qmd"] == QMD_VA


def test_synthetic_ada_inline_qmd():
    qmd = TABLES["V03_00"].build(QMD_MAJOR_VERSION=3, CTA_RASTER_WIDTH=8, CTA_RASTER_HEIGHT=2,
                                 CTA_RASTER_DEPTH=1, CTA_THREAD_DIMENSION0=64,
                                 CTA_THREAD_DIMENSION1=1, CTA_THREAD_DIMENSION2=1,
                                 REGISTER_COUNT_V=24, SHARED_MEMORY_SIZE=0x800,
                                 PROGRAM_ADDRESS_LOWER=0x1000, PROGRAM_ADDRESS_UPPER=0x2,
                                 **{"CONSTANT_BUFFER_VALID(0)": 1,
                                    "CONSTANT_BUFFER_ADDR_LOWER(0)": CB0_VA & 0xFFFFFFFF,
                                    "CONSTANT_BUFFER_ADDR_UPPER(0)": CB0_VA >> 32,
                                    "CONSTANT_BUFFER_SIZE_SHIFTED4(0)": 0x100})
    cb = bytearray(0x170)
    cb[0x160:0x168] = struct.pack("<Q", 0xDEADBEEF)
    words = (encode(INC, C, 0, [0xC9C0]) + i2m(CB0_VA, bytes(cb))
             + encode(INC, C, 0x318, [QMD_VA >> 40, (QMD_VA >> 8) & 0xFFFFFFFF])
             + encode(INC, C, 0x320, qmd))
    dec, ld = decode(pack_words(words), gpu="ada")
    assert dec.problems == [] and ld.problems == []
    (launch,) = ld.launches
    s = launch.summary
    assert s["source"] == "LOAD_INLINE_QMD_DATA" and s["qmd_version"] == "V03_00"
    assert s["qmd_address"] == QMD_VA
    assert s["grid"] == [8, 2, 1] and s["block"] == [64, 1, 1] and s["registers"] == 24
    assert s["program_address"] == 0x200001000
    assert s["params"]["offset"] == 0x160
    assert bytes.fromhex(s["params"]["hex"])[:8] == struct.pack("<Q", 0xDEADBEEF)


def test_copy_engine_transfer_reconstructed():
    src, dst = 0x1000_0000, 0x2000_0000
    words = i2m(src, b"ABCDEFGH")
    words += encode(INC, 4, 0x400, [0, src, 0, dst])
    words += encode(INC, 4, 0x418, [8, 1])
    words += encode(INC, 4, 0x300, [2 | (1 << 7) | (1 << 8)])  # NON_PIPELINED, PITCH/PITCH
    _, ld = decode(pack_words(words))
    assert ld.memory.read(dst, 8) == b"ABCDEFGH"
    assert ld.copies[0]["reconstructed"] is True


def test_memory_lookup_callback_supplies_qmd():
    qmd = v04_qmd(GRID_WIDTH=3)
    ld = LaunchDecoder(memory_lookup=lambda va, n: qmd[:n] if va == QMD_VA else None)
    res = decode_dump(pack_words(encode(INC, C, 0x2B4, [QMD_VA >> 8])))
    ld.feed_methods(res.methods)
    assert ld.launches[0].summary["grid"] == [3, 1, 1]


def test_missing_qmd_is_a_problem_not_an_error():
    _, ld = decode(pack_words(encode(INC, C, 0x2B4, [0x1234])))
    assert ld.launches == [] and "not in the reconstructed" in ld.problems[0]["message"]


def test_sparse_memory():
    m = SparseMemory()
    m.write(4090, b"0123456789")
    assert m.read(4090, 10) == b"0123456789"
    assert m.read(4089, 2) is None
    assert m.read_known(4095, 100) == b"56789"


def _summaries(data):
    return [l.summary for l in decode(data)[1].launches]


def test_summary_parts_remembered_equal_fresh():
    """synthetic-h100: summary parts (shape, constant banks, releases) are remembered per
    distinct words, params and cbank0_driver per distinct bytes; a launch decoded from
    remembered parts equals one decoded with none, including after its varying words
    (payload, cbank address, grid) change."""
    from decoders.launch import summary as L

    def forget():
        for cache in (L._SUMMARY_PLANS, L._PARAMS, L._DRIVER):
            cache.clear()
    first = synthetic_h100_launch(seq=1)
    other = synthetic_h100_launch(seq=9, RELEASE_SEMAPHORE0_PAYLOAD_LOWER=77, GRID_WIDTH=3,
                                  **{"CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(5)": 0x1234,
                                     "CONSTANT_BUFFER_VALID(5)": 1})
    forget()
    cold = _summaries(first)
    warm = _summaries(first)
    assert warm == cold
    warm_other = _summaries(other)
    forget()
    assert _summaries(other) == warm_other
    assert warm_other != cold
    s = warm_other[1]
    assert s["semaphores"][0]["payload"] == 77 and s["grid"] == [3, 1, 1]
    assert [cb["index"] for cb in s["constant_buffers"]] == [0, 5]
    # each summary has its own lists and dicts: changing one changes no other
    warm[1]["grid"].append(0)
    warm[1]["constant_buffers"][0]["size"] = 1
    warm[1]["semaphores"][0]["fields"].clear()
    assert _summaries(first) == cold


def test_sparse_memory_recent_writes_equal_pages():
    """synthetic-memory: reads answered from the recent-write cache (SparseMemory.RECENT)
    equal reads from the pages alone, whatever overlaps, page crossings and lengths."""
    import random
    rnd = random.Random(11)
    cached, plain = SparseMemory(), SparseMemory()
    plain.RECENT = 0
    for step in range(4000):
        va = 0x1000_0000 + rnd.randrange(3 * 4096)
        if rnd.random() < 0.4:
            data = bytes(rnd.randrange(256) for _ in range(rnd.choice((1, 4, 384, 528, 4100))))
            cached.write(va, data)
            plain.write(va, data)
        else:
            n = rnd.choice((0, 1, 4, 256, 384, 528, 600))
            assert cached.read(va, n) == plain.read(va, n)
            assert cached.read_known(va, n) == plain.read_known(va, n)
        assert len(plain._recent) == 0


def _decode_captured(name, planned):
    """Summaries of a real capture's launches, handler calls planned per template or not."""
    import os
    import pytest
    from decoders.capture.reader import read_capture
    from decoders.submissions import decode_submissions
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    _, records = read_capture(path)
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"][:3000]
    original = LaunchDecoder.feed_template
    if not planned:
        # every packet of a replayed segment walked, as feed_raw does with no template
        LaunchDecoder.feed_template = lambda self, channel, tpl, binding, host, words, data, \
            base, va: self.feed_raw(tpl.replay(words, base, va, dict(binding), host), channel)
    try:
        result = decode_submissions(subs, gpu="hopper")
    finally:
        LaunchDecoder.feed_template = original
    return [l.summary for l in result.launches], [str(p) for p in result.problems]


def test_planned_handler_calls_equal_packet_walk():
    """captures/launch-loop-10k, torch-small, builtin-vadd, two-streams: a replayed segment's
    handler calls planned once per (template, binding, host class) as word-level ops
    (LaunchDecoder.feed_template, _compile) give the same launches, semaphores and problems
    as walking every packet."""
    for name in ("launch-loop-10k", "torch-small", "builtin-vadd", "two-streams"):
        assert _decode_captured(name, True) == _decode_captured(name, False), name


def test_a_node_sent_after_its_chain_reached_it_runs_once_as_sent():
    """A graph replay whose nodes the driver rewrites (captures/jax-loops record 10634,
    cupy-fft record 1476): the head's SEND_PCAS_A, whose chain reaches the nodes' earlier
    bytes, then each node rewritten and sent by its own SEND_PCAS_A. Each node runs once,
    with the bytes as sent, in its place in the chain; listed as sent, run_order puts them
    in chain order."""
    from decoders.launch.qmds import run_order
    head, b, c = QMD_VA, QMD_PREV_VA, QMD_PREV_VA + 0x200
    chain = {"DEPENDENT_QMD_ENABLE(0)": 1, "DEPENDENT_QMD_ACTION(0)": 1}

    def node(va, program, after=None):
        return i2m(va, v04_qmd(PROGRAM_ADDRESS_LOWER=program,
                               **({"DEPENDENT_QMD0_POINTER": after >> 8, **chain} if after else {})))

    def send(va):
        return encode(INC, C, 0x2B4, [va >> 8]) + encode(INC, C, 0x2C0, [0xA])

    for resent in ([b, c], [c, b]):
        words = node(c, 0x1000) + node(b, 0x2000, c) + node(head, 0x3000, b) + send(head)
        for va in resent:       # rewritten (a new program address), then sent
            words += node(va, 0x9000 + (va & 0xFFF), c if va == b else None) + send(va)
        _, ld = decode(pack_words(words))
        assert ld.problems == []
        got = [l.summary for l in ld.launches]
        assert [s["qmd_address"] for s in got] == [head] + resent
        ran = [l.summary for l in run_order(ld.launches)]
        assert [(s["qmd_address"], s["parent_qmd"], s["program_address"] & 0xFFFF)
                for s in ran] == [(head, None, 0x3000), (b, head, 0x9200), (c, b, 0x9400)]
        assert all(s["source"] == "SEND_PCAS_A" for s in ran)
        assert [s.get("sent_order") for s in ran] == \
            ([None] * 3 if resent == [b, c] else [0, 2, 1])
