"""Word-level ops (LaunchDecoder.feed_template / _compile) == walking every packet.

synthetic-ops-*: streams made with decoders.pushbuf.encode, fed twice or more so the later
segments replay a template; each is decoded once through feed_template (ops planned per
template) and once through feed_raw on the replayed packets, and everything the launch
decoder leaves behind must be equal: launches (summary, every QMD field), problems,
memory image, copies, unreconstructed transfers, uploads, channel state.
"""
import struct

import pytest

from decoders import pushbuf
from decoders.launch import LaunchDecoder
from decoders.pushbuf import IMMD, INC, NON_INC, ONE_INC, StreamDecoder, encode, pack_words

from tests.test_launch_decode import (CB0_VA, QMD_PREV_VA, QMD_VA, SEM_VA, driver_constants,
                                      i2m, synthetic_h100_launch, v04_qmd)

C = 1


def _state(ld):
    chans = {}
    for key, ch in ld._channels.items():
        chans[key] = (
            {s: (st.line_length, st.line_count, st.upper, st.lower, st.pitch, st.dst, st.need,
                 bytes(st.buf), st.layout_pitch, st.sem_upper, st.sem_lower, st.sem_payload)
             for s, st in ch.i2m.items()},
            ch.copy, ch.inline_upper, ch.inline_lower, ch.inline_size, ch.inline_words,
            ch.report, ch.report2, ch.host_sem)
    pages = {p: (bytes(d), bytes(k)) for p, (d, k) in ld.memory._pages.items()}
    return ([l.summary for l in ld.launches], ld.problems, pages, ld.memory._recent,
            ld.copies, ld.unreconstructed, ld._uploads, chans)


def _decode(segments, ops):
    """Feed segments (bytes, va) as SubmissionDecoder does (ops=True) or as packets."""
    pushbuf._TEMPLATES.clear()
    dec = StreamDecoder(gpu="hopper")
    ld = LaunchDecoder(gpu="hopper")
    replayed = 0
    for data, va in segments:
        packets = dec.feed_raw(data, va, packets=not ops)
        if packets is None:
            replayed += 1
            ld.feed_template("ch", dec.template, tuple(dec.binding.items()), dec.host_class,
                             dec.words, dec.data, dec.base, va)
        else:
            ld.feed_raw(packets, channel="ch")
    return _state(ld), replayed, dec.problems


def _same(segments, want_replayed=1):
    a, replayed, pa = _decode(segments, True)
    b, _, pb = _decode(segments, False)
    assert replayed >= want_replayed
    assert a == b and [p.to_json() for p in pa] == [p.to_json() for p in pb]
    return a


def test_ops_equal_packet_walk_h100_order():
    """synthetic-ops-h100: the measured launch order, the same template three times with
    other data words (QMD ring slot, payloads)."""
    segs = [(synthetic_h100_launch(seq), 0x7F00_0000_0000 + 0x1000 * seq) for seq in (1, 2, 3)]
    launches = _same(segs, 2)[0]
    assert len(launches) == 6


def test_ops_equal_packet_walk_problems():
    """synthetic-ops-problems: inline data with no transfer open, data beyond LINE_LENGTH_IN x
    LINE_COUNT, LAUNCH_DMA while bytes are still expected, a block-linear transfer, a QMD not
    in memory, a QMD with no known version: the same problems at the same offsets."""
    words = []
    words += encode(NON_INC, C, 0x1B4, [1, 2])                             # nothing open
    words += i2m(CB0_VA, b"\1" * 8)[:-3] + encode(NON_INC, C, 0x1B4, [1, 2, 3, 4])  # 8 extra
    words += encode(INC, C, 0x188, [SEM_VA >> 32, SEM_VA & 0xFFFFFFFF]) + encode(INC, C, 0x180, [16, 1])
    words += encode(INC, C, 0x1B0, [0x41]) + encode(INC, C, 0x1B0, [0x40])  # block-linear
    words += encode(NON_INC, C, 0x1B4, [5, 6, 7, 8])
    words += encode(INC, C, 0x2B4, [0x1234])                               # not in memory
    words += i2m(QMD_VA, b"\0" * 384) + encode(INC, C, 0x2B4, [QMD_VA >> 8])  # no version
    seg = pack_words(words)
    state = _same([(seg, 0x1000), (seg, 0x2000), (seg, 0x3000)], 2)
    assert len(state[1]) >= 10


def test_ops_equal_packet_walk_forms_and_semaphores():
    """synthetic-ops-forms: registers and data sent INC, ONE_INC, NON_INC and IMMD, split
    uploads (LOAD_INLINE_DATA one word at a time), I2M completion semaphore (LAUNCH_DMA
    COMPLETION_TYPE 2), host SEM_*, report semaphores, pitched multi-line uploads, a
    second subchannel, CALL_MME_MACRO with an open transfer."""
    words = []
    words += encode(INC, C, 0x1DC, [SEM_VA >> 32, SEM_VA & 0xFFFFFFFF, 9])      # I2M semaphore
    words += encode(INC, C, 0x188, [CB0_VA >> 32, CB0_VA & 0xFFFFFFFF])
    words += encode(ONE_INC, C, 0x180, [8, 2])                                  # 2 lines of 8
    words += encode(INC, C, 0x190, [0x100])                                     # pitch
    words += encode(INC, C, 0x1B0, [0x61])                                      # completion 2
    words += encode(INC, C, 0x1B4, [1, 2]) + encode(IMMD, C, 0x1B4, [3])
    words += encode(NON_INC, C, 0x1B4, [4])
    words += encode(INC, 2, 0x188, [0, 0x5000]) + encode(INC, 2, 0x180, [4, 1])
    words += encode(INC, 2, 0x1B0, [0x41]) + encode(NON_INC, 2, 0x1B4, [0xABCD])
    words += i2m(QMD_PREV_VA, v04_qmd(GRID_WIDTH=1, CTA_THREAD_DIMENSION0=32))
    words += encode(INC, C, 0x2B4, [QMD_PREV_VA >> 8])
    words += encode(INC, 0, 0x5C, [SEM_VA & 0xFFFFFFFF, SEM_VA >> 32, 3, 0, 1])   # host SEM
    words += encode(IMMD, C, 0x1B0C, [2]) + encode(INC, C, 0x1B00, [SEM_VA >> 32, SEM_VA & 0xFFFFFFFF, 4])
    words += encode(INC, C, 0x1B0C, [4])
    words += encode(INC, C, 0x158, [7, 0, SEM_VA & 0xFFFFFFFF, SEM_VA >> 32, 1])   # report2
    words += encode(INC, C, 0x188, [0, 0x6000]) + encode(INC, C, 0x180, [4, 1])
    words += encode(INC, C, 0x1B0, [0x41]) + encode(INC, C, 0x3800, [0])         # MME supplies
    seg = pack_words(words)
    segs = [(seg, 0x1000 * k) for k in range(1, 4)]
    state = _same(segs, 2)
    assert len(state[0]) == 3 and state[5]                  # launches, unreconstructed


def test_ops_equal_packet_walk_upload_changes_between_replays():
    """synthetic-ops-delta: the same template whose data words change what a QMD read sees:
    a QMD uploaded by one submission and launched by the next, cbank0 contents and
    destination addresses that differ each time, a QMD that stops being valid."""
    def seg(dst, qmd, launch_va, payload):
        words = i2m(dst, qmd) + encode(INC, C, 0x2B4, [launch_va >> 8])
        words += i2m(CB0_VA, driver_constants(grid=(payload, 1, 1)))
        return pack_words(words)
    a, b = QMD_VA, QMD_VA + 0x400
    q = v04_qmd()
    segs = [(seg(a, q, a, 1), 0), (seg(b, q, a, 2), 0x800),          # launches a again
            (seg(a, b"\0" * 384, b, 3), 0x1000),                      # a becomes junk
            (seg(b, v04_qmd(GRID_WIDTH=7), a, 4), 0x1800)]           # launches junk a
    _same(segs, 3)


@pytest.mark.parametrize("name", ["launch-loop-10k", "two-streams"])
def test_ops_equal_packet_walk_real(name):
    """Real captures: feed_template == feed_raw on the replayed packets, summaries and
    problems of every launch (tests/test_launch_decode.py covers more captures)."""
    from tests.test_launch_decode import _decode_captured
    assert _decode_captured(name, True) == _decode_captured(name, False)


def test_upload_register_positions_equal_writes_in_order():
    """synthetic-regs: an upload op's register writes, folded to the word of each register's
    last write (_reg_positions), leave the I2M state the writes in order leave, whatever
    the order and repeats."""
    import itertools
    import random
    from decoders.launch.channel import _I2M, _I2M_ORDER, _reg_positions
    rnd = random.Random(3)
    words = [rnd.randrange(1 << 32) for _ in range(64)]
    for n in range(0, 8):
        for _ in range(40):
            regs = tuple((rnd.choice(_I2M_ORDER), rnd.randrange(64)) for _ in range(n))
            a, b = _I2M(), _I2M()
            for name, j in regs:
                setattr(a, name, words[j])
            for name, j in zip(_I2M_ORDER, _reg_positions(regs)):
                if j is not None:
                    setattr(b, name, words[j])
            assert [getattr(a, x) for x in _I2M_ORDER] == [getattr(b, x) for x in _I2M_ORDER]
    assert list(itertools.islice(_I2M_ORDER, 5)) == ["line_length", "line_count", "upper",
                                                     "lower", "pitch"]
