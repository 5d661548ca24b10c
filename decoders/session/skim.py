"""One block of a decode sharded by time (decoders/session/shard.py, docs/sharded-decode.md):
the skim that reads the records before the block's warm-up, the detectors that say where
the block's decode looked for history the skim did not give it, and the questions a
decode of everything answers about that history (present).

The skim keeps what the shim keeps outside a capture window (shim/window.c win_enter,
decoders/cuda/api.py WINDOW_ROLES): every record but the launch and work calls it passes
over and the submissions made outside the calls it keeps; such a submission only moves its
channel's byte count and the submission counter on, the two counters later launches are
numbered and placed by.
"""
import hashlib

from decoders.capture.format import TL_SF_COPIED
from decoders.cuda.api import BY_SLOT, window_role
from decoders.methods import class_info

PASSED_OVER = ("LAUNCH", "GRAPH_LAUNCH", "WORK")   # roles the shim leaves out of a window


class Skim:
    """The skim's state: which calls it passed over, which graph execs it saw launched
    since the last graph-preparing call, and the stream captures open per process."""

    def __init__(self):
        self.passed = set()     # (pid, call) of API calls passed over and not returned yet
        self.launched = set()   # (pid, graph exec) launched since the last graph-preparing call
        self.capturing = {}     # pid -> stream captures begun and not ended
        self.skimmed = False    # a submission was passed over
        self.in_call = {}       # (pid, tid) -> the role of the call passed over it is in
        self.launched_on = set()    # (pid, hChannel, token) a launch call passed over used

    def passes_over(self, rec, api):
        """Whether the skim leaves this record out (rec: an API_ENTER, API_EXIT or
        SUBMISSION record; api: the decode's ApiCalls, for the call a submission is in)."""
        kind = rec.type
        if kind == "SUBMISSION":
            return api.current(rec.pid, rec.tid) is None
        b = rec.body
        key = (rec.pid, b["call"])
        if kind == "API_EXIT":
            if key in self.passed:
                self.passed.discard(key)
                self.in_call.pop((rec.pid, rec.tid), None)
                return True
            return False
        f = BY_SLOT.get(b["slot"])
        if f is not None and self._left_out(f, b, rec.pid):
            self.passed.add(key)
            self.in_call[(rec.pid, rec.tid)] = window_role(f)
            return True
        return False

    def _left_out(self, f, b, pid):
        """The shim's rule (shim/window.c win_enter): launches and work are left out, but a
        graph exec's first launch (and its first after a graph-preparing call: they write
        the QMDs later replays run) and launches into a stream being captured."""
        role = window_role(f)
        name = f.name
        if name.startswith("cuStreamBeginCapture"):
            self.capturing[pid] = self.capturing.get(pid, 0) + 1
        elif name.startswith("cuStreamEndCapture"):
            self.capturing[pid] = max(0, self.capturing.get(pid, 0) - 1)
        if role == "GRAPH_PREPARE":
            self.launched.clear()
        elif role == "GRAPH_LAUNCH":
            exe = (pid, b["args"][0] if b["args"] else None)
            if exe not in self.launched:
                self.launched.add(exe)
                return False
            return True
        elif role == "LAUNCH" and self.capturing.get(pid):
            return False
        return role in PASSED_OVER

    def submission(self, sd, rec):
        """A submission passed over: its channel's byte count and the submission counter
        move on as SubmissionDecoder.feed moves them."""
        self.skimmed = True
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
        if self.in_call.get((pid, rec.tid)) == "LAUNCH":
            self.launched_on.add((pid, b["hChannel"], b["token"]))
        size = sum(seg["size"] for seg in b["segments"] if seg["flags"] & TL_SF_COPIED)
        dec.position += size
        info = sd.channels[key]
        info["submissions"] += 1
        info["bytes"] += size
        sd._count += 1


class Detectors:
    """Installed where the warm-up starts, on the channels and processes the skim moved
    on: each lookup of history the skim may have left out is noted as a miss
    (record index, text, what present() asks of a decode of everything)."""

    def __init__(self, sd, sink, now, launched_on=()):
        self.misses = []
        self.now = now              # () -> the record being fed
        self.skimmed = set()        # (pid, hChannel, token) of the channels skimmed
        self.with_launch = set()    # the same, of those with a launch since
        self.launched_on = launched_on  # those a launch call the skim passed over used
        from decoders.launch.channel import _Channel
        for key in sd._streams:
            pid, _, hchannel, token = key
            self.skimmed.add((pid, hchannel, token))
            ld = sd.decoder(pid)
            ch = ld._channels.get(key)
            if ch is None:
                ch = ld._channels[key] = _Channel(key)
            ch.copy = _Subchannels(self, key)
        for pid in {key[0] for key in sd._streams}:
            self._watch_memory(sd.decoder(pid), pid)
        sink._latches = _Latches(sink._latches, self)

    on_miss = None      # (miss) -> None, as each is noted (blocks.Block._tell_miss)

    def miss(self, text, what):
        m = (self.now(), text, what)
        self.misses.append(m)
        if self.on_miss is not None:
            self.on_miss(m)

    def arrived(self, launch):
        self.with_launch.add((launch.pid, launch.hChannel, launch.channel))

    def entry(self, kind, entry):
        """A semaphore method no launch holds: a release on a skimmed channel with no
        launch since (a decode of everything hangs it on the channel's last launch), or a
        wait for a release not seen. True: the block leaves the release out of its syncs.
        That is where a launch call the skim passed over used the channel: one decode hangs
        the release on the channel's last launch, which the block that decodes it still
        holds (a channel's last launch is held for later semaphores) and hangs it on
        itself; the miss then counts where no block before had a launch on the channel."""
        if kind != "sync":
            return False
        key = (entry.get("pid"), entry.get("hChannel"), entry.get("channel"))
        if entry.get("waits"):
            if not entry.get("released_by"):
                self.miss("wait for a release not seen",
                          ("release", entry.get("pid"), entry.get("address")))
        elif key in self.skimmed and key not in self.with_launch:
            if key in self.launched_on:
                self.miss("release left to a launch before the block, and none was",
                          ("no launch", key))
                return True
            self.miss("release before any launch", ("launch", key))
        return False

    def _watch_memory(self, ld, pid):
        ld._launched = _Launched(ld._launched, self, pid, ld)
        mem = ld.memory
        read_known, holds = mem.read_known, mem.holds
        miss = self.miss

        def watched_read_known(va, limit):
            data = read_known(va, limit)
            if len(data) < limit:
                miss(f"{limit} bytes at {va:#x} read, {len(data)} known",
                     ("memory", pid, va, limit, len(data)))
            return data

        def watched_holds(va, n, prefix):
            got = holds(va, n, prefix)
            if not got:
                miss(f"QMD image at {va:#x} not held", ("holds", pid, va, n, bytes(prefix)))
            return got
        mem.read_known, mem.holds = watched_read_known, watched_holds


class _Registers(dict):
    """A copy engine subchannel's registers on a skimmed channel: one read before it was
    written since is history the skim may have left out."""

    def __init__(self, det, key):
        super().__init__()
        self.det, self.key = det, key

    def get(self, k, default=None):
        if k not in self:
            pid, _, hchannel, token = self.key[0]
            self.det.miss(f"copy engine register {k:#x} of channel token {token:#x} read "
                          f"before it was written",
                          ("register", (pid, hchannel, token), self.key[1], k))
        return super().get(k, default)


class _Subchannels(dict):
    def __init__(self, det, key):
        super().__init__()
        self.det, self.key = det, key

    def get(self, k, default=None):
        # (the launch decoder stores a fresh dict where get gives None: given one here)
        if k not in self:
            super().__setitem__(k, _Registers(self.det, (self.key, k)))
        return super().get(k)


class _Latches(dict):
    """LaunchSink._latches: a programmatic dependent launch waiting on a latch no launch
    arrived at since the warm-up. The follower answers it (the last launch of a block
    before that arrived there: shard._Results.reap, blocks._renumbered); a launch of the
    warm-up that arrived there is the block's why (blocks._keep_order)."""

    def __init__(self, items, det):
        super().__init__(items)
        self.det = det

    def get(self, key, default=None):
        if key not in self:
            self.det.miss(f"no launch arrived at latch {key[2]} of channel token "
                          f"{key[1]:#x} yet", ("latch", key))
        return super().get(key, default)


class _Launched(dict):
    """LaunchDecoder._launched (VA -> the QMD image last launched there). A dependent QMD
    at a VA with no launch seen from it is decoded and launched (unseen); one decode calls
    it "already decoded" instead where the image last launched there before the block is
    what the block read there, unless that is a kernel's QMD run again (a graph node). The
    miss names the image the block read (its digest; None: its bytes were not known) and
    whether it runs again; counts() compares it with what the blocks before launched last
    at that VA (known()). Before, any such VA launched before the block counted: a
    stream's QMD ring slot idle for longer than the warm-up (held-out mix3, DDP)."""

    def __init__(self, items, det, pid, ld):
        super().__init__(items)
        self.det, self.pid, self.ld = det, pid, ld
        self.told = set()

    def unseen(self, va, image, runs_again):
        self.det.miss(f"no QMD launched at {va:#x} yet",
                      ("launched", self.pid, va, None if image is None else _digest(image),
                       bool(runs_again)))

    def unknown(self, va, rerun):
        """A dependent pointer to `va`, where the block knows no byte of a QMD: True, and a
        miss of its own kind, which the merge answers from what the blocks before knew
        (dependent_answer); one decode says "already decoded" where a launch there left
        its image in place. Where some bytes are known, False: read as before."""
        ld = self.ld
        if ld.memory_lookup is not None or _any_known(ld.memory, va, QMD_BYTES):
            return False
        what = ("dependent", self.pid, va, bool(rerun))
        if what not in self.told:       # (a ring slot's: once, at its first read)
            self.told.add(what)
            self.det.miss(f"no byte of the QMD at {va:#x} known", what)
        return True


def _digest(image):
    """A QMD image as known() and the "launched" misses name it (16 bytes: marshal takes
    them; equal digests are equal images)."""
    return hashlib.blake2b(bytes(image), digest_size=16).digest()


QMD_BYTES = 384     # what a dependent pointer's target is read as (qmds.py)


def _any_known(mem, va, n):
    """Whether a SparseMemory knows any byte of va..va+n (a page under packed writes: yes)."""
    from decoders.launch.memory import PAGE
    for page in range(va // PAGE, (va + n - 1) // PAGE + 1):
        entry = mem._pages.get(page)
        if entry is None:
            continue
        if type(entry) is list:
            return True
        lo, hi = max(va - page * PAGE, 0), min(va + n - page * PAGE, PAGE)
        if entry[1].obj.find(1, lo, hi) >= 0:
            return True
    return False


KINDS = ("launch", "register", "release", "launched", "memory")


def known(sd):
    """The history a later block may miss, as decode `sd` (a SubmissionDecoder) holds it
    now, by Detectors' kinds: the channels with a launch, the copy engine registers
    written, the addresses released, the VAs a QMD was launched from, the memory pages
    written (each page with its runs of known bytes). Lists of tuples (marshal takes them);
    a merge unions them block by block (union()). A VA launched from whose image is still
    there gives the image and the record that wrote it: a seed (seeds())."""
    out = {kind: [] for kind in KINDS}
    for pid, ld in sd._decoders.items():
        for key, ch in ld._channels.items():
            if not (isinstance(key, tuple) and len(key) == 4):
                continue
            k = (key[0], key[2], key[3])
            if ch.last_launch is not None:
                out["launch"].append(k)
            for sub, regs in dict.items(ch.copy):
                out["register"].extend((k, sub, reg) for reg in regs)
        out["release"].extend((pid, a) for a in ld.releases)
        plan = _compute_plan(ld)
        mem = ld.memory
        holds = type(mem).holds             # (not the block's watched one: no miss here)
        by = mem.written_by
        for va, img in ld._launched.items():
            held = holds(mem, va, QMD_BYTES, img)
            out["launched"].append((pid, va, _digest(img), held,
                                    bool(ld._runs_again(img, plan, va, (0, va))),
                                    (bytes(img), by.get(va)) if held else None))
        out["memory"].extend(((pid, page), runs) for page, runs in _known_runs(ld.memory))
    return out


def _compute_plan(ld):
    """A plan of the compute class the decoder met (its GPU family: how a QMD image's
    version is read), for _runs_again."""
    for plan in ld._plans.values():
        if plan.engine == "compute":
            return plan
    from types import SimpleNamespace
    return SimpleNamespace(family=ld.gpu)


def _known_runs(mem):
    """(page, ((start, end), ...)) of the memory image's pages: the runs of known bytes
    (a page under packed writes counted known whole: a miss there counts)."""
    from decoders.launch.memory import _FULL, PAGE
    whole = ((0, PAGE),)
    for page, entry in mem._pages.items():
        if type(entry) is list or entry[1] is _FULL:
            yield page, whole
            continue
        mask = entry[1].tobytes()
        runs, at = [], mask.find(1)
        while at >= 0:
            end = mask.find(0, at)
            end = PAGE if end < 0 else end
            runs.append((at, end))
            at = mask.find(1, end)
        yield page, tuple(runs)


def union(had, got):
    """Block's known() into `had`: sets of the kinds, per memory page its blocks' runs, and
    per (pid, VA) the QMD image last launched there (given in block order: a later block's
    replaces an earlier one's) as [digest, still there where that block ended, a kernel's,
    bytes there known to a block after it (written since, perhaps), its seed or None]."""
    last = had.setdefault("launched", {})
    mine = set()
    for kind, items in got.items():
        if kind == "memory":
            mem = had.setdefault("memory", {})
            for key, runs in items:
                mem.setdefault(key, []).append(runs)
        elif kind == "launched":
            for pid, va, digest, held, kernel, *seed in items:
                last[(pid, va)] = [digest, held, kernel, False, seed[0] if seed else None]
                mine.add((pid, va))
        else:
            had.setdefault(kind, set()).update(items)
    if last and got.get("memory"):
        pages = {key: (runs,) for key, runs in got["memory"]}
        for key, entry in last.items():
            if not entry[3] and key not in mine and _in_runs(pages, key[0], key[1], QMD_BYTES):
                entry[3] = True


def _in_runs(pages, pid, va, n):
    """Whether any byte of va..va+n is in the known runs `pages` names: {(pid, page): runs
    of each block}."""
    from decoders.launch.memory import PAGE
    for page in range(va // PAGE, (va + n - 1) // PAGE + 1):
        lo, hi = max(va - page * PAGE, 0), min(va + n - page * PAGE, PAGE)
        if any(a < hi and lo < b for runs in pages.get((pid, page), ()) for a, b in runs):
            return True
    return False


def counts(what, had):
    """Whether a miss (`what`, as Detectors name it) names history a decode of everything
    had where the block began: `had`, the union of known() of the blocks before it, each
    where it ended. What a kind names stays once there (a channel's last launch, a
    register, a release, a page written), so the union is what one decode had; where a
    page or a QMD's bytes may have changed since (holds), or for a latch, the miss counts
    (the capture is decoded again: never a wrong merge)."""
    from decoders.launch.memory import PAGE
    kind = what[0]
    if kind == "launch":
        return what[1] in had.get("launch", ())
    if kind == "no launch":
        return what[1] not in had.get("launch", ())
    if kind == "register":
        return (what[1], what[2], what[3]) in had.get("register", ())
    if kind == "release":
        return (what[1], what[2]) in had.get(kind, ())
    if kind == "launched":
        # one decode had a launch at the VA, with the image the block read there (or the
        # block did not know its bytes), and would not run it again: "already decoded"
        last = had.get("launched", {}).get((what[1], what[2]))
        return last is not None and (what[3] is None or (what[3] == last[0] and not what[4]))
    if kind == "dependent":
        return dependent_answer(what, had) is _COUNTS
    if kind == "latch":
        # answered from the blocks' arrivals (LATCHES_KEPT: one decode's table may have
        # started over; its own bound is 4096 keys)
        return len(had.get("arrivals", ())) >= LATCHES_KEPT
    if kind == "memory":
        # the block knew `n` bytes from va on and not the next: one decode knew more when
        # it knew that byte (the block knows every byte written since its warm-up)
        pid, va, n = what[1], what[2], what[4]
        page, off = divmod(va + n, PAGE)
        return any(a <= off < b for runs in had.get("memory", {}).get((pid, page), ())
                   for a, b in runs)
    return True


_COUNTS = object()
LATCHES_KEPT = 1024     # latch keys the follower answers from (LaunchSink._latches: 4096)


def dependent_answer(what, had):
    """What one decode says of a dependent pointer where a block knew no byte of the QMD
    (a "dependent" miss), from `had` (union() of the blocks before): "already decoded"
    where the image last launched there was still there (no block after knew bytes there
    since) and the pointer does not run a kernel's QMD again; None (not decoded, as the
    block said) where no block launched there or knew a byte there; else _COUNTS (one
    decode read other bytes there: the capture is decoded again)."""
    _, pid, va, rerun = what
    last = had.get("launched", {}).get((pid, va))
    if last is None:
        return _COUNTS if _in_runs(had.get("memory", {}), pid, va, QMD_BYTES) else None
    _, held, kernel, stale, _ = last
    return _COUNTS if not held or stale or (rerun and kernel) else "already decoded"


def seeds(had):
    """{pid: [(VA, image, the record that wrote it)]}: the QMD images one decode holds where
    a block begins, as far as `had` (union() of the blocks before it) shows them: the image
    last launched at the VA, still there where the block that launched it ended, and no
    byte there known to a block since (none wrote there). A block decoded again with them
    (Block.seed) holds them as one decode does: a QMD the driver uploaded once, long
    before, and sends again unchanged (jax-jit's GRID_NULL QMD at a fixed VA)."""
    out = {}
    for (pid, va), (_, held, _, stale, seed) in had.get("launched", {}).items():
        if held and not stale and seed is not None:
            out.setdefault(pid, []).append((va,) + tuple(seed))
    return out


SEEDED = ("memory", "holds", "launched")     # the misses a seed may answer


def seeded(what, had):
    """Whether a miss that counts (`what`) is of history seeds(had) gives: bytes of a QMD
    image at the VA it names."""
    if what[0] not in SEEDED:
        return False
    last = had.get("launched", {}).get((what[1], what[2]))
    return last is not None and last[1] and not last[3] and last[4] is not None


def present(sd, what):
    """Whether the history a block missed (`what`, as Detectors name it) is there in the
    decode `sd` (a SubmissionDecoder) as it stands: a channel's last launch, a copy engine
    register written, an address released, a QMD launched from an address, memory bytes
    known (bench/shard_decode.py asks a decode of everything)."""
    kind = what[0]
    if kind == "no launch":
        return not present(sd, ("launch", what[1]))
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
        img = ld._launched.get(what[2])
        return img is not None and (what[3] is None or (what[3] == _digest(img) and
                                                        not what[4]))
    if kind == "dependent":     # (the merge answers from it: dependent_answer)
        return what[2] in ld._launched or _any_known(ld.memory, what[2], QMD_BYTES)
    if kind == "memory":
        return len(ld.memory.read_known(what[2], what[3])) > what[4]
    if kind == "holds":
        return ld.memory.holds(*what[2:])
    return True
