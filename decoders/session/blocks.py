"""The blocks of a decode sharded by time (decoders/session/shard.py, which runs them, and
docs/sharded-decode.md): one decode that skims, then decodes a block of SUBMISSION records
after its warm-up, with what the block's records add to the report kept apart, and the
merge of the blocks' into one model.

Each block's decode reads the capture from its start. Before the block's warm-up it skims
(decoders/session/skim.py); from its warm-up on it decodes everything. What a record of
the block adds to the lists and counts a report shows (PER_RECORD) goes to the block's own
fields; what a record before or after it adds goes to a scratch set, but the launches that
arrived in the block, which reach the sink later. Launches are numbered by each block from
0: the merge adds the launches of the blocks before. Each block says what history it held
where it ended (skim.known()): the union of what the blocks before a block held is what one
decode held where it begins, and a miss of history that was there (skim.counts()) is a
reason to decode the capture as before (Diverged).
"""
import gc
import os
from collections import Counter

from decoders.capture.reader import CaptureReader
from decoders.errors import TraceLaunchError
from decoders.launch.qmds import UNKNOWN
from decoders.session.budget import _Budget
from decoders.session.launches import (MISMATCHED_KEPT, TALLY_KEYS, WALK_BACK, LaunchStage,
                                       gpu_family, repair_launch)
from decoders.session.model import DEFAULT_KEEP, _launch_dump, _launch_load
from decoders.session.records import RecordHandlers
from decoders.session.skim import Detectors, Skim, known
from decoders.session.whole import (COLLECT_RECORDS, LIST_LOADS, PROGRESS_RECORDS,
                                    _new_model, _progress_source, report_lists)
from decoders.spill import SpillChain, SpillList

_OTHER = ("(other kernels and shapes)", (), ())

# What a record adds to the report's lists and counts: each block keeps its own records'
LISTS = ("submissions", "launches", "syncs", "copies", "api_calls")
COUNTERS = ("api_call_names", "verified", "sync_counts", "copy_counts")
PER_RECORD = LISTS + COUNTERS + ("channel_counts", "rank_counts", "kernel_tally",
                                 "mismatched", "failed_calls", "failed_call_count",
                                 "failed_before", "scheduling_qmds", "conditional_bodies")



class Diverged(TraceLaunchError):
    """A sharded decode cannot give what a decode in one process would."""


class _Outputs:
    """The model's PER_RECORD fields, switched between the block's own and a scratch set."""

    def __init__(self, model, brief, directory=None):
        self.model = model
        self.sets = [_fresh(brief, False), _fresh(brief, True, directory)]
        self.own = None
        self.use(False)

    def use(self, own):
        if own is self.own:
            return
        model = self.model
        if self.own is not None:
            cur = self.sets[self.own]
            for f in PER_RECORD:
                cur[f] = getattr(model, f)
        for f, v in self.sets[own].items():
            setattr(model, f, v)
        self.own = own
        if self.on_switch is not None:
            self.on_switch(model)

    on_switch = None


def _fresh(brief, own, directory=None):
    """Empty PER_RECORD fields of a brief decode: the block's `own` keep its first `brief`
    launches (a block after a first one with fewer holds the rest of the capture's first:
    mix3's start has few launches in many submissions), the scratch ones none.
    A full decode (brief None): the block's `own` lists all in files by name in
    `directory` (the merge adopts them), the scratch ones counted only."""
    if brief is None:
        lists = report_lists(0, 0, False, directory=directory) if own else \
            report_lists(0, 0, True, drop_submissions=True)
    else:
        lists = report_lists(DEFAULT_KEEP, brief, True, drop_submissions=True,
                             launches=brief if own else 0)
    return dict(
        lists,
        api_call_names=Counter(), verified=Counter(), sync_counts=Counter(),
        copy_counts=Counter(), channel_counts={}, rank_counts={}, kernel_tally={},
        mismatched=[], failed_calls=[], failed_call_count=0, failed_before={},
        scheduling_qmds=0, conditional_bodies=0)


class Block:
    """A decode of a capture that skims every record, or, once given a block
    (`begin_warmup`), decodes its warm-up and its block: the SUBMISSION records numbered
    lo_s to hi_s - 1 and the records between (hi_s None: to the end). Fed one record at a
    time (feed), so that a process that skims can fork one for each block as it reads.
    finish() once the records end (or feed said stop) fills `own` (the PER_RECORD fields
    the block's records added), `problems` (its launch decoder's, packed), `misses` and
    `known` (skim.Detectors, skim.known() where it ended) and `why` (why it cannot be
    merged: texts)."""

    def __init__(self, path, stream, brief, progress=None, directory=None):
        from decoders.window import Windows
        self.reader = reader = CaptureReader(stream, name=str(path))
        branch = (str(reader.meta.get("driver", "580")).split(".")[0]) or "580"
        self.model = model = _new_model(path, reader, branch, DEFAULT_KEEP, brief)
        self.why = [] if not Windows(reader.meta).active else ["a capture with windows"]
        self.directory = directory
        self.out = out = _Outputs(model, brief, directory)
        self.stage = stage = LaunchStage(model, model.attribution, gpu_family(reader.meta))
        handlers = RecordHandlers(model, _Budget(model), branch, stage, None)

        def rebind(m):      # (the handler keeps the list's bound append)
            if handlers._append_submission is not None:
                handlers._append_submission = m.submissions.append_dumped
        out.on_switch = rebind
        rebind(model)
        self.table = handlers.table
        self.sd, self.sink = stage.decoder, stage.sink
        self.sink.light = True      # (until the warm-up: launches no output keeps)
        self.brief = brief
        self.nsub = 0           # SUBMISSION records read
        self.n = 0              # records read
        self.now = None         # the record being fed
        self.lo = self.end = INF    # record indices of the block's first and next block's
        self.warm_s = self.lo_s = self.hi_s = None
        self.skim = Skim()
        self.det = None
        self.p_lo = self.p_hi = None    # the launch decoder's problems at lo and at end
        self.stopped = False
        self.own = None
        self.problems, self.misses, self.known = [], [], None
        self.progress = progress
        self.where = _progress_source(stream, reader) if progress is not None else None
        self.board = None       # (block, record index): how far it got (shard.Board)
        self.tell = None        # (item) -> None: what the follower may check before the
                                # block ends (shard._Early): its misses, its known()
        self._told = set()      # the misses' history told so far
        _route(self)

    def begin_warmup(self, warm_s, lo_s, hi_s):
        """Decode from the warm_s-th SUBMISSION record on (0: nothing skimmed), the block
        from the lo_s-th, to the hi_s-th (None: the end)."""
        self.warm_s, self.lo_s, self.hi_s = warm_s, lo_s, hi_s
        if warm_s == 0 and self.n == 0:
            self.skim = None
            self.sink.light = False

    def feed(self, rec):
        """One record; False: stop (the block is decoded, or a budget ran out)."""
        i = self.now = rec.index
        kind = rec.type
        self.n += 1
        if not self.n % COLLECT_RECORDS:
            gc.collect(0)
            if not self.n % PROGRESS_RECORDS:
                if self.where is not None:
                    self.progress(*self.where())
                if self.board is not None:
                    self.board(self, i)
        skim = self.skim
        if kind == "SUBMISSION":
            s = self.nsub
            self.nsub = s + 1
            if s == self.warm_s and skim is not None:
                if self.seed:
                    self._plant(self.seed)
                if skim.skimmed:    # a method sequence cut by what was passed over: dropped
                    self.sd.resync()
                    self.det = Detectors(self.sd, self.sink, lambda: self.now,
                                         skim.launched_on)
                    if self.tell is not None:
                        self.det.on_miss = self._tell_miss
                    _watch_arrivals(self)
                self.skimming = False
                self.sink.light = False
            if s == self.lo_s:
                # the block begins: its launches are numbered from 0
                self.out.use(True)
                self.lo = i
                self.sink._arrived, self.sink._last_kernel = 0, {}
                self.p_lo = len(self.sd.problems)
            elif s == self.hi_s:
                self.out.use(False)
                self.end = i
                self.p_hi = len(self.sd.problems)
                self.known = known(self.sd)     # what the next block may ask
                if self.tell is not None:
                    self.tell(("known", self.known))
            if self.end <= i and all(l.record_index >= self.end for l, _ in self.sd._pending):
                return False    # its launches all handed over: the rest is the next block's
        if skim is not None and self.skimming:
            if (kind == "API_ENTER" or kind == "API_EXIT" or kind == "SUBMISSION") and \
                    skim.passes_over(rec, self.model.api):
                if kind == "SUBMISSION":
                    skim.submission(self.sd, rec)
                return True
        elif kind == "API_EXIT" and skim is not None and skim.passed and \
                (rec.pid, rec.body["call"]) in skim.passed:
            skim.passed.discard((rec.pid, rec.body["call"]))
            if i >= self.lo:
                self.why.append(f"record {i}: a call the skim passed over returns in the block")
        h = self.table.get(kind)
        if h is not None and h(rec) is False:
            self.stopped = True
            self.why.append("a budget stopped the decode")
            return False
        return True

    skimming = True
    seed = None     # {pid: [(VA, QMD image, record that wrote it)]}: skim.seeds()
    EARLY_MISSES = 256

    def _plant(self, seed):
        """The QMD images one decode holds where the block begins (skim.seeds()), where
        the warm-up begins: in memory, as written by their records, and launched there.
        The warm-up writes none of them (a block after theirs knew no byte there)."""
        for pid, items in seed.items():
            ld = self.sd.decoder(pid)
            mem = ld.memory
            for va, image, by in items:
                mem.write(va, image)
                mem.written_by[va] = by
                ld._launched[va] = image      # distinct misses told before the block ends, at most

    def _tell_miss(self, miss):
        # a miss in the block (not its warm-up), each kind of history once: the follower
        # may find it counts long before this block, or the one before it, ends
        told, what = self._told, miss[2]
        try:
            hash(what)
        except TypeError:
            what = repr(what)
        if miss[0] >= self.lo and what not in told and len(told) < self.EARLY_MISSES:
            told.add(what)
            self.tell(("miss", miss))

    def finish(self, ended):
        """`ended`: the records ended (not a stop at the block's end)."""
        model, sd, out = self.model, self.sd, self.out
        if ended:
            model.records = self.n
            if self.skim is not None and self.skim.passed:
                self.why.append("an API call the skim passed over never returned")
        if self.reader.problems or model.problems:
            self.why.append("the capture has problems")
        if ended and self.lo != INF and self.end != INF:
            # the records ended before the block's launches were all handed over (a
            # channel's last launch is held for later semaphores, until the capture's end
            # in one decode: multi-gpu): handed over now, in the order one decode's end
            # hands them (what is past the block goes to the scratch fields)
            sd.hand_over()
        if ended and self.lo != INF and self.end == INF:
            # the last block: its channels' ends, the launches still held
            out.use(True)
            n = len(model.problems)
            self.stage.finish(model, (), self.p_lo or 0)
            self.problems = [_problem_dump(p) for p in model.problems[n:]]
            del model.problems[n:]
        elif self.p_hi is not None and self.p_hi > (self.p_lo or 0):
            from types import SimpleNamespace
            from decoders.session.entries import _launch_problems
            tmp = SimpleNamespace(problems=[])
            _launch_problems(tmp, SimpleNamespace(problems=sd.problems[self.p_lo:self.p_hi]),
                             self.stage.record_offsets)
            self.problems = [_problem_dump(p) for p in tmp.problems]
        out.use(True)
        if self.brief is not None:      # (a full decode keeps them all)
            for n, launch in self.own_kernels.values():
                self.sink._resolved(launch)
                model.launches.pin(n, launch)
        self.own = {f: getattr(model, f) for f in PER_RECORD}
        if self.det is not None:
            self.misses = [m for m in self.det.misses if m[0] >= self.lo]
        return self


INF = float("inf")


def _problem_dump(p):
    return (type(p).__name__, str(p), getattr(p, "offset", None), getattr(p, "record", None),
            getattr(p, "path", None), getattr(p, "detail", None))


def _problem_load(t):
    """A problem as the block's decode made it: the same text and fields."""
    from decoders.errors import CaptureError, DecodeError
    name, text, offset, record, path, detail = t
    cls = CaptureError if name == "CaptureError" else DecodeError
    p = cls.__new__(cls)
    Exception.__init__(p, text)
    p.offset, p.path = offset, path
    if cls is CaptureError:
        p.record, p.detail = record, detail
    return p


def _route(block):
    """The sink's callbacks write the block's own fields for launches that arrived in the
    block and for syncs and copies of its records; the scratch ones for any other."""
    out = block.out
    sd = block.sd

    def routed(fn, index):
        def call(x):
            want = block.lo <= index(x) < block.end
            if want is out.own:
                return fn(x)
            was = out.own
            out.use(want)
            try:
                return fn(x)
            finally:
                out.use(was)
        return call
    by_launch = lambda launch: launch.record_index      # noqa: E731
    by_entry = lambda e: e.get("record_index", block.now)   # noqa: E731
    if block.brief is None:
        _keep_order(block)
    _own_latches(block)
    _failed_before(block)
    sd.sink = routed(sd.sink, by_launch)
    sd.late = routed(sd.late, by_launch)
    sd.sync = routed(sd.sync, by_entry)
    sd.copy = routed(sd.copy, by_entry)


def _keep_order(block):
    """A full decode keeps every launch: the blocks' lists laid end to end must be one
    decode's, in the order the sink got them. A block says why not (block.why) where a
    launch of the block reached the sink after one past its end, or one before its start
    after one of its own (launches on two GPUs handed over apart: multi-gpu), or where a
    launch whose QMD was written before the block arrives in it (multi-gpu: the block
    before had stopped)."""
    sd, sink = block.sd, block.sd.sink
    seen = {"after": False, "own": False}

    def handed(launch):
        i = launch.record_index
        if i >= block.end:
            seen["after"] = True
        elif i >= block.lo:
            if seen["after"]:
                block.why.append(f"record {i}: a launch of the block handed over after one "
                                 f"past its end")
            seen["own"] = True
        elif seen["own"]:
            block.why.append(f"record {i}: a launch before the block handed over after one "
                             f"of its own")
        return sink(launch)

    arrived = sd.arrived

    def arrive(launch):
        # a launch whose QMD was written before the block and that arrives in it: the block
        # before may have stopped before it came (it waits only for what is pending)
        if block.lo <= block.now and launch.record_index < block.lo:
            block.why.append(f"record {block.now}: a launch of record {launch.record_index}, "
                             f"before the block, arrives in it")
        return arrived(launch)
    sd.sink, sd.arrived = handed, arrive


LATCHES = 4096      # latches a block keeps the last own arrival of (LaunchSink._latches')


def _failed_before(block):
    """A brief decode names, for each failed call, the last kernel launch of its process
    before it (LaunchSink.keep_before). Where the block's launches before the call hold
    none, one decode may find it in a block before: the block asks (block.ask_before: the
    call -> launches of the block before it) and tells its own last kernel launch per
    process (block.own_kernels, pinned at its end), and the merge answers."""
    sink, sd = block.sink, block.sd
    keep_before, handed = sink.keep_before, sd.sink
    asked = block.ask_before = {}
    kernels = block.own_kernels = {}

    def kept(call, before):
        keep_before(call, before)
        key = (call.index, call.pid)
        if before[1] is None and block.out.own and key in block.model.failed_before and \
                len(asked) < ASKED:
            asked[key] = before[0]

    def hand(launch):
        handed(launch)
        s = launch._summary
        if s["kernel"] and block.lo <= launch.record_index < block.end and \
                launch.kept_at is not None:
            kernels[s["pid"]] = (launch.kept_at[0], launch)
    sink.keep_before, sd.sink = kept, hand


def answered_before(asks, last_kernels, offset):
    """{(call record, pid): launch number} for a block's asks (_failed_before: a failed call
    and the block's launches before it), given the last kernel launch of each process in
    the blocks before (numbers in the merged list; the block's first is `offset`): one
    decode's answer, which looks back WALK_BACK launches at most (LaunchSink.keep_before)."""
    out = {}
    for key, n0 in asks:
        m = last_kernels.get(key[1])
        if m is not None and m >= offset + n0 - WALK_BACK:
            out[tuple(key)] = m
    return out


ASKED = 1024        # failed calls a block asks the blocks before it about, at most (the
                    # report shows the first FAILED_KEPT)


def _own_latches(block):
    """Per latch, the number of the last of the block's own launches that arrived there
    (block.own_last, _pack's arrivals: a later block's launch may wait on it). A launch of
    the block that waits on the latch of a launch before it that the block decoded (its
    warm-up's: jax-loops) has no number the block can give: a "latch" miss, which the
    follower answers as one of a latch no launch of the block reached."""
    sink = block.sink
    own_latches = set()         # the latches whose last arrival was an own launch's
    own_last = block.own_last = {}
    latch = sink._latch

    def latched(launch, s, n, pair):
        wait, arrive = pair
        key = (launch.pid, launch.channel)
        own = block.out.own
        before = own and wait is not None and key + (wait,) in sink._latches and \
            key + (wait,) not in own_latches
        latch(launch, s, n, pair)
        if before:      # a launch of the blocks before: the follower answers (as a miss)
            if block.det is None:
                block.why.append(f"record {launch.record_index}: a programmatic launch "
                                 f"waits on a launch before the block")
            else:
                s["programmatic"]["after_launch"] = None
                block.det.miss(f"latch {wait} of channel token {key[1]:#x} last reached "
                               f"before the block", ("latch", key + (wait,)))
        if arrive is not None and own:
            own_latches.add(key + (arrive,))
            if len(own_last) < LATCHES:
                own_last[key + (arrive,)] = n
            elif key + (arrive,) not in own_last:   # (a hostile capture's: not merged)
                block.why.append("more latches than a merge answers for")
                own_last[key + (arrive,)] = n
        elif arrive is not None:
            own_latches.discard(key + (arrive,))
    sink._latch = latched


def _watch_arrivals(block):
    sd, det = block.sd, block.det
    arrived, sync = sd.arrived, sd.sync

    def arrive(launch):
        det.arrived(launch)
        arrived(launch)

    def got_sync(e):
        if not det.entry("sync", e):
            return sync(e)
    sd.arrived, sd.sync = arrive, got_sync


# -- what a block sends, and the merge ---------------------------------------------------
def _pack(block):
    """What a block sends: its PER_RECORD fields as marshal takes them (each list as its
    length, the items it kept and its pinned items), its problems, misses and whys; for a
    block that never began (the records ended in its warm-up), that alone."""
    own = block.own
    if block.lo == INF:
        return {"began": False}

    def items(lst, dump=None):
        kept = [dump(x) if dump else x for x in lst._items]
        pinned = {i: (dump(x) if dump else x) for i, x in lst._pinned.items()}
        return (len(lst), kept, pinned)
    if block.brief is None:     # a full decode: its lists' files (SpillList.handed)
        out = {f: own[f].handed() for f in LISTS}
    else:
        out = {f: items(own[f], _launch_dump if f == "launches" else None) for f in LISTS}
    for f in COUNTERS:
        out[f] = list(own[f].items())
    out["channel_counts"] = list(own["channel_counts"].items())
    out["rank_counts"] = [(pid, (list(names.items()), works))
                          for pid, (names, works) in own["rank_counts"].items()]
    out["kernel_tally"] = [(k, list(c.items())) for k, c in own["kernel_tally"].items()]
    out["failed_before"] = list(own["failed_before"].items())
    out["ask_before"] = list(block.ask_before.items())
    out["last_kernels"] = [(pid, n) for pid, (n, _) in block.own_kernels.items()]
    for f in ("mismatched", "failed_calls", "failed_call_count", "scheduling_qmds",
              "conditional_bodies"):
        out[f] = own[f]
    out["problems"] = block.problems
    out["misses"] = block.misses
    out["known"] = block.known
    # the latches its own launches arrived at last, by their numbers: a later block's
    # programmatic launch may wait on one (shard._Results.reap answers it)
    out["arrivals"] = list(block.own_last.items())
    out["began"] = True
    out["span"] = (block.lo_s, block.hi_s if block.end != INF else None)
    out["why"] = "; ".join(block.why) or None
    return out


def merge(model, blocks, brief):
    """The model of one decode: `model` (the last block's, with what stands at the end) and
    each block's packed fields, in order. Raises Diverged where the blocks' lists cannot
    give the capture's (a block kept fewer launches than a brief decode shows; a block's
    tally kept apart too many shapes)."""
    # (the text report reads no submission past the first DEFAULT_KEEP, but a marked
    # launch's: a capture with marks is not sharded)
    lists = report_lists(DEFAULT_KEEP, brief, True, drop_submissions=True) \
        if brief is not None else {f: [] for f in LISTS}
    counters = {f: Counter() for f in COUNTERS}
    channels, ranks, tally = {}, {}, {}
    mismatched, failed, failed_before = [], [], {}
    last_kernels = {}   # pid -> the number of its last kernel launch in the blocks so far
    nfailed = sched = cond = 0
    offset = 0          # launches of the blocks before
    late = {}           # launch number -> (a block's kept launch past the first, its offset)
    if brief is None:
        _room_for(sum(1 for b in blocks for f in LISTS if b[f]["name"] is not None))
    for b in blocks:
        answers = dict(b.get("dependents") or ())
        for f, lst in lists.items():
            if brief is None:       # a full decode: the block's files, read in turn
                try:
                    lst.append(_adopted(f, b[f], offset, answers))
                except OSError as exc:
                    raise Diverged(f"a block's {f}: {exc}") from None
                continue
            total, kept, pinned = b[f]
            room = max(0, lst.keep - len(lst._items))
            if len(kept) < min(room, total):
                raise Diverged(f"a block kept {len(kept)} of its {total} {f}, fewer than "
                               f"the report shows")
            for x in kept[:room]:
                lst._items.append(_renumbered(_launch_load(x), offset, answers)
                                  if f == "launches" else x)
            if f == "launches":     # kept by the block, past the capture's first: one
                for k in range(room, len(kept)):    # decode pins them where mismatched
                    late[k + offset] = (kept[k], offset, answers)
            lst._dropped += total - min(room, total)
            for i, x in pinned.items():     # (launches alone pin: mismatched, failed before)
                lst._pinned[i + offset] = _renumbered(_launch_load(x), offset, answers)
        for f in COUNTERS:
            counters[f].update(dict(b[f]))
        for key, c in b["channel_counts"]:
            have = channels.get(key)
            if have is None:
                channels[key] = dict(c)
            else:
                for n in ("submissions", "entries", "bytes", "lost"):
                    have[n] += c[n]
                have.update(channel=c["channel"], cls=c["cls"])
        for pid, (names, works) in b["rank_counts"]:
            got = ranks.get(pid)
            if got is None:
                got = ranks[pid] = (Counter(), {})
            got[0].update(dict(names))
            for key, (n, size) in works.items():
                t = got[1].setdefault(key, [0, 0])
                t[0] += n
                t[1] += size
        for key, c in b["kernel_tally"]:
            if key == _OTHER:
                raise Diverged("a block kept apart more kernel shapes than the tally holds")
            t = tally.get(key)
            if t is None:
                if len(tally) >= TALLY_KEYS:
                    key = _OTHER
                    t = tally.get(key)
                if t is None:
                    t = tally[key] = Counter()
            t.update(dict(c))
        mismatched.extend(n + offset for n in b["mismatched"])
        failed.extend(b["failed_calls"])
        nfailed += b["failed_call_count"]
        for key, n in b["failed_before"]:
            failed_before[tuple(key)] = None if n is None else n + offset
        failed_before.update(answered_before(b.get("ask_before", ()), last_kernels, offset))
        for pid, n in b.get("last_kernels", ()):
            last_kernels[pid] = n + offset
        sched += b["scheduling_qmds"]
        cond += b["conditional_bodies"]
        offset += b["launches"]["n"] if brief is None else b["launches"][0]
    if brief is None:
        tails = report_lists(DEFAULT_KEEP, DEFAULT_KEEP, False)    # (calls never returned)
        lists = {f: SpillChain(parts, tails[f]) for f, parts in lists.items()}
    else:
        # launches past the first `brief` are pinned when mismatched or before a failed call
        keep = set(mismatched[:MISMATCHED_KEPT]) | {n for n in failed_before.values()
                                                     if n is not None}
        pinned = lists["launches"]._pinned
        lists["launches"]._pinned = {i: x for i, x in pinned.items() if i in keep}
        for i in keep:
            if i in late and i not in pinned:
                x, off, ans = late[i]
                lists["launches"]._pinned[i] = _renumbered(_launch_load(x), off, ans)
    for f, lst in lists.items():
        setattr(model, f, lst)
    for f, c in counters.items():
        setattr(model, f, c)
    model.channel_counts, model.rank_counts, model.kernel_tally = channels, ranks, tally
    model.mismatched = mismatched[:MISMATCHED_KEPT]
    from decoders.session.entries import FAILED_KEPT
    model.failed_calls = failed[:FAILED_KEPT]
    model.failed_call_count = nfailed
    model.failed_before = failed_before
    model.scheduling_qmds, model.conditional_bodies = sched, cond
    return model


def _room_for(files):
    """The merged lists of a full decode hold each block's files open (up to five a block;
    a long job decoded while it runs has hundreds of blocks): the descriptors this process
    may open raised to its hard limit where they would not do; Diverged where even that is
    too few."""
    import resource
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = len(os.listdir("/proc/self/fd")) + files + 64
        if soft == resource.RLIM_INFINITY or soft >= want:
            return
        if hard != resource.RLIM_INFINITY and hard < want:
            raise Diverged(f"the blocks' {files} files are more than this process may open "
                           f"({hard})")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY
                                                    else hard, hard))
    except (OSError, ValueError) as exc:
        raise Diverged(f"the blocks' {files} files: {exc}") from None


def _adopted(f, handed, offset, answers):
    """A block's own list `f` of a full decode, from its file; its launches numbered as the
    capture's."""
    if f != "launches":
        return SpillList.adopt(handed, load=LIST_LOADS[f])
    return SpillList.adopt(handed, _launch_dump,
                           lambda t: _renumbered(_launch_load(t), offset, answers),
                           repair_launch)


def _renumbered(launch, offset, answers):
    """A block's launch as one decode's: its programmatic launch's number made the
    capture's (or, waiting on a latch no launch of the block arrived at, the capture's
    number of the last launch of a block before that did: ("latch", pid, channel, latch)
    in `answers`), and each dependent pointer where the block knew no byte of the QMD
    given one decode's answer (`answers`: {(pid, VA): "already decoded" or None}, the
    merge's: skim.dependent_answer)."""
    s = launch._summary
    pdl = s.get("programmatic")
    if pdl and pdl.get("after_launch") is not None:
        pdl["after_launch"] += offset
    elif pdl and answers:
        pdl["after_launch"] = answers.get(("latch", launch.pid, launch.channel,
                                           pdl["waits_on_latch"]))
    if answers:
        for d in s["dependents"]:
            if d.pop(UNKNOWN, False):
                why = answers.get((launch.pid, d["pointer"]))
                if why is not None:
                    d["why"] = why
    return launch
