"""The launch stages of a decode: SUBMISSION records -> launches (decoders/submissions.py)
-> the launch sink, which resolves each launch's GPU VAs through the object tree, ties it
to its API call (decoders/cuda/attribute.py), counts it, and keeps it (model.launches).

A launch is resolved when its submission has been decoded (`arrived`), and reaches the
sink, in launch order, once nothing can change it: only a channel's last launch can, when
a later submission of that channel attaches semaphores to it (the release of an event
record). Those are resolved when that submission is decoded (`late`). At most
SubmissionDecoder.HOLD launches wait: past that the oldest goes to the sink anyway, and a
semaphore that then reaches a launch already in the spill file is recorded as a patch,
applied when the launch is read back. No stage walks the launches it holds.
"""
import struct
from collections import Counter

from decoders.launch.syncs import copy_direction, count_sync
from decoders.session.entries import FAILED_KEPT, _launch_problems
from decoders.session.model import count_rank_launch
from decoders.spill import SpillList
from decoders.submissions import SubmissionDecoder

_WORDS = struct.Struct("<Q")
_VERIFIED = {True: "verified", False: "mismatch"}     # attribution "verified" -> its count
TALLY_KEYS = 4096       # distinct (kernel, grid, block) kept apart; the rest as one row
MISMATCHED_KEPT = 1000  # indices of mismatched launches remembered for the report
WALK_BACK = 4096        # launches looked at before a failed call for one of its process with
                        # a kernel (tracer/outcome.py launch_before)


class LaunchStage:
    """SUBMISSION records in, launches out to the sink; the records whose decoding found
    problems (their offsets, for the problems' messages)."""

    def __init__(self, model, attr, gpu, windows=None):
        self.sink = sink = LaunchSink(model, attr, windows)
        self.decoder = SubmissionDecoder(gpu=gpu, sink=sink, arrived=sink.arrived,
                                         late=sink.late, sync=sink.sync, copy=sink.copy)
        self.record_offsets = {}

    def feed(self, rec, call):
        """One SUBMISSION; `call`: the API call its doorbell rang in (or None)."""
        dec = self.decoder
        nproblems = len(dec.problems)
        self.sink.call = call
        self.sink.at = (rec.pid, rec.tid, rec.t_start)
        dec.feed(rec.index, rec.body, rec.pid)
        if len(dec.problems) != nproblems:
            self.record_offsets[rec.index] = rec.offset

    def finish(self, model, reader_problems=(), since=0):
        _launch_problems(model, self.decoder.finish(), self.record_offsets, since)
        self.sink.settle()


class LaunchSink:
    """Each launch: resolved as it arrives, then attributed, counted and kept in launch
    order; `late` for one that a later submission gave more semaphores."""

    def __init__(self, model, attr, windows=None):
        self.model = model
        self.windows = windows  # decoders/window.py Windows: inside or outside a window
        self.tree = model.objects
        self.attr = attr
        self.call = None        # the API call of the submission being decoded
        self.at = None          # its (pid, tid, doorbell time)
        self._calls = {}        # id(launch not yet kept) -> the API call its doorbell rang in
        # id(launch not yet kept, arrived in no call) -> (pid, tid, doorbell time): a launch
        # call's entry may come after it though the call began before (entered)
        self._early = {}
        self._before_entry = set()  # ids of those given to the call they rang in
        self.patched = 0        # late changes recorded as patches of the spill file
        self._gpus = {}         # (pid, hChannel) -> GPU index (sync)
        # a brief decode: launches arrived (each arrives in the order it is kept), and per
        # process the last kernel launch among them (its number, the launch)
        self.brief = model.brief is not None
        self._arrived = 0
        self._last_kernel = {}
        self._latches = {}      # (pid, channel, latch) -> the launch that last arrived there
        # a brief decode resolves only the launches it keeps: id -> a launch arrived and not
        # resolved yet, that may still be kept (not handed over yet, or the last kernel
        # launch of its process, which a failed call may keep); each is resolved before the
        # tree changes (settle), so that when it is, it is as the tree stood at its arrival
        self._unresolved = {}
        # id -> a launch arrived, not handed over, whose argument words the tree has not
        # been asked about (settle): its pointers are named as the tree stood at its
        # arrival, not at its hand-over (a channel's last launch may wait for the capture's
        # end, after the program freed its buffers), wherever a decode in blocks hands it
        self._unstashed = {}
        # a decode in blocks' skim (decoders/session/blocks.py: before a block's warm-up, or
        # a process that only skims): its launches go to scratch lists no report reads, so
        # they are counted and numbered, and their latches kept, but not resolved, stashed
        # or attributed (a long JAX job's skim decodes the launches of every graph replay
        # after an exec update: attributing them was a third of its time)
        self.light = False
        # id -> a launch that arrived light, not handed over yet (held: its id stays its own)
        self._light = {}

    def arrived(self, launch):
        """Its submission decoded: resolved through the tree as it stands now (a brief
        decode: once it is kept, with the tree as it stands now)."""
        if self.light:
            self._light[id(launch)] = launch
            return
        s = launch._summary
        self._unstashed[id(launch)] = launch
        if self.brief:
            self._unresolved[id(launch)] = launch
        else:
            _resolve_launch(self.tree, s)
        if self.call is not None:
            self._calls[id(launch)] = self.call
        elif self.at is not None:
            self._early[id(launch)] = self.at
        if self.brief:
            if s["kernel"]:
                pid = s["pid"]
                last = self._last_kernel.get(pid)
                if last is not None and last[1].kept_at is not None:    # handed over, dropped
                    self._unresolved.pop(id(last[1]), None)
                self._last_kernel[pid] = (self._arrived, launch)
            self._arrived += 1

    def entered(self, call):
        """A launch call's API_ENTER: the launches not yet kept that arrived in no call, on
        its thread, with a doorbell at or after its entry, rang inside it, before the shim
        wrote the record: the driver's work for the shim's own lookups on the call's
        kernel (its parameter layout: libcuda loads a lazily loaded module then;
        captures/cdp). They are the call's, rung before its entry (attribute.py)."""
        early = self._early
        for key, (pid, tid, t) in list(early.items()):
            if pid == call.pid and tid == call.tid and t >= call.t_start:
                del early[key]
                self._calls[key] = call
                self._before_entry.add(key)

    def settle(self):
        """The tree is about to change: resolve the launches that may still be kept, and ask
        it about the argument words of those not handed over yet (each launch once)."""
        for launch in self._unresolved.values():
            _resolve_launch(self.tree, launch._summary)
        self._unresolved.clear()
        if self._unstashed:
            tree = self.tree
            gen = tree.generation
            for launch in self._unstashed.values():
                launch.stash = (gen, _stash(tree, launch._summary))
            self._unstashed.clear()

    def _resolved(self, launch):
        """A launch kept after all: resolved now (the tree has not changed since it arrived)."""
        if self._unresolved.pop(id(launch), None) is not None:
            _resolve_launch(self.tree, launch._summary)

    def before(self, pid):
        """At an API call's entry: (launches arrived so far, the last kernel launch of
        process `pid` among them as (number, launch) or None). Every launch of a submission
        recorded before the call has arrived by then: they are the launches a bisection of
        the kept launches by record index would find before it."""
        return self._arrived, self._last_kernel.get(pid)

    def keep_before(self, call, before):
        """A failed call of a brief decode: the launch before it (tracer/outcome.py
        launch_before: within WALK_BACK launches) kept, and its number noted."""
        model = self.model
        if model.failed_call_count > FAILED_KEPT:
            return
        n0, last = before
        n = last[0] if last is not None and last[0] >= n0 - WALK_BACK else None
        if n is not None:
            self._resolved(last[1])
            model.launches.pin(n, last[1])
        model.failed_before[(call.index, call.pid)] = n

    def __call__(self, launch):
        model, attr = self.model, self.attr
        s = launch._summary
        if self._light and self._light.pop(id(launch), None) is not None:
            n = len(model.launches)
            if launch.latch is not None:
                self._latch(launch, s, n, launch.latch)
            launch.kept_at = (n, len(s["semaphores"]))
            model.launches.append(launch)
            return
        lazy = id(launch) in self._unresolved      # (a brief decode: resolved if kept)
        if lazy and self.windows is not None and self.windows.active:
            self._resolved(launch)
            lazy = False
        r = s.get("resolved")
        if not lazy and (r is None or len(r["semaphores"]) < len(s["semaphores"])):
            _resolve_launch(self.tree, s)       # (arrived did it, but for late semaphores)
        key = id(launch)
        self._unstashed.pop(key, None)
        call = self._calls.pop(key, None)
        self._early.pop(key, None)
        early = key in self._before_entry
        if early:
            self._before_entry.discard(key)
        a = None
        n = len(model.launches)
        if attr.any_calls or call is not None:
            # a brief decode drops this launch unless it differs from its call: its
            # arguments by name are then not worked out
            a = attr.for_launch(launch, call, args=not self.brief or n < model.launches.keep,
                                before_entry=early)
            if launch._own and a["api_call"] is not None:   # summary already read
                from decoders.cuda.calls import own_launch_config
                a["api_call"] = dict(a["api_call"],
                                     launch=own_launch_config(a["api_call"]["launch"]))
            s["api_call"] = a["api_call"]
            s["verified"] = a["verified"]
            s["attribution"] = a
            if s["kernel"]:
                # a graph's QMD sent by cuGraphUpload (instantiate, exec update) is
                # scheduled there and runs at a later cuGraphLaunch: counted apart
                sent = (a.get("graph_node") or {}).get("sent_by")
                model.verified["graph_prepared" if sent else
                               _VERIFIED.get(a["verified"], "not_checked")] += 1
        if self.windows is not None and self.windows.active:
            self.windows.launch(launch, s)
        _tally(model, s, a)
        if model.rank_counts is not None:
            count_rank_launch(model.rank_counts, s)
        latch = launch.latch
        if latch is not None:
            self._latch(launch, s, n, latch)
        launch.kept_at = (n, len(s["semaphores"]))
        pinned = self.brief and model.mismatched and model.mismatched[-1] == n
        if lazy:
            if pinned or n < model.launches.keep:
                self._resolved(launch)
            elif self._last_kernel.get(s["pid"], (None, None))[1] is not launch:
                del self._unresolved[id(launch)]        # dropped: never shown
        model.launches.append(launch)
        if pinned:
            model.launches.pin(n, launch)       # the report shows every mismatched launch

    def _latch(self, launch, s, n, latch):
        """A programmatic dependent launch names the launch whose latch it waits on: the
        last one on its channel that arrives there (the latch ids are the channel's)."""
        wait, arrive = latch
        key = (launch.pid, launch.channel)
        if wait is not None:
            s["programmatic"]["after_launch"] = self._latches.get(key + (wait,))
        if arrive is not None:
            if len(self._latches) >= 4096:  # bounded whatever ids a capture holds (a channel
                self._latches.clear()       # cycles through a few: 56..63, 72..74 measured)
            self._latches[key + (arrive,)] = n

    def sync(self, entry):
        """A semaphore method no launch holds (docs/json.md syncs[]): where its address is,
        through the process's tree as it stands now; kept in model.syncs and counted."""
        pid = entry["pid"]
        entry["resolved"] = self.tree.view(pid).resolution(entry["address"]) \
            if entry.get("address") else None
        entry["gpu"] = self._gpu(pid, entry.get("hChannel"))
        by = entry.get("released_by")
        if by:
            by["gpu"] = self._gpu(pid, by.get("hChannel"))
        count_sync(self.model.sync_counts, entry)
        self.model.syncs.append(entry)

    def copy(self, entry):
        """A copy engine transfer (docs/json.md copies[]): its source and destination
        through the process's tree, the GPU its channel runs on and the GPU (or host) each
        side's memory is on, and so its direction; kept in model.copies and counted."""
        pid = entry["pid"]
        tree = self.tree.view(pid)
        entry["gpu"] = self._gpu(pid, entry.get("hChannel"))
        for side in ("src", "dst"):
            r = tree.resolution(entry[side]) if entry[side] else None
            entry[side + "_resolved"] = r
            entry[side + "_on"] = self._memory_on(pid, r)
        # remapped from constants only (no source: LaunchDecoder._copy): libcuda's fills
        entry["direction"] = copy_direction(entry["src_on"], entry["dst_on"],
                                            fill=entry.get("remap") and not entry["src"])
        self.model.copy_counts[entry["direction"]] += 1
        self.model.copies.append(entry)

    def _memory_on(self, pid, r):
        """'host', a GPU index (vidmem of a device of the process), or None (not known)."""
        if r is None:
            return None
        if r.get("memory") == "sysmem":
            return "host"
        if r.get("memory") != "vidmem":
            return None
        return self._gpu_of(pid, r.get("handle"))

    def _gpu(self, pid, hchannel):
        """The index (device minor) of the GPU channel `hchannel` of `pid` runs on, or None
        (remembered: a channel's GPU is known once its channel is made)."""
        key = (pid, hchannel)
        got = self._gpus.get(key, self)
        if got is not self:
            return got
        got = self._gpu_of(pid, hchannel)
        if got is not None:
            self._gpus[key] = got
        return got

    def _gpu_of(self, pid, handle):
        """The GPU index of the device RM object `handle` of `pid` was made under, or None."""
        gpus = getattr(self.tree, "gpus", None)
        dev = gpus.device_of(pid, handle) if gpus is not None and handle is not None else None
        return gpus.gpu(pid, dev).get("index") if dev is not None else None

    def late(self, launch):
        """Semaphores attached to a kept launch by a later submission: resolved now; a
        launch already written to the spill file gets them as a patch (its semaphores past
        those it had when kept, and their resolutions, which follow them index for index)."""
        s = launch._summary
        if id(launch) in self._light:
            return      # (not handed over yet: it goes as it arrived)
        self._unresolved.pop(id(launch), None)
        _resolve_launch(self.tree, s)
        kept = self.model.launches
        at = launch.kept_at
        if at is not None and isinstance(kept, SpillList) and kept.sealed(at[0]):
            n = at[1]
            kept.patch(at[0], (n, s["semaphores"][n:], s["resolved"]["semaphores"][n:]))
            self.patched += 1


def repair_launch(launch, change):
    """SpillList repair for model.launches: a late patch (LaunchSink.late) applied."""
    n, sems, resolved = change
    s = launch._summary
    s["semaphores"] = s["semaphores"][:n] + sems
    r = s.get("resolved")
    if r is not None:
        r["semaphores"] = r["semaphores"][:n] + resolved
    return launch


def _tally(model, s, a):
    """Count a launch into model.kernel_tally (before it is appended: its index is the
    number of launches kept so far)."""
    if not s["kernel"]:
        model.scheduling_qmds += 1
        return
    if a is not None and (a.get("graph_node") or {}).get("conditional"):
        model.conditional_bodies += 1       # sent in a conditional body (docs/graphs.md)
    k = a["kernel"] if a is not None else None
    key = (k["name"] if k else None, tuple(s["grid"] or ()), tuple(s["block"] or ()))
    tally = model.kernel_tally
    t = tally.get(key)
    if t is None:
        if len(tally) >= TALLY_KEYS:
            key = ("(other kernels and shapes)", (), ())
            t = tally.get(key)
        if t is None:
            t = tally[key] = Counter()
    if a is not None and a.get("graph_node") and a["graph_node"].get("sent_by"):
        t["graph_prepared"] += 1
        return
    verified = a["verified"] if a is not None else None
    t[_VERIFIED.get(verified, "not_checked")] += 1
    if verified is False and len(model.mismatched) < MISMATCHED_KEPT:
        model.mismatched.append(len(model.launches))


def _stash(tree, s):
    """{word: tree.resolve_va(word)} of each nonzero 8-byte-aligned word of the launch's
    argument block (where a pointer argument lies): what attribute.resolve() gives from
    the tree for the launch's pointers, as the tree stands now."""
    params = s.get("params")
    hw = params.get("hex") if params else None
    if not hw:
        return {}
    data = bytes.fromhex(hw)
    pid = s.get("pid")
    words = {w for (w,) in _WORDS.iter_unpack(data[:len(data) // 8 * 8])}
    return {w: tree.resolve_va(w, pid=pid) for w in words if w}


def _resolve_launch(tree, s):
    """summary["resolved"]: each GPU VA of a launch (QMD, program, constant banks,
    semaphores) resolved through the object tree as it stands when the launch's
    submission is decoded (a semaphore set by a later method: when that one is).
    Lists follow constant_buffers and semaphores index for index."""
    r = s.get("resolved")
    tree = tree.view(s.get("pid"))     # handles and VAs are the launching process's
    res = tree.resolution
    if r is None:
        # A launch loop's QMDs sit in a ring of slots and share their program and constant
        # banks (one remembered list per cbanks part): resolved once per tree state
        # (ObjectTree.launch_memo); the constant bank list is shared until the summary is
        # read (Launch.summary gives it its own copy).
        va, prog, cbs = s["qmd_address"], s.get("program_address"), s["constant_buffers"]
        memo = tree.launch_memo
        key = (va, prog, id(cbs))
        seen = memo.get(key)
        if seen is None or seen[0] is not cbs:      # (the entry keeps cbs, so its id)
            seen = (cbs, res(va), res(prog) if prog else None,
                    [res(cb["address"]) if cb["address"] else None for cb in cbs]
                    if cbs else [])
            if len(memo) >= 4096:
                memo.clear()
            memo[key] = seen
        r = s["resolved"] = {"qmd_address": seen[1], "program_address": seen[2],
                             "constant_buffers": seen[3], "semaphores": []}
    sems, done = s["semaphores"], r["semaphores"]
    if len(done) < len(sems):
        for sem in sems[len(done):]:
            done.append(res(sem["address"]) if sem.get("address") else None)


def _sm(meta):
    """90 for compute capability "9.0": which cubin of a fatbin the GPU ran."""
    try:
        major, minor = str(meta.get("compute_capability", "9.0")).split(".")[:2]
        return int(major) * 10 + int(minor)
    except ValueError:
        return 90


def gpu_family(meta):
    """The GPU family ("hopper", ...) the capture's pushbuffers are decoded for."""
    from decoders.launch import family_of_sm
    return family_of_sm(_sm(meta))
