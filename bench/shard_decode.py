"""Would the whole decode shard by time? (A design probe for issue 24's whole-job target,
the step after bench/shard_probe.py, which sharded the front alone: the decoding process
is as busy as the front, so both must shard.)

Cuts the capture's SUBMISSION records into K blocks. Each block is decoded by a process of
its own, as a capture window is (decoders/window.py): before its warm-up it reads every
record but decodes only what the shim keeps outside a window (ioctls, mmaps, bookkeeping
calls, the graph-preparing calls with their submissions, a graph exec's first launch,
launches into a stream being captured); the other launch, graph-launch and work calls are
passed over, and a submission made outside the calls it keeps only moves its channel's
byte count and the submission counter on (the counters the launches' offsets come from).
From W submissions before its block on it decodes everything, and it keeps what its sink
is handed for the launches that arrived inside the block.

Each launch is reduced to a few fields to read and a digest of its whole summary (as the
JSON renders it, less what a brief decode works out only for the launches it keeps); each
semaphore method no launch holds and each copy engine transfer is kept whole; and the
blocks' launches, syncs and copies laid end to end are compared with those of one decode
of the whole capture in one process.

Each block also says where, from its first record on, its decode looked for history that
the skim did not give it: a problem of its launch decoder (a QMD not in the memory image it
rebuilt); a semaphore release on a channel the skim moved on with no launch since (one
decode of everything hangs it on the channel's last launch); a wait for a release not seen;
a copy engine register of such a channel read before it was written; a QMD address with no
launch from it yet ("already decoded"); memory bytes not known. A miss counts where what it
names was there at the block's start in a decode of everything (asked of a second one):
what the block's predecessor, exact, would hand over. A sharded decode would decode a block
with a miss again, from its predecessor's state.

Prints, per K and W, whether the blocks agree (and the first item that does not); per
block, whether it agrees and whether it missed history: "ACCEPTED, DIFFERS" is the one
outcome a sharded decode could not recover from; and the CPU each block took before, in
and after its block (facts aside): what a decode in K processes would wait for.

    python3 bench/shard_decode.py CAPTURE [--shards 2 4 8] [--warmup 16 64] [--json OUT]

Not a decoder: nothing in decoders/ uses this.
"""
import argparse
import hashlib
import json
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from decoders.capture.reader import CaptureReader, open_capture  # noqa: E402
from decoders.session import DEFAULT_KEEP, _Budget, _new_model  # noqa: E402
from decoders.session.launches import LaunchStage, gpu_family  # noqa: E402
from decoders.session.records import RecordHandlers  # noqa: E402
from decoders.session.skim import Detectors, Skim, present  # noqa: E402
from decoders.window import Windows  # noqa: E402

BRIEF = 200             # as the default report decodes (tracer/cli_common.py SHOWN_LAUNCHES)


FACT = range(8)          # a launch's fact has 8 parts; a sync's or a copy's, 3
_FACT_CPU = [0.0]        # CPU seconds spent making facts (left out of the blocks' times)


def fact(launch, numbers, light=False):
    """What the report shows and checks of one launch: a few fields to read, and a digest
    of its whole summary as the JSON renders it, but its QMD fields (made from its QMD
    bytes, which the digest takes), its addresses' resolution and its arguments by name (a
    brief decode works these out only for the launches it keeps, and each block keeps its
    own first ones). The launch a programmatic dependent launch follows is named by its
    record and QMD address, not by its number: a block numbers its own launches.
    light: the fields alone, no digest (timing the design, not checking it)."""
    t = time.process_time()
    s = launch._summary
    a = s.get("attribution") or {}
    k = a.get("kernel") or {}
    if light:
        return (launch.record_index, bool(s["kernel"]), k.get("name"), tuple(s["grid"] or ()),
                tuple(s["block"] or ()), s.get("verified"), len(s["semaphores"]), None)
    whole = {key: v for key, v in s.items() if key not in ("qmd_fields", "resolved")}
    if a:
        whole["attribution"] = {key: v for key, v in a.items() if key != "args"}
    pdl = s.get("programmatic")
    if pdl and pdl.get("after_launch") is not None:
        whole["programmatic"] = dict(pdl, after_launch=numbers.get(pdl["after_launch"]))
    digest = hashlib.blake2b(json.dumps(whole, sort_keys=True, default=repr).encode() +
                             bytes(launch.qmd_bytes or b""), digest_size=16).hexdigest()
    out = (launch.record_index, bool(s["kernel"]), k.get("name"), tuple(s["grid"] or ()),
           tuple(s["block"] or ()), s.get("verified"), len(s["semaphores"]), digest)
    _FACT_CPU[0] += time.process_time() - t
    return out


def decode(path, lo=0, warm=0, hi=None, checks=None, light=False):
    """The facts of the launches that arrived in records [lo, hi), decoded as the module
    docstring says (lo=0: the whole capture, in one process), CPU seconds before warm, from
    warm to hi, and after hi, and what the block missed: its launch decoder's problems
    (text, None) and the history it looked for and had not seen (text, what: present()'s).
    `checks`: {record index: [what, ...]}, each list replaced by the set of its items
    present() where that record is reached. `light`: no detectors, and facts of a few
    fields (fact()): the block's decode as a sharded decode would run it."""
    t0 = time.process_time()
    _FACT_CPU[0] = 0.0
    stream = open_capture(path)
    reader = CaptureReader(stream, name=str(path))
    branch = (str(reader.meta.get("driver", "580")).split(".")[0]) or "580"
    model = _new_model(path, reader, branch, DEFAULT_KEEP, BRIEF)
    wins = Windows(reader.meta)
    stage = LaunchStage(model, model.attribution, gpu_family(reader.meta), wins)
    table = RecordHandlers(model, _Budget(model), branch, stage, wins).table
    sd = stage.decoder
    facts = []
    sink = sd.sink

    numbers = {}        # a launch's number in this decode's list -> (its record, QMD address)

    def kept(launch):
        numbers[len(model.launches)] = (launch.record_index, launch._summary.get("qmd_address"))
        sink(launch)
        if launch.record_index is not None and launch.record_index >= lo and \
                (hi is None or launch.record_index < hi):
            facts.append(fact(launch, numbers, light))
    sd.sink = kept
    sd.probe_sink = stage.sink      # (present() reads its latches)

    det = None          # skim.Detectors, from the warm-up on (after a skim)

    def other(take, kind):
        def got(entry):
            if det is not None:
                det.entry(kind, entry)
            take(entry)
            i = entry.get("record_index")
            if i is not None and i >= lo and (hi is None or i < hi):
                facts.append((i, kind, json.dumps(entry, sort_keys=True, default=str)))
        return got
    sd.sync, sd.copy = other(sd.sync, "sync"), other(sd.copy, "copy")
    arrived = sd.arrived

    def arrive(launch):
        arrived(launch)
        if det is not None:
            det.arrived(launch)
    sd.arrived = arrive
    p_warm = 0
    skim = Skim()
    t_warm = t_hi = None
    check_at = sorted(checks) if checks else []
    now = [0]           # the record being fed (where a watched lookup missed)
    for rec in reader.records():
        i = now[0] = rec.index
        while check_at and i >= check_at[0]:
            at = check_at.pop(0)
            checks[at] = {w for w in checks[at] if present(sd, w)}
        kind = rec.type
        if i < warm:
            if kind in ("API_ENTER", "API_EXIT", "SUBMISSION") and \
                    skim.passes_over(rec, model.api):
                if kind == "SUBMISSION":
                    skim.submission(sd, rec)
                continue
        elif t_warm is None:
            t_warm = time.process_time()
            p_warm = len(sd.problems)
            if skim.skimmed:
                sd.resync()     # a method sequence cut by what was passed over: dropped
            if skim.skimmed and not light:
                det = Detectors(sd, stage.sink, lambda: now[0])
        if hi is not None and i >= hi:
            if t_hi is None:
                t_hi = time.process_time() - _FACT_CPU[0]
            if kind == "SUBMISSION" and all(l.record_index >= hi for l, _ in sd._pending):
                break
        h = table.get(kind)
        if h is not None and h(rec) is False:
            break
    else:
        stage.finish(model, reader.problems)
    stream.close()
    t1 = time.process_time() - _FACT_CPU[0]     # (facts are made from lo on only)
    t_warm = t1 if t_warm is None else t_warm
    t_hi = t1 if t_hi is None else t_hi
    seen, missed = set(), [(str(p), None) for p in sd.problems[p_warm:]]
    for i, why, what in (det.misses if det is not None else ()):
        # a miss in the warm-up is what the warm-up is for: counted from the block on
        if i < lo or what in seen:
            continue
        seen.add(what)
        missed.append((f"record {i}: {why}", what))
    return facts, (t_warm - t0, t_hi - t_warm, t1 - t_hi), missed


def submission_records(path):
    with open_capture(path) as f:
        reader = CaptureReader(f, name=str(path))
        return [r.index for r in reader.records(only=("SUBMISSION",)) if r.type == "SUBMISSION"]


def real_misses(path, blocks):
    """[(block's first record, its misses)] -> per block, the texts of the misses whose
    history was there to be seen: asked of a decode of everything at each block's start
    (what the block's predecessor, exact, would hand over, or a block decoded again after
    it where it was not). A launch decoder's problem always counts."""
    checks = {lo: [w for _, w in ps if w is not None] for lo, ps in blocks}
    if any(checks.values()):
        decode(path, checks=checks)
    return [[text for text, what in ps if what is None or what in checks[lo]]
            for lo, ps in blocks]


def _first_difference(mine, theirs):
    """(index of the first item that differs or None, (mine, theirs) there or None).
    Launches are handed over in order, and syncs and copies in order, but the two streams
    interleave as the sink's queue lets them: each is compared apart."""
    for part in (lambda f: len(f) == len(FACT), lambda f: len(f) != len(FACT)):
        a = [f for f in mine if part(f)]
        b = [f for f in theirs if part(f)]
        at = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y),
                  None if len(a) == len(b) else min(len(a), len(b)))
        if at is not None:
            pair = (repr(a[at]), repr(b[at])) if at < len(a) and at < len(b) else None
            return at, pair
    return None, None


def _block(args):
    return decode(*args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("--shards", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--warmup", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--procs", type=int, default=None, help="processes at once (default: K)")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--light", action="store_true",
                    help="time the blocks as a sharded decode would run them: no detectors, "
                         "launches compared by a few fields, not their whole summaries")
    args = ap.parse_args()
    subs = submission_records(args.capture)
    cuts = {k: [0] + [subs[len(subs) * j // k] for j in range(1, k)] for k in args.shards}
    t = time.monotonic()
    whole, cpu, _ = decode(args.capture, light=args.light)
    out = {"capture": args.capture, "launches": len(whole), "one_process_cpu_s": sum(cpu),
           "one_process_wall_s": time.monotonic() - t, "runs": []}
    print(f"{args.capture}: {len(subs)} SUBMISSION records, {len(whole)} launches, syncs "
          f"and copies; one "
          f"process {sum(cpu):.2f} CPU s", flush=True)
    ctx = multiprocessing.get_context("fork")
    for k in args.shards:
        for w in args.warmup:
            starts = cuts[k]
            ends = starts[1:] + [None]
            jobs = [(args.capture, lo, subs[max(0, subs.index(lo) - w)] if lo else 0, hi,
                     None, args.light) for lo, hi in zip(starts, ends)]
            t = time.monotonic()
            with ctx.Pool(args.procs or k) as pool:
                got = pool.map(_block, jobs)
            wall = time.monotonic() - t
            merged = [f for facts, _, _ in got for f in facts]
            first, run_pair = _first_difference(merged, whole)
            cpus = [c for _, c, _ in got]
            real = real_misses(args.capture, [(lo, ps) for (_, lo, *_), (_, _, ps)
                                              in zip(jobs, got)])
            problems = [text for ps in real for text in ps]
            missed = sum(len(ps) for _, _, ps in got)
            # per block: whether it agrees with the whole decode's items of its records, and
            # whether it said it missed history (the fall-back a sharded decode would take)
            blocks = []
            for (_, lo, _, hi, *_), (facts, _, _), ps in zip(jobs, got, real):
                theirs = [f for f in whole if f[0] >= lo and (hi is None or f[0] < hi)]
                blocks.append({"from": lo, "agree": _first_difference(facts, theirs)[0] is None,
                               "flagged": bool(ps)})
            kinds = {"accepted, agrees": 0, "flagged, differs": 0, "flagged, agrees": 0,
                     "ACCEPTED, DIFFERS": 0}
            if args.light:      # no detectors: agreement alone
                kinds = {"agree": sum(b["agree"] for b in blocks),
                         "differ": sum(not b["agree"] for b in blocks)}
            else:
                for b in blocks:
                    name = ("flagged, " if b["flagged"] else "accepted, ") + \
                        ("agrees" if b["agree"] else "differs")
                    kinds["ACCEPTED, DIFFERS" if name == "accepted, differs" else name] += 1
            run = {"shards": k, "warmup": w, "agree": first is None, "wall_s": wall,
                   "launches": len(merged), "first_difference": first,
                   "cpu_s": [[round(x, 3) for x in c] for c in cpus],
                   "slowest_block_cpu_s": max(sum(c) for c in cpus),
                   "problems": len(problems), "first_problems": problems[:3],
                   "misses_of_history_never_there": missed - len(problems),
                   "blocks": kinds}
            if first is not None and run_pair is not None:
                run["mine"], run["theirs"] = run_pair
            out["runs"].append(run)
            print(f"  K={k} W={w}: {'agree' if first is None else 'DIFFER at %s' % first} "
                  f"({len(merged)} launches, syncs and copies), wall {wall:.2f} s, slowest block "
                  f"{run['slowest_block_cpu_s']:.2f} CPU s (before / in / after: "
                  + ", ".join("/".join(f"{x:.2f}" for x in c) for c in cpus) + ")"
                  + f"; {len(problems)} problems or misses ({missed - len(problems)} more of "
                  f"history never there); blocks: "
                  + ", ".join(f"{v} {n}" for n, v in kinds.items() if v), flush=True)
            if "mine" in run:
                print(f"    mine   {run['mine']}\n    theirs {run['theirs']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
