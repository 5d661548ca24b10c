"""What the skim of a decode in blocks costs (decoders/session/shard.py: the process that
follows the capture and forks each block where its warm-up begins reads every record as a
blocks.Block that was given no block): its CPU seconds against a decode in one process, and
the SUBMISSION records it decodes in full, counted by the API call they are in (a call the
skim passes over leaves its submissions out: skim.Skim.passes_over).

    python3 bench/skim_cost.py CAPTURE [--profile N]

--profile N: cProfile of the skim, its N costliest functions (for their names, run it with
PYTHONPATH at a copy of the .py files alone: bench/probes/h200-s42b.sh)."""
import argparse
import collections
import cProfile
import os
import pstats
import time

os.environ.setdefault("TRACE_LAUNCH_SHARDS", "1")
os.environ.setdefault("TRACE_LAUNCH_SPLIT", "0")


def skim(path, counts):
    from decoders.capture.reader import open_capture
    from decoders.session import skim as S
    from decoders.session.blocks import Block
    passes_over = S.Skim.passes_over

    def counted(self, rec, api):
        left = passes_over(self, rec, api)
        if rec.type == "SUBMISSION":
            cur = api.current(rec.pid, rec.tid)
            counts[("passed over" if left else "decoded",
                    cur.name if cur is not None else None)] += 1
        return left
    S.Skim.passes_over = counted
    dec = Block(path, open_capture(path), None)
    for rec in dec.reader.records():
        dec.feed(rec)
    S.Skim.passes_over = passes_over
    return dec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--profile", type=int, default=0)
    args = ap.parse_args()
    from decoders.session import decode_capture
    t = time.process_time()
    decode_capture(args.capture, brief=10)
    full = time.process_time() - t
    counts = collections.Counter()
    t = time.process_time()
    if args.profile:
        prof = cProfile.Profile()
        prof.runcall(skim, args.capture, counts)
    else:
        skim(args.capture, counts)
    cost = time.process_time() - t
    print(f"{args.capture}: one decode (brief 10) {full:.2f} CPU s, the skim {cost:.2f} CPU s")
    for (how, call), n in counts.most_common(12):
        print(f"  {n:8} SUBMISSION records {how}, in {call}")
    if args.profile:
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
