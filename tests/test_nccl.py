"""NCCL kernel arguments (decoders/cuda/nccl.py, issue 26) on synthetic-* argument bytes
built from the declared structs: no capture holds an NCCL kernel yet (captures/ddp-2rank,
recorded by scripts/record_ddp.sh, will: tests/test_ddp_2rank.py). The function table is
checked against the second numbering NCCL's source has, ncclDevFuncId() in device.h."""
import io

import pytest

from decoders.cuda import nccl as N
from decoders.fields import place

NUM_TYPES, NUM_REDOPS, NUM_PROTOS = 12, 5, 3
ALGO = {a: i for i, a in enumerate(N.ALGOS)}      # NCCL_ALGO_* (nccl_common.h)


def dev_func_row(coll, redop, ty, algo, proto):
    """ncclDevFuncId()'s row (device.h, v2.27.7-1), written from that function's arithmetic."""
    p = N.PROTOS.index(proto) if proto else 0
    op = N.REDOPS.index(redop) if redop else 0
    t = N.TYPES.index(ty) if ty else 0
    four = {"RING": 0, "COLLNET_DIRECT": 1, "NVLS": 2, "PAT": 3}
    row = 0
    if coll == "SendRecv":
        return row
    row += 1
    if coll == "AllGather":
        return row + four[algo] * NUM_PROTOS + p
    row += 4 * NUM_PROTOS
    if coll == "Broadcast":
        return row + p
    row += NUM_PROTOS
    if coll == "AllReduce":
        return row + ((op * NUM_TYPES + t) * 6 + ALGO[algo]) * NUM_PROTOS + p
    row += NUM_REDOPS * NUM_TYPES * 6 * NUM_PROTOS
    if coll == "Reduce":
        return row + (op * NUM_TYPES + t) * NUM_PROTOS + p
    row += NUM_REDOPS * NUM_TYPES * NUM_PROTOS
    return row + ((op * NUM_TYPES + t) * 4 + four[algo]) * NUM_PROTOS + p


def test_function_rows_follow_dev_func_id():
    assert len(N.FUNC_ROWS) == 1 + 4 * 3 + 3 + 5 * 12 * 6 * 3 + 5 * 12 * 3 + 5 * 12 * 4 * 3
    for row, fn in enumerate(N.FUNC_ROWS):
        if fn is not None:
            assert dev_func_row(*fn) == row, fn
    assert N.FUNC_ROWS[dev_func_row("AllReduce", "Sum", "f32", "RING", "SIMPLE")] == \
        ("AllReduce", "Sum", "f32", "RING", "SIMPLE")
    # not built: LL on NVLS, PreMulSum... on NVLS, SumPostDiv of floats
    assert N.FUNC_ROWS[dev_func_row("AllReduce", "Sum", "f32", "NVLS", "LL")] is None
    assert N.FUNC_ROWS[dev_func_row("AllReduce", "SumPostDiv", "f32", "RING", "SIMPLE")] is None


def test_function_table_is_sorted_primaries():
    assert N.FUNCS == tuple(sorted(set(N.FUNCS), key=N._sort_key))
    assert N.FUNCS[-1] == ("SendRecv", None, None, None, None)
    assert ("AllReduce", "Sum", "i32", "RING", "SIMPLE") not in N.FUNCS      # runs the u32 one
    assert ("AllReduce", "MinMax", "i32", "NVLS", "SIMPLE") in N.FUNCS      # signed under NVLS
    for r in N.FUNC_ROWS:
        if r is not None:
            assert N._primary(*r) in N.FUNCS


def test_struct_sizes():
    """sizeof in device.h: the work structs are alignas(16) and the device loads them in
    16-byte packs; ncclDevKernelArgs is 32 B before the batches."""
    assert N.ncclDevKernelArgs.sizeof() == 32
    assert N.ncclDevWorkBatch.sizeof() == 16
    assert N.ncclDevWorkColl.sizeof() == 96
    assert N.ncclDevWorkP2p.sizeof() == 48
    assert N.ncclDevWorkCollReg.sizeof() == 96 + 3 * 8 * 8


def _batch(func_id, work_type, offset_base, bitset, next_jump=0):
    flags = place(next_jump, 0, 14) | place(work_type, 15, 2) | place(func_id, 17, 15)
    return N.ncclDevWorkBatch.build(dict(flags=flags, offsetBase=offset_base, offsetBitset=bitset))


def _coll(lo, hi, count_lo, count_mid, count_hi, send=0x7F0000000000, recv=0x7F0000400000):
    return N.ncclDevWorkColl.build(dict(
        bits=place(lo, 0, 8) | place(hi, 8, 8) | place(16, 16, 8), root=0, recvbuff=recv,
        sendbuff=send, sendbuffOffset=0, recvbuffOffset=0, sendbuffRmtAddrs=0,
        recvbuffRmtAddrs=0, countLo=count_lo, countMid=count_mid, countHi=count_hi,
        chunkGrains=place(4, 0, 21) | place(4, 21, 21), redOpArg=0))


def _args(storage=0, nbatches=2):
    return N.ncclDevKernelArgs.build(dict(comm=0x7F00DEAD0000, channelMask=(1 << nbatches) - 1,
                                          workStorageType=storage, workMask=0xFFFFFFFF,
                                          workBuf=0))


FID = N.FUNCS.index(("AllReduce", "Sum", "f32", "RING", "SIMPLE"))


def test_synthetic_allreduce_two_channels():
    """synthetic: an AllReduce of 2^20 f32 on channels 0-1, the work struct stored in the
    arguments after the two batches (workStorageType Args), as enqueue.cc lays it out."""
    work_at = 32 + 2 * 16
    args = (_args() + _batch(FID, 1, work_at, 1) + _batch(FID, 1, work_at, 1)
            + _coll(0, 1, 1 << 19, 0, 1 << 19))
    d = N.describe(args + bytes(N.KERNEL_ARGS_BYTES - len(args)),
                   "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2)
    assert d["kernel"] == dict(coll="AllReduce", redop="Sum", type="f32", algo="RING", proto="LL")
    assert d["args"]["workStorageType"] == "Args" and d["args"]["comm"] == 0x7F00DEAD0000
    (w,) = d["works"]                       # one struct, shared by both channels' batches
    assert w["blocks"] == [0, 1] and w["offset"] == work_at
    assert w["func"] == dict(coll="AllReduce", redop="Sum", type="f32", algo="RING", proto="SIMPLE")
    assert (w["count"], w["bytes"], w["channels"]) == (1 << 20, 4 << 20, [0, 1])
    assert (w["sendbuff"], w["recvbuff"]) == (0x7F0000000000, 0x7F0000400000)
    assert d["collective"] == "AllReduce Sum f32 RING SIMPLE: 1048576 elements (4194304 B), " \
                              "channels 0-1"


def test_synthetic_mid_channels_and_chained_batches():
    """synthetic: 4 channels (lo, 2 mid, hi), then a second batch on block 0 by nextJump
    (an AllGather fused after it)."""
    ag = N.FUNCS.index(("AllGather", None, None, "RING", "LL"))
    at1 = 32 + 5 * 16
    at2 = at1 + 96
    batches = [_batch(FID, 1, at1, 1, next_jump=4)] + [_batch(FID, 1, at1, 1)] * 3 + \
        [_batch(ag, 1, at2, 1)]
    args = _args(nbatches=4) + b"".join(batches) + _coll(0, 3, 100, 200, 50) + _coll(0, 0, 7, 0, 0)
    d = N.describe(args, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 4)
    first, second = d["works"]
    assert first["count"] == 100 + 2 * 200 + 50 and first["blocks"] == [0, 1, 2, 3]
    assert second["func"]["coll"] == "AllGather" and second["count"] == 7
    # AllGather's count is in bytes (NCCL makes it ncclInt8: src/enqueue.cc collTaskAppend);
    # this said "no bytes" before captures/ddp-2rank's broadcast showed the count is bytes
    assert second["blocks"] == [4] and second["bytes"] == 7


def test_synthetic_p2p_and_fifo_and_cut():
    sr = N.FUNCS.index(("SendRecv", None, None, None, None))
    p2p = N.ncclDevWorkP2p.build(dict(
        sendAddr=0x7F0000000000, recvAddr=0x7F0000100000, sendBytes=65536, recvBytes=65536,
        sendRank=1, recvRank=1, nP2pChannels=2, channelBase=0, nSendChannels=1,
        nRecvChannels=1, sendChunkSize_u32fp8=0, recvChunkSize_u32fp8=0, bits=0b11))
    d = N.describe(_args(nbatches=1) + _batch(sr, 0, 48, 1) + p2p, "ncclDevKernel_SendRecv", 1)
    (w,) = d["works"]
    assert (w["sendBytes"], w["sendRank"], w["flags"]) == (65536, 1, ["sendProtoLL", "recvProtoLL"])
    assert d["collective"] == "SendRecv: send 65536 B to rank 1, receive 65536 B from rank 1"
    fifo = N.describe(_args(storage=1, nbatches=1) + _batch(FID, 1, 0x4000, 1),
                      "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1)
    assert "work FIFO" in fifo["works"][0]["why"] and fifo["args"]["workStorageType"] == "Fifo"
    cut = N.describe(_args(nbatches=1) + _batch(FID, 1, 48, 1) + bytes(40),
                     "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1)
    assert "past the 88 argument bytes" in cut["works"][0]["why"]
    assert N.describe(b"", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1)["why"]


def test_text_report_lines():
    from tracer.report import _render_nccl
    work_at = 48
    args = _args(nbatches=1) + _batch(FID, 1, work_at, 1) + _coll(0, 0, 256, 0, 0)
    out = io.StringIO()
    _render_nccl(N.describe(args, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1), out.write)
    assert out.getvalue() == ("    NCCL: AllReduce Sum f32 RING SIMPLE: 256 elements (1024 B), "
                              "channel 0  send 0x7f0000000000 recv 0x7f0000400000\n")


@pytest.mark.parametrize("name,want", [
    ("ncclDevKernel_Generic", dict(coll="Generic")),
    ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", dict(coll="ReduceScatter", redop="Sum",
                                                         type="bf16", algo="RING", proto="LL")),
    ("ncclDevKernel_AllReduce_Sum_f32_TREE_LL", dict(algo="TREE")),
    ("vadd", None)])
def test_kernel_names(name, want):
    got = N.parse_kernel_name(name)
    if want is None:
        assert got is None
    else:
        assert {k: got[k] for k in want} == want


def test_provenance_block():
    from tests.test_fields_lint import REQUIRED_PROVENANCE
    for key in REQUIRED_PROVENANCE:
        assert N.PROVENANCE.get(key), key
    assert "Provenance" in N.__doc__ and "v2.27.7-1" in N.__doc__
