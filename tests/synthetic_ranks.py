"""synthetic-2rank: a capture of two "ranks" built from a real single-process recording (no
multi-process GPU capture exists yet; scripts/record_ddp.sh makes the real one): every record
of the recording but END is written once per rank with the rank's pid and tid (pid + 1000 *
rank) and its times shifted by 1 ms * rank, a PROCESS_ENV record (RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE) after each PROCESS_START, then END. RM handles repeat between
the two ranks, as two real processes' may. Used by tests/test_ranks_synthetic.py."""
import gzip

from bench import bombs
from decoders.capture import format as F

SHIFT_NS = 1_000_000


def build(name="runtime-vadd", world=2):
    data = bombs.load(name)
    head = F.TL_FILE_HEADER_PREFIX.parse(data[:F.TL_FILE_HEADER_FIXED])
    sp = bombs.spans(data)
    out = bytearray(data[:head.header_size])
    end = None
    for rank in range(world):
        for off, length, rtype in sp:
            rec = bytearray(data[off:off + length])
            h = F.TL_RECORD_HEADER.parse(rec[:F.TL_RECORD_HEADER_SIZE])
            if F.TL_REC.get(rtype) == "END":
                end = rec
                continue
            pid, tid = h.pid + 1000 * rank, h.tid + 1000 * rank
            rec[:F.TL_RECORD_HEADER_SIZE] = F.TL_RECORD_HEADER.build(dict(
                h, pid=pid, tid=tid, t_start=h.t_start + SHIFT_NS * rank if h.t_start else 0,
                t_end=h.t_end + SHIFT_NS * rank if h.t_end else 0))
            out += rec
            if F.TL_REC.get(rtype) == "PROCESS_START":
                env = (f"RANK={rank}\0LOCAL_RANK={rank}\0WORLD_SIZE={world}\0"
                       f"LOCAL_WORLD_SIZE={world}\0").encode()
                body = F.TL_PROCESS_ENV.build(dict(env_len=len(env), reserved0=0, env=env))
                hdr = F.TL_RECORD_HEADER.build(dict(
                    sync=F.TL_RECORD_SYNC, length=F.TL_RECORD_HEADER_SIZE + len(body),
                    type=F.TL_REC_BY_NAME["PROCESS_ENV"], flags=F.TL_RF_COMPLETE, pid=pid,
                    tid=tid, seq=0, t_start=h.t_start + SHIFT_NS * rank,
                    t_end=h.t_start + SHIFT_NS * rank))
                out += hdr + body
    e = F.TL_END.parse(end[F.TL_RECORD_HEADER_SIZE:])
    out += end[:F.TL_RECORD_HEADER_SIZE] + F.TL_END.build(dict(e, cursor=len(out)))
    out[F.TL_CURSOR_OFFSET:F.TL_CURSOR_OFFSET + 8] = len(out).to_bytes(8, "little")
    return gzip.compress(bytes(out), 1, mtime=0)
