"""Fuzz: random and truncated argument bytes never raise out of the ioctl decoders (synthetic)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders.escapes import numbers as ESC
from decoders.ioctl import coverage, decode_ioctl, summarize
from decoders.rm.objects import ObjectTree
from decoders.uvm.ioctls import UVM_IOCTLS
from ioctl_helpers import CTL_PATH, DEV_PATH, UVM_PATH, buf, nv_request, rec

NRS = sorted(ESC.ESCAPES) + [0x44, 0xFF]
UVM_NUMBERS = sorted(UVM_IOCTLS) + [0x99]
CMDS = [0xC36F0108, 0x20800110, 0x20800102, 0x20800170, 0x00800201, 0x20808159, 0x0000013E,
        # params holding followed pointers, and a union rendered by its tag (issue 18)
        0x20801201, 0x0080170D, 0x00000101, 0x20801802, 0x20803801]


@st.composite
def nv_records(draw):
    nr = draw(st.sampled_from(NRS))
    size = draw(st.integers(0, 600))
    before = draw(st.binary(max_size=size))
    after = draw(st.binary(max_size=size))
    flags = draw(st.integers(0, 15))
    bufs = []
    for _ in range(draw(st.integers(0, 4))):
        role = draw(st.integers(0, 5))
        data = draw(st.binary(max_size=400))
        bufs.append(buf(role, data, draw(st.binary(max_size=400)), flags=draw(st.integers(0, 7)),
                        size=draw(st.integers(0, 500)),
                        field=draw(st.sampled_from([0, 8, 16, 24, 3, 1 << 20]))))
    path = draw(st.sampled_from([CTL_PATH, DEV_PATH, b"", b"/dev/null"]))
    if nr == 0x2A and len(before) >= 12 and draw(st.booleans()):
        cmd = draw(st.sampled_from(CMDS)).to_bytes(4, "little")
        before = before[:8] + cmd + before[12:]
    return rec(nv_request(nr, size), before, after, path=path, flags=flags, buffers=bufs,
               ret=draw(st.sampled_from([0, -1])), err=draw(st.integers(0, 200)), arg_size=size)


@st.composite
def uvm_records(draw):
    number = draw(st.sampled_from(UVM_NUMBERS))
    before = draw(st.binary(max_size=300))
    return rec(number, before, draw(st.binary(max_size=300)), path=UVM_PATH,
               flags=draw(st.integers(0, 7)), arg_size=draw(st.integers(0, 10000)))


@settings(max_examples=300, deadline=None)
@given(st.one_of(nv_records(), uvm_records()), st.sampled_from(["580", "595", "610", "580.159.04"]))
def test_random_records_never_raise(r, branch):
    node = decode_ioctl(r, branch=branch)
    assert node.display
    assert isinstance(summarize(r, branch), str)
    tree = ObjectTree(branch)
    tree.feed_ioctl(r)
    tree.feed_mmap(0x7F0000000000, 0x1000, 3, "/dev/nvidia0", 0)
    tree.resolve_va(0x7F0000000800)
    tree.to_text()
    tree.to_json()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(nv_records(), uvm_records()), max_size=8))
def test_coverage_is_fractions(records):
    cov = coverage(records)
    for value in list(cov["named"].values()) + [cov["params_decoded"]]:
        assert 0.0 <= value <= 1.0
