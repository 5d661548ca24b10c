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

from decoders.capture.format import TL_SF_COPIED  # noqa: E402
from decoders.capture.reader import CaptureReader, open_capture  # noqa: E402
from decoders.cuda.api import BY_SLOT, window_role  # noqa: E402
from decoders.methods import class_info  # noqa: E402
from decoders.session import DEFAULT_KEEP, _Budget, _new_model  # noqa: E402
from decoders.session.launches import LaunchStage, gpu_family  # noqa: E402
from decoders.session.records import RecordHandlers  # noqa: E402
from decoders.window import Windows  # noqa: E402

BRIEF = 200             # as the default report decodes (tracer/cli.py SHOWN_LAUNCHES)
PASSED_OVER = ("LAUNCH", "GRAPH_LAUNCH", "WORK")   # roles the shim leaves out of a window


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


def present(sd, what):
    """Whether the history a block missed (`what`, as its decode names it) is there in
    decode `sd` as it stands: a channel's last launch, a copy engine register written, an
    address released, a QMD launched from an address, memory bytes known."""
    kind = what[0]
    if kind in ("launch", "register"):
        pid, hchannel, token = what[1]
        for key, ch in sd.decoder(pid)._channels.items():
            if isinstance(key, tuple) and len(key) == 4 and key[2:] == (hchannel, token):
                if kind == "launch" and ch.last_launch is not None:
                    return True
                if kind == "register" and what[3] in ch.copy.get(what[2], {}):
                    return True
        return False
    if kind == "latch":
        return what[1] in sd.probe_sink._latches
    ld = sd.decoder(what[1])
    if kind == "release":
        return what[2] in ld.releases
    if kind == "launched":
        return what[2] in ld._launched
    if kind == "memory":
        return len(ld.memory.read_known(what[2], what[3])) > what[4]
    if kind == "holds":
        return ld.memory.holds(*what[2:])
    raise ValueError(kind)


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

    misses = []         # history this block's decode looked for and had not seen
    skimmed_keys = set()    # (pid, hChannel, token) of the channels a skim moved on
    with_launch = set()     # the same, of the channels with a launch since the warm-up
    arrived = sd.arrived

    def arrive(launch):
        arrived(launch)
        with_launch.add((launch.pid, launch.hChannel, launch.channel))
    sd.arrived = arrive

    def other(take, kind):
        def got(entry):
            key = (entry.get("pid"), entry.get("hChannel"), entry.get("channel"))
            if kind == "sync" and key in skimmed_keys and key not in with_launch and \
                    not entry.get("waits"):
                # a release that a decode of everything hangs on the channel's last launch,
                # made before the skim ended
                misses.append((entry.get("record_index"), "release before any launch",
                               ("launch", key)))
            if kind == "sync" and entry.get("waits") and skimmed_keys and \
                    not entry.get("released_by"):
                misses.append((entry.get("record_index"), "wait for a release not seen",
                               ("release", entry.get("pid"), entry.get("address"))))
            take(entry)
            i = entry.get("record_index")
            if i is not None and i >= lo and (hi is None or i < hi):
                facts.append((i, kind, json.dumps(entry, sort_keys=True, default=str)))
        return got
    sd.sync, sd.copy = other(sd.sync, "sync"), other(sd.copy, "copy")
    p_warm = 0
    passed = set()      # (pid, call) of API calls passed over
    launched = set()    # (pid, graph exec) launched since the last graph-preparing call
    capturing = {}      # pid -> stream captures begun and not ended
    skimmed = False
    t_warm = t_hi = None
    check_at = sorted(checks) if checks else []
    now = [0]           # the record being fed (where a watched lookup missed)
    for rec in reader.records():
        i = now[0] = rec.index
        while check_at and i >= check_at[0]:
            at = check_at.pop(0)
            checks[at] = {w for w in checks[at] if present(sd, w)}
        if i < warm:
            kind = rec.type
            if kind == "API_ENTER" or kind == "API_EXIT":
                b = rec.body
                key = (rec.pid, b["call"])
                if kind == "API_ENTER":
                    f = BY_SLOT.get(b["slot"])
                    if f is not None and _passed_over(f, b, rec.pid, launched, capturing):
                        passed.add(key)
                        continue
                elif key in passed:
                    passed.discard(key)
                    continue
            elif kind == "SUBMISSION" and model.api.current(rec.pid, rec.tid) is None:
                _skim(sd, rec)
                skimmed = True
                continue
        elif t_warm is None:
            t_warm = time.process_time()
            p_warm = len(sd.problems)
            if skimmed:
                sd.resync()     # a method sequence cut by what was passed over: dropped
            if skimmed and not light:
                _watch(sd, skimmed_keys,
                       lambda m: misses.append((now[0],) + m[1:] if m[0] is None else m))
        if hi is not None and i >= hi:
            if t_hi is None:
                t_hi = time.process_time() - _FACT_CPU[0]
            if rec.type == "SUBMISSION" and all(l.record_index >= hi for l, _ in sd._pending):
                break
        h = table.get(rec.type)
        if h is not None and h(rec) is False:
            break
    else:
        stage.finish(model, reader.problems)
    stream.close()
    t1 = time.process_time() - _FACT_CPU[0]     # (facts are made from lo on only)
    t_warm = t1 if t_warm is None else t_warm
    t_hi = t1 if t_hi is None else t_hi
    seen, missed = set(), [(str(p), None) for p in sd.problems[p_warm:]]
    for i, why, what in misses:
        # a miss in the warm-up is what the warm-up is for: counted from the block on
        if i < lo or what in seen:
            continue
        seen.add(what)
        missed.append((f"record {i}: {why}", what))
    return facts, (t_warm - t0, t_hi - t_warm, t1 - t_hi), missed


def _passed_over(f, b, pid, launched, capturing):
    """Whether the shim would leave this call out of a window (shim/window.c win_enter):
    launches and work, but a graph exec's first launch (and its first after a graph-
    preparing call: they write the QMDs later replays run) and launches into a stream
    being captured (graph building)."""
    role = window_role(f)
    name = f.name
    if name.startswith("cuStreamBeginCapture"):
        capturing[pid] = capturing.get(pid, 0) + 1
    elif name.startswith("cuStreamEndCapture"):
        capturing[pid] = max(0, capturing.get(pid, 0) - 1)
    if role == "GRAPH_PREPARE":
        launched.clear()
    elif role == "GRAPH_LAUNCH":
        exe = (pid, b["args"][0] if b["args"] else None)
        if exe not in launched:
            launched.add(exe)
            return False
        return True
    elif role == "LAUNCH" and capturing.get(pid):
        return False
    return role in PASSED_OVER


class _Registers(dict):
    """A copy engine subchannel's registers on a channel the skim moved on: reading one not
    written since is history this decode has not seen."""

    def __init__(self, miss, key):
        super().__init__()
        self.miss, self.key = miss, key

    def get(self, k, default=None):
        if k not in self:
            pid, _, hchannel, token = self.key[0]
            self.miss((None, f"copy engine register {k:#x} of channel token {token:#x} read "
                             f"before it was written",
                       ("register", (pid, hchannel, token), self.key[1], k)))
        return super().get(k, default)


class _Subchannels(dict):
    def __init__(self, miss, key):
        super().__init__()
        self.miss, self.key = miss, key

    def get(self, k, default=None):
        # (the launch decoder stores a fresh dict where get gives None: given one here)
        if k not in self:
            super().__setitem__(k, _Registers(self.miss, (self.key, k)))
        return super().get(k)


def _watch(sd, skimmed_keys, miss):
    """At the warm-up's start: the channels the skim moved on, made as the launch decoder
    makes them, their copy engine registers watched."""
    from decoders.launch.channel import _Channel
    for key in sd._streams:
        pid, _, hchannel, token = key
        skimmed_keys.add((pid, hchannel, token))
        ld = sd.decoder(pid)
        ch = ld._channels.get(key)
        if ch is None:
            ch = ld._channels[key] = _Channel(key)
        ch.copy = _Subchannels(miss, key)
    for pid in {key[0] for key in sd._streams}:
        _watch_memory(sd.decoder(pid), pid, miss)
    sd.probe_sink._latches = _Latches(sd.probe_sink._latches, miss)


class _Latches(dict):
    """LaunchSink._latches watched: a programmatic dependent launch waiting on a latch no
    launch since the skim arrived at."""

    def __init__(self, items, miss):
        super().__init__(items)
        self.miss = miss

    def get(self, key, default=None):
        if key not in self:
            self.miss((None, f"no launch arrived at latch {key[2]} of channel token "
                             f"{key[1]:#x} yet", ("latch", key)))
        return super().get(key, default)


class _Launched(dict):
    """LaunchDecoder._launched (VA -> the QMD image last launched there) watched: a lookup
    that finds none may be a QMD launched before the skim ended ("already decoded")."""

    def __init__(self, items, miss, pid):
        super().__init__(items)
        self.miss, self.pid = miss, pid

    def get(self, va, default=None):
        if va not in self:
            self.miss((None, f"no QMD launched at {va:#x} yet", ("launched", self.pid, va)))
        return super().get(va, default)


def _watch_memory(ld, pid, miss):
    """A launch decoder's QMD addresses and memory image watched: bytes asked for and not
    known may have been written before the skim ended."""
    ld._launched = _Launched(ld._launched, miss, pid)
    mem = ld.memory
    read_known, holds = mem.read_known, mem.holds

    def watched_read_known(va, limit):
        data = read_known(va, limit)
        if len(data) < limit:
            miss((None, f"{limit} bytes at {va:#x} read, {len(data)} known",
                  ("memory", pid, va, limit, len(data))))
        return data

    def watched_holds(va, n, prefix):
        got = holds(va, n, prefix)
        if not got:
            miss((None, f"QMD image at {va:#x} not held", ("holds", pid, va, n, bytes(prefix))))
        return got
    mem.read_known, mem.holds = watched_read_known, watched_holds


def _skim(sd, rec):
    """A submission passed over: its channel's byte count and the submission counter move
    on as SubmissionDecoder.feed would move them."""
    b = rec.body
    pid = rec.pid
    key = (pid, b["hClient"], b["hChannel"], b["token"])
    dec = sd._streams.get(key)
    if dec is None:
        host = b.hClass if class_info(b.hClass) is not None else None
        dec = sd._streams[key] = sd._stream_cls(gpu=sd.gpu, host_class=host)
        sd.channels[key] = {"pid": pid, "token": b["token"], "hChannel": b["hChannel"],
                            "hClient": b["hClient"], "host_class": dec.host_class,
                            "submissions": 0, "bytes": 0, "binding": dec.binding}
        sd._seen_problems[key] = 0
    size = sum(seg["size"] for seg in b["segments"] if seg["flags"] & TL_SF_COPIED)
    dec.position += size
    info = sd.channels[key]
    info["submissions"] += 1
    info["bytes"] += size
    sd._count += 1


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
