"""NCCL's device kernels: which collective a `ncclDevKernel_*` launch ran, on how many
elements, of which type, with which reduction, algorithm and protocol (issue 26).

Provenance: NVIDIA/nccl at tag v2.27.7-1 (assumed before a capture existed; the first real
one, captures/ddp-2rank, ran NCCL 2.28.9, torch 2.11.0+cu130's, whose layouts are the same:
see below), src/include/device.h (struct ncclDevKernelArgs, ncclDevWorkBatch,
ncclDevWorkColl, ncclDevWorkP2p, ncclDevWorkCollReg, NCCL_MAX_DIRECT_ARITY 7, MAXCHANNELS 64,
enum ncclDevWorkType, enum ncclDevWorkStorageType, ncclDevFuncId()), src/include/
nccl_common.h (NCCL_ALGO_*, NCCL_PROTO_*), src/device/generate.py (the lists of collectives,
reduction ops, types, algorithms and protocols, which algorithms each collective has, and
the rules that number the device functions: ncclDevFuncRowToId and the primary function
table), src/device/common.h (a kernel's argument is ncclDevKernelArgs4K: ncclDevKernelArgs,
then one ncclDevWorkBatch per block at batches[blockIdx.x], then, with workStorageType
Args, the work structs at `offsetBase + i * sizeof(work)` from the start of the arguments),
src/enqueue.cc (how cbd.countLo/Mid/Hi split a collective's count over its channels).
The same layouts are in v2.26.6-1 and v2.28.9-1 (checked struct by struct; 2.28 renames
ncclDevComm to ncclKernelComm); 2.29 adds AllGatherV, which renumbers the functions.
Definitions are ours, written as data. Name prefix: NCCL's.

A kernel's name says which specialised kernel ran (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`
is the kernel NCCL builds for AllReduce of f32 sums); the function it ran is the batch's
`funcId` (that kernel runs every AllReduce f32 sum, whatever the algorithm and protocol),
decoded here through the function table. Counts: NCCL's own. For AllReduce, Reduce and
ReduceScatter, elements of the type (of the whole buffer; per rank for ReduceScatter). For
AllGather and Broadcast, bytes: src/enqueue.cc collTaskAppend (read at v2.28.7-1) multiplies their count by the type's size and makes the type ncclInt8, so their
functions have no type and `bytes` is the count (per rank for AllGather).

Checked on a real capture, captures/ddp-2rank (torch 2.11.0+cu130, whose
torch.cuda.nccl.version() is 2.28.9 in each rank's manifest truth): every
ncclDevKernel_AllReduce_Sum_f32_RING_LL launch's work struct decodes to funcId 258 =
AllReduce Sum f32 RING LL, the kernel's own specialisation, on channels 0-23 of its 24
blocks, and its counts are DDP's buckets exactly: 399370 f32 = 1,597,480 B at step 1, then
the rebuilt 267786 + 131584 elements (1,071,144 + 526,336 B) at each of steps 2-20, then the
script's one-float all-reduce. DDP's start-up parameter broadcast ran on the
ncclDevKernel_Broadcast_RING_LL kernel with funcId Broadcast RING SIMPLE (a kernel runs the
batch's function, whatever its name's protocol), count 1,597,480: bytes, the model's
399,370 parameters x 4.
"""
from construct import Array, Int8ul, Int32sl, Int32ul, Int64ul, Padding, Struct

from decoders.fields import bits

PROVENANCE = {"repository": "NVIDIA/nccl", "path": "src/include/device.h",
              "commit": "v2.27.7-1", "prefix": "ncclDev"}
NCCL_VERSIONS = ("2.26", "2.27", "2.28")

# --- src/device/generate.py: what NCCL builds -------------------------------------------
REDOPS = ("Sum", "Prod", "MinMax", "PreMulSum", "SumPostDiv")
TYPES = ("i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2")
PROTOS = ("LL", "LL128", "SIMPLE")
ALGOS = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
ALGOS_OF_COLL = {
    "AllGather": ("RING", "COLLNET_DIRECT", "NVLS", "PAT"),
    "AllReduce": ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE"),
    "Broadcast": ("RING",), "Reduce": ("RING",),
    "ReduceScatter": ("RING", "COLLNET_DIRECT", "NVLS", "PAT"),
    "SendRecv": (None,),
}
COLLS = tuple(ALGOS_OF_COLL)
REDUCING = ("AllReduce", "Reduce", "ReduceScatter")
BYTE_COUNTED = ("AllGather", "Broadcast")      # counted in bytes (ncclInt8): src/enqueue.cc
TYPE_BYTES = {"i8": 1, "u8": 1, "i32": 4, "u32": 4, "i64": 8, "u64": 8, "f16": 2, "f32": 4,
              "f64": 8, "bf16": 2, "f8e4m3": 1, "f8e5m2": 1}


def _built(coll, redop, ty, algo, proto):
    """Whether NCCL builds a device function for this row (a full build: every function
    NCCL can run; generate.py's required_cuda() not None)."""
    if coll == "SendRecv":
        return True
    if proto != "SIMPLE" and algo not in ("RING", "TREE"):
        return False
    if coll in REDUCING and redop == "SumPostDiv" and ty[0] not in "iu":
        return False
    if "NVLS" in algo and coll in REDUCING:
        return ((ty in ("i32", "u32", "i64", "u64") and redop in ("Sum", "MinMax")) or
                (ty in ("f32", "f64") and redop == "Sum") or
                (ty in ("f16", "bf16") and redop in ("Sum", "MinMax")))
    return True


def _primary(coll, redop, ty, algo, proto):
    """The function a row shares (generate.py equivalent_primary): signed integer sums and
    products run the unsigned one; signed min/max too, except under NVLS."""
    if coll in REDUCING and ty[0] == "i":
        if redop in ("Sum", "Prod", "PreMulSum", "SumPostDiv") or \
                (redop == "MinMax" and "NVLS" not in algo):
            return (coll, redop, "u" + ty[1:], algo, proto)
    return (coll, redop, ty, algo, proto)


def _rows():
    """Function rows in ncclDevFuncId() order: SendRecv; AllGather and Broadcast by algorithm
    and protocol; AllReduce, Reduce and ReduceScatter by op, type, algorithm, protocol."""
    yield ("SendRecv", None, None, None, None)
    for coll in ("AllGather", "Broadcast"):
        for algo in ALGOS_OF_COLL[coll]:
            for proto in PROTOS:
                yield (coll, None, None, algo, proto)
    for coll in REDUCING:
        for redop in REDOPS:
            for ty in TYPES:
                for algo in ALGOS_OF_COLL[coll]:
                    for proto in PROTOS:
                        yield (coll, redop, ty, algo, proto)


FUNC_ROWS = tuple(r if _built(*r) else None for r in _rows())       # ncclDevFuncRowToId order


def _sort_key(fn):     # tuples with None compare as generate.py's sorted() would
    return tuple("" if x is None else x for x in fn)


# funcId -> (coll, redop, type, algo, proto): ncclDevFuncTable, the distinct primary functions
# sorted (generate.py primary_funcs).
FUNCS = tuple(sorted({_primary(*r) for r in FUNC_ROWS if r is not None}, key=_sort_key))

# --- src/include/device.h: the kernel argument --------------------------------------------
ncclDevWorkStorageType = {0: "Args", 1: "Fifo", 2: "Persistent"}
ncclDevWorkType = {0: "P2p", 1: "Coll", 2: "CollReg"}
ncclDevKernelArgs = Struct(
    "comm" / Int64ul, "channelMask" / Int64ul, "workStorageType" / Int8ul,
    "reserved0" / Padding(3), "workMask" / Int32ul, "workBuf" / Int64ul)
ncclDevWorkBatch = Struct("flags" / Int32ul, "offsetBase" / Int32ul, "offsetBitset" / Int64ul)
# ncclDevWorkBatch.flags bit-fields: (name, lo, width)
BATCH_FLAGS = (("nextJump", 0, 14), ("nextExtends", 14, 1), ("workType", 15, 2),
               ("funcId", 17, 15))
ncclDevWorkColl = Struct(
    "bits" / Int32ul, "root" / Int32ul, "recvbuff" / Int64ul, "sendbuff" / Int64ul,
    "sendbuffOffset" / Int64ul, "recvbuffOffset" / Int64ul, "sendbuffRmtAddrs" / Int64ul,
    "recvbuffRmtAddrs" / Int64ul,
    # union { cbd {countLo, countMid, countHi; chunkGrains word}, collnet {count, chunkCount} }
    "countLo" / Int64ul, "countMid" / Int64ul, "countHi" / Int64ul, "chunkGrains" / Int64ul,
    "redOpArg" / Int64ul)
COLL_BITS = (("channelLo", 0, 8), ("channelHi", 8, 8), ("nWarps", 16, 8),
             ("redOpArgIsPtr", 24, 1), ("regUsed", 25, 1), ("netRegUsed", 26, 1),
             ("oneNode", 27, 1), ("direct", 28, 2), ("isOneRPN", 30, 1),
             ("profilerEnabled", 31, 1))
CHUNK_GRAINS = (("chunkGrainsLo", 0, 21), ("chunkGrainsMid", 21, 21), ("chunkGrainsHi", 42, 21))
ncclDevWorkP2p = Struct(
    "sendAddr" / Int64ul, "recvAddr" / Int64ul, "sendBytes" / Int64ul, "recvBytes" / Int64ul,
    "sendRank" / Int32sl, "recvRank" / Int32sl, "nP2pChannels" / Int8ul, "channelBase" / Int8ul,
    "nSendChannels" / Int8ul, "nRecvChannels" / Int8ul, "sendChunkSize_u32fp8" / Int8ul,
    "recvChunkSize_u32fp8" / Int8ul, "bits" / Int8ul, "reserved0" / Padding(1))
P2P_BITS = (("sendProtoLL", 0, 1), ("recvProtoLL", 1, 1), ("sendNetReg", 2, 1),
            ("recvNetReg", 3, 1), ("sendIpcReg", 4, 1), ("recvIpcReg", 5, 1),
            ("profilerEnabled", 6, 1))
NCCL_MAX_DIRECT_ARITY = 7
ncclDevWorkCollReg = Struct(
    "coll" / ncclDevWorkColl, "dnInputs" / Array(NCCL_MAX_DIRECT_ARITY + 1, Int64ul),
    "dnOutputs" / Array(NCCL_MAX_DIRECT_ARITY + 1, Int64ul),
    "upOutputs" / Array(NCCL_MAX_DIRECT_ARITY + 1, Int64ul))
WORK = {0: ncclDevWorkP2p, 1: ncclDevWorkColl, 2: ncclDevWorkCollReg}
MAXCHANNELS = 64
KERNEL_ARGS_BYTES = 4 << 10       # ncclDevKernelArgs4K: the kernel's one parameter
MAX_BATCHES = 256                 # batches followed per launch (nextJump chains), a bound


def _fields(word, table):
    return {name: bits(word, lo, width) for name, lo, width in table}


def parse_kernel_name(name):
    """{'coll', 'redop', 'type', 'algo', 'proto'} of 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'
    (what a kernel is specialised for; None for a part its name has not), or None when the
    name is not an NCCL device kernel's."""
    if not name or not name.startswith("ncclDevKernel_"):
        return None
    parts = name.split("(", 1)[0][len("ncclDevKernel_"):].split("_")
    out = {"coll": parts[0], "redop": None, "type": None, "algo": None, "proto": None}
    rest = parts[1:]
    if rest and rest[0] in REDOPS:
        out["redop"] = rest.pop(0)
    if rest and rest[0] in TYPES:
        out["type"] = rest.pop(0)
    if rest and rest[-1] in PROTOS:
        out["proto"] = rest.pop()
    if rest:
        out["algo"] = "_".join(rest)
    return out


def func_of(func_id):
    """{'coll', 'redop', 'type', 'algo', 'proto'} of a batch's funcId, or None if out of range."""
    if not 0 <= func_id < len(FUNCS):
        return None
    return dict(zip(("coll", "redop", "type", "algo", "proto"), FUNCS[func_id]))


def _coll_work(raw, func):
    w = ncclDevWorkColl.parse(raw)
    f = _fields(w.bits, COLL_BITS)
    out = {"channels": [f["channelLo"], f["channelHi"]], "nWarps": f["nWarps"],
           "root": w.root, "sendbuff": w.sendbuff, "recvbuff": w.recvbuff}
    flags = [k for k in ("redOpArgIsPtr", "regUsed", "netRegUsed", "oneNode", "isOneRPN",
                         "profilerEnabled") if f[k]]
    if f["direct"]:
        flags.append(f"direct={f['direct']}")
    out["flags"] = flags
    algo = (func or {}).get("algo") or ""
    if algo.startswith(("COLLNET", "NVLS")):       # the collnet member of the union
        out["count"] = w.countLo
    else:
        n_mid = max(f["channelHi"] - f["channelLo"] - 1, 0)
        out["count"] = w.countLo + w.countMid * n_mid + w.countHi
        out["count_split"] = [w.countLo, w.countMid, w.countHi]
        out["chunk_grains"] = list(_fields(w.chunkGrains, CHUNK_GRAINS).values())
    out["redOpArg"] = w.redOpArg
    ty = (func or {}).get("type")
    if ty in TYPE_BYTES:
        out["bytes"] = out["count"] * TYPE_BYTES[ty]
    elif (func or {}).get("coll") in BYTE_COUNTED:
        out["bytes"] = out["count"]
    return out


def _p2p_work(raw):
    w = ncclDevWorkP2p.parse(raw)
    out = {k: w[k] for k in ("sendAddr", "recvAddr", "sendBytes", "recvBytes", "sendRank",
                             "recvRank", "nP2pChannels", "channelBase", "nSendChannels",
                             "nRecvChannels")}
    out["flags"] = [k for k, v in _fields(w.bits, P2P_BITS).items() if v]
    return out


def describe(args, kernel_name, blocks):
    """What an NCCL kernel launch ran, from its argument bytes (constant bank 0 from the
    parameter base) and its grid's block count: {'kernel' (parse_kernel_name), 'args'
    (ncclDevKernelArgs), 'works' (each distinct work struct its blocks' batches name, with
    the function it runs and its channels, counts and buffers), 'collective' (one line of
    the first), 'why' (what could not be read)}."""
    out = {"version": "NCCL " + "/".join(NCCL_VERSIONS), "kernel": parse_kernel_name(kernel_name),
           "args": None, "works": [], "collective": None, "why": None}
    head = ncclDevKernelArgs.sizeof()
    if args is None or len(args) < head:
        out["why"] = "the launch's argument bytes are not in the capture"
        return out
    a = ncclDevKernelArgs.parse(args)
    storage = ncclDevWorkStorageType.get(a.workStorageType, a.workStorageType)
    out["args"] = {"comm": a.comm, "channelMask": a.channelMask, "workStorageType": storage,
                   "workMask": a.workMask, "workBuf": a.workBuf}
    bsize = ncclDevWorkBatch.sizeof()
    seen, todo, steps = set(), list(range(max(0, min(blocks or 0, MAXCHANNELS)))), 0
    works = {}
    while todo and steps < MAX_BATCHES:
        ix = todo.pop(0)
        steps += 1
        at = head + ix * bsize
        if ix in seen or at + bsize > len(args):
            continue
        seen.add(ix)
        b = ncclDevWorkBatch.parse(args[at:at + bsize])
        bf = _fields(b.flags, BATCH_FLAGS)
        if bf["nextJump"]:
            todo.append(ix + bf["nextJump"])
        wt = bf["workType"]
        st = WORK.get(wt)
        func = func_of(bf["funcId"])
        if st is None:
            continue
        wsize = st.sizeof()
        for i in range(64):
            if not bits(b.offsetBitset, i, 1):
                continue
            off = b.offsetBase + i * wsize
            if off in works:
                works[off]["blocks"].append(ix)
                continue
            w = {"offset": off, "workType": ncclDevWorkType.get(wt, wt), "funcId": bf["funcId"],
                 "func": func, "blocks": [ix]}
            if storage != "Args":
                w["why"] = (f"the work struct is in NCCL's work FIFO (workBuf {a.workBuf:#x}, "
                            "device memory), not in the kernel's arguments")
            elif off + wsize > len(args):
                w["why"] = f"the work struct at +{off:#x} is past the {len(args)} argument bytes held"
            elif wt == 0:
                w.update(_p2p_work(args[off:off + wsize]))
            else:
                w.update(_coll_work(args[off:off + ncclDevWorkColl.sizeof()], func))
            works[off] = w
    out["works"] = list(works.values())
    if not out["works"]:
        out["why"] = "no work batch in the argument bytes held"
    else:
        out["collective"] = summary_line(out["works"][0])
    return out


def summary_line(w):
    """'AllReduce Sum f32 RING SIMPLE: 1048576 elements (4194304 B), channels 0-1'."""
    f = w.get("func") or {}
    name = " ".join(x for x in (f.get("coll"), f.get("redop"), f.get("type"), f.get("algo"),
                                f.get("proto")) if x) or f"funcId {w.get('funcId')}"
    if w.get("why"):
        return f"{name}: {w['why']}"
    if w.get("workType") == "P2p":
        return (f"{name}: send {w['sendBytes']} B to rank {w['sendRank']}, receive "
                f"{w['recvBytes']} B from rank {w['recvRank']}")
    if f.get("coll") in BYTE_COUNTED:
        text = f"{name}: {w['count']} B"
    else:
        text = f"{name}: {w['count']} elements"
        if "bytes" in w:
            text += f" ({w['bytes']} B)"
    lo, hi = w["channels"]
    return text + (f", channel {lo}" if lo == hi else f", channels {lo}-{hi}")
