"""Method-stream decoding: every header form, split sequences, truncation, binding, fuzz."""
import json
import struct

from hypothesis import given, settings, strategies as st

from decoders.pushbuf import (END_PB_SEGMENT, HEADER, IMMD, INC, NON_INC, NOP, ONE_INC,
                              SET_SUBDEVICE_MASK, STORE_SUBDEVICE_MASK, USE_SUBDEVICE_MASK,
                              StreamDecoder, decode_dump, encode, pack_words)


def dump(*parts):
    words = []
    for p in parts:
        words += p
    return pack_words(words)


def test_inc_non_inc_one_inc_immd():
    r = decode_dump(dump(encode(INC, 1, 0x2B4, [1, 2]), encode(NON_INC, 1, 0x1B4, [3, 4]),
                         encode(ONE_INC, 1, 0x180, [5, 6, 7]), encode(IMMD, 1, 0x110, [0x1FFF])))
    assert r.problems == []
    forms = [p.form for p in r.methods]
    assert forms == [INC, NON_INC, ONE_INC, IMMD]
    assert r.methods[0].calls() == [(0x2B4, 1), (0x2B8, 2)]
    assert r.methods[1].calls() == [(0x1B4, 3), (0x1B4, 4)]
    assert r.methods[2].calls() == [(0x180, 5), (0x184, 6), (0x184, 7)]
    assert r.methods[3].calls() == [(0x110, 0x1FFF)]


def test_control_entries_and_nop():
    words = [0,
             HEADER.build(TERT_OP=1, SUBDEVICE_MASK=0x5, SEC_OP=0)[0],
             HEADER.build(TERT_OP=2, SUBDEVICE_MASK=0x3)[0],
             HEADER.build(TERT_OP=3)[0]]
    r = decode_dump(pack_words(words))
    assert [p.form for p in r.methods] == [NOP, SET_SUBDEVICE_MASK, STORE_SUBDEVICE_MASK,
                                           USE_SUBDEVICE_MASK]
    assert r.methods[1].data == (5,) and r.methods[2].data == (3,)
    assert r.problems == []


def test_end_pb_segment_stops_decoding():
    r = decode_dump(dump(encode(INC, 1, 0x110, [0]), encode(END_PB_SEGMENT, 0, 0), [0x11111111]))
    assert [p.form for p in r.methods] == [INC, END_PB_SEGMENT]
    assert r.problems[0].offset == 12


def test_invalid_headers_skip_one_word():
    r = decode_dump(pack_words([0xC0000000, 0x40000000, *encode(INC, 1, 0x110, [9])]))
    assert [p.form for p in r.methods] == ["INVALID", "INVALID", INC]
    assert [p.offset for p in r.problems] == [0, 4]


def test_default_binding_is_assumed_and_set_object_overrides():
    r = decode_dump(dump(encode(INC, 1, 0x2B4, [1]), encode(INC, 4, 0x300, [0]),
                         encode(INC, 1, 0, [0xC9C0]), encode(INC, 1, 0x2B4, [1])), gpu="hopper")
    a, b, so, c = r.methods
    assert (a.class_id, a.assumed) == (0xCBC0, True)
    assert (b.class_id, b.assumed) == (0xC8B5, True)
    assert (so.class_id, so.assumed) == (0xC9C0, False)
    assert (c.class_id, c.assumed) == (0xC9C0, False)


def test_default_binding_per_family():
    for gpu, cls in (("ampere", 0xC7C0), ("ada", 0xC9C0), ("hopper", 0xCBC0),
                     ("blackwell", 0xCEC0), ("ga100", 0xC6C0), ("gb100", 0xCDC0)):
        assert decode_dump(pack_words(encode(INC, 1, 0x2B4, [1])), gpu=gpu).methods[0].class_id == cls


def test_host_methods_on_any_subchannel():
    r = decode_dump(pack_words(encode(INC, 5, 0x5C, [0x1000, 0, 7, 0, 0x01000001])))
    pkt = r.methods[0]
    names = [pkt.describe(m, v)[0] for m, v in pkt.calls()]
    assert names == ["SEM_ADDR_LO", "SEM_ADDR_HI", "SEM_PAYLOAD_LO", "SEM_PAYLOAD_HI", "SEM_EXECUTE"]


def test_unknown_method_shows_raw_value():
    pkt = decode_dump(pack_words(encode(INC, 1, 0x278, [0xABCD]))).methods[0]
    assert pkt.describe(0x278, 0xABCD) == ("UNKNOWN_0x0278", "UNKNOWN_0x0278: 0x0000abcd")
    unbound = decode_dump(pack_words(encode(INC, 6, 0x400, [1]))).methods[0]
    assert unbound.class_id is None and unbound.describe(0x400, 1)[0] == "UNKNOWN_0x0400"


def test_sequence_carried_across_segments():
    words = encode(INC, 1, 0x180, [1, 2, 3, 4]) + encode(NON_INC, 1, 0x1B4, [5, 6, 7])
    data = pack_words(words)
    dec = StreamDecoder()
    first = dec.feed(data[:12], va=0x1000)          # header + 2 of 4 words
    second = dec.feed(data[12:28], va=0x2000)        # 2 words, next header, 1 word
    third = dec.feed(data[28:], va=0x3000)
    dec.finish()
    assert dec.problems == []
    assert first[0].calls() == [(0x180, 1), (0x184, 2)] and first[0].expected == 4
    assert second[0].continued and second[0].calls() == [(0x188, 3), (0x18C, 4)]
    assert second[0].va == 0x2000
    assert second[1].calls() == [(0x1B4, 5)]
    assert third[0].continued and third[0].calls() == [(0x1B4, 6), (0x1B4, 7)]


def test_one_inc_carried_after_first_word():
    data = pack_words(encode(ONE_INC, 1, 0x180, [1, 2, 3]))
    dec = StreamDecoder()
    a = dec.feed(data[:8])
    b = dec.feed(data[8:])
    assert a[0].calls() == [(0x180, 1)]
    assert b[0].calls() == [(0x184, 2), (0x184, 3)]


def test_truncated_dump_reports_offset_and_keeps_data():
    data = pack_words(encode(NON_INC, 1, 0x1B4, [1, 2, 3, 4]))[:-8]
    r = decode_dump(data)
    assert r.methods[0].data == (1, 2)
    (p,) = r.problems
    assert p.offset == len(data) == 12 and "2 data word(s) missing" in p.message
    assert "0xc" in p.message


def test_partial_trailing_word():
    r = decode_dump(pack_words(encode(INC, 1, 0x110, [1])) + b"\x01\x02")
    assert r.problems[0].offset == 8 and "trailing" in r.problems[0].message


def test_to_json():
    out = json.loads(decode_dump(pack_words(encode(INC, 1, 0x2C0, [3])), va=0x1000).to_json())
    m = out["packets"][0]["methods"][0]
    assert m["display"].startswith("SEND_SIGNALING_PCAS2_B: PCAS_ACTION = INVALIDATE_COPY_SCHEDULE")
    assert out["packets"][0]["class"] == "0xcbc0" and out["packets"][0]["va"] == 0x1000


def _valid_stream(draw):
    words = []
    for _ in range(draw(st.integers(0, 12))):
        n = draw(st.integers(1, 8))
        form = draw(st.sampled_from([INC, NON_INC, ONE_INC]))
        words += encode(form, draw(st.integers(0, 7)), 4 * draw(st.integers(0, 0xFFF)),
                        [draw(st.integers(0, 0xFFFFFFFF)) for _ in range(n)])
    return pack_words(words)


@st.composite
def mutated_dumps(draw):
    data = bytearray(_valid_stream(draw))
    for _ in range(draw(st.integers(0, 6))):
        if data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
    cut = draw(st.integers(0, len(data)))
    return bytes(data[:cut])


@settings(max_examples=300, deadline=None)
@given(st.one_of(mutated_dumps(), st.binary(max_size=512)))
def test_fuzz_never_raises_and_reports_where_it_stopped(data):
    from decoders.launch import LaunchDecoder
    r = decode_dump(data)
    for p in r.problems:
        assert 0 <= p.offset <= len(data)
    json.loads(r.to_json())
    ld = LaunchDecoder()
    ld.feed_methods(r.methods)
    if len(data) % 4:
        assert any("trailing" in p.message for p in r.problems)
    last = r.methods[-1] if r.methods else None
    if last is not None and last.expected > len(last.data):
        assert any(p.offset == len(data) - len(data) % 4 or p.offset == len(data)
                   for p in r.problems)


def test_gp_entry_segment_and_control():
    from decoders.gpfifo import decode_entry, encode_entry
    e = decode_entry(encode_entry(0x12_3456_7000, 0x186, level=1, sync=1))
    assert (e["kind"], e["address"], e["length_dwords"], e["level"], e["sync"]) == (
        "segment", 0x12_3456_7000, 390, "SUBROUTINE", "WAIT")
    c = decode_entry((4 << 32) | (0x7F << 8))
    assert c["kind"] == "control" and c["opcode"] == "SET_PB_SEGMENT_EXTENDED_BASE"
    assert c["extended_base"] == 0x7F << 40
    assert decode_entry(0)["opcode"] == "NOP"


def _fresh_templates():
    from decoders import pushbuf
    pushbuf._TEMPLATES.clear()


def test_segment_template_replay_equals_fresh_parse():
    """synthetic-template: a segment with the header words of an earlier one is replayed
    from that one's template; the packets equal those of a parse with no template."""
    from decoders import pushbuf

    def seg(a, b, c):
        return dump(encode(INC, 1, 0x188, [a, b]), [0], encode(NON_INC, 1, 0x1B4, [c, c ^ 0xFFFFFFFF, 7]),
                    encode(IMMD, 1, 0x110, [0x12]), HEADER.build(TERT_OP=3))
    first, second = seg(1, 2, 3), seg(0x7F, 0xDEAD0000, 0xFFFFFFFF)
    _fresh_templates()
    dec = StreamDecoder()
    a = dec.feed_raw(first, 0x1000)
    assert pushbuf._TEMPLATES                                   # remembered
    hit = dec.feed_raw(second, 0x2000)                          # replayed
    _fresh_templates()
    miss = StreamDecoder()
    miss.feed_raw(first, 0x1000)
    _fresh_templates()
    fresh = miss.feed_raw(second, 0x2000)                       # parsed
    assert hit == fresh and hit != a
    assert [p[pushbuf.RAW_DATA] for p in hit][:3] == [(0x7F, 0xDEAD0000), (), (0xFFFFFFFF, 0, 7)]
    assert dec.position == miss.position and dec.problems == miss.problems == []


def test_segment_template_follows_binding_and_skips_state_changes():
    """synthetic-template: SET_OBJECT segments are never replayed (they change the
    binding), and a replay takes the binding as it stands."""
    from decoders import pushbuf
    _fresh_templates()
    dec = StreamDecoder(gpu="hopper")
    plain = dump(encode(INC, 1, 0x2B4, [1]))
    dec.feed_raw(plain)
    set_obj = dump(encode(INC, 1, 0, [0xC9C0]))
    dec.feed_raw(set_obj)
    assert len(pushbuf._TEMPLATES[2]) == 1                      # only `plain` is kept
    again = dec.feed_raw(plain)                                 # replayed after SET_OBJECT
    assert (again[0][pushbuf.RAW_CLASS], again[0][pushbuf.RAW_ASSUMED]) == (0xC9C0, False)
    # a cut sequence leaves the decoder waiting for data: not a template either
    _fresh_templates()
    cut = pack_words(encode(INC, 1, 0x2B4, [1, 2])[:2])
    dec2 = StreamDecoder()
    dec2.feed_raw(cut)
    assert not pushbuf._TEMPLATES
    dec2.feed_raw(pack_words([3]))
    assert dec2.problems == []


def test_gp_segment_brief_equals_full_decode():
    """synthetic-gp-entries: segment_brief (ENTRY1 part remembered) gives decode_entry's
    kind/address/length/level/sync for segment entries, None for control entries; the
    session's JSON entry is the same either way."""
    import random
    from decoders import session
    from decoders.gpfifo import decode_entry, encode_entry, segment_brief
    rnd = random.Random(7)
    addresses = [rnd.randrange(1 << 40) & ~3 for _ in range(300)]
    values = [encode_entry(a, rnd.randrange(1, 1 << 21), rnd.randrange(2), rnd.randrange(2))
              for a in addresses]
    for a, v in zip(addresses, values):     # GET/GET_HI composed back into the VA
        assert decode_entry(v)["address"] == a == segment_brief(v)[1]
    values += [rnd.randrange(1 << 64) for _ in range(300)] + [0, 1 << 63]
    for v in values * 2:                        # the second pass hits the remembered parts
        d = decode_entry(v)
        brief = segment_brief(v)
        if d["kind"] == "segment":
            assert brief == (d["kind"], d["address"], d["length_bytes"], d["level"], d["sync"])
        else:
            assert brief is None
        want = {"raw": v, **{k: x for k, x in d.items() if k in session._GP_KEYS}}
        assert list(session._gp_entry(v).items()) == list(want.items())


def test_field_composer_equals_shift_and_or():
    """synthetic-words: FieldTable.composer places each field at its bit position and ORs,
    as the hand-written ((hi << 32) | lo) << shift it replaces (QMD addresses, GP GET)."""
    import random
    from decoders.fields import FieldTable
    t = FieldTable("T", [("LO", 0, 0, 32, None), ("HI", 1, 0, 17, None),
                         ("S4", 1, 20, 12, None), ("GET", 2, 2, 30, None)], None, nwords=3)
    compose = t.composer([(("LO", 6), ("HI", 38)), (("S4", 4),), (("GET", 2), ("HI", 32)), ()])
    rnd = random.Random(3)
    for _ in range(500):
        w = [rnd.randrange(1 << 32) for _ in range(3)]
        lo, hi, s4, get = w[0], w[1] & 0x1FFFF, (w[1] >> 20) & 0xFFF, w[2] >> 2
        assert compose(w) == ((((hi << 32) | lo) << 6), s4 << 4, (hi << 32) | (get << 2), 0)
