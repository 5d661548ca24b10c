"""A decode sharded by time (docs/sharded-decode.md): the capture's SUBMISSION records
cut into blocks (decoders/session/blocks.py), each decoded by a process of its own, and
their models merged into the one a decode in one process makes.

Why: a long training job's decode is one pass that no two processes keep up with
(decoders/session/split.py); blocks of it decoded side by side do.

A process follows the capture (follow(): the file, or the capture the program is still
writing), skims every record, and where a block's warm-up begins forks a process that
decodes the block: no block skims from the start. This process skims every record
meanwhile: what stands at the end (the object tree, the processes, the ioctls, the calls
that never returned) is its own. Anything the merge cannot rebuild leaves the capture to
be decoded as before (Diverged). TRACE_LAUNCH_SHARDS=K: at most K blocks at a time (0 or 1:
none; unset: shards()).
"""
import bisect
import gc
import marshal
import os
import struct
import select
import signal
import tempfile
import time

from decoders.capture.reader import CaptureReader, open_capture
from decoders.session.blocks import INF, Block, Diverged, _problem_load, _pack, merge
from decoders.session.skim import counts, dependent_answer, seeded, seeds, union
from decoders.session.split import usable_cpus
from decoders.session.whole import _finish, _progress_source

WARMUP = 256            # submissions decoded in full before a block (bench/shard_decode.py:
                        # 16 and 256 both agreed on every long eager job)
LIVE_WARMUP = 1024      # the same, of a capture read while it is written: a miss there costs
                        # a decode again after the program (held-out mix3: streams idle for
                        # 256 submissions at its start), 768 more of 8,192 costs ~9%
MIN_SUBMISSIONS = 4096  # per block, at least: fewer blocks for a shorter capture
MAX_SHARDS = 16
MIN_CPUS = 8            # fewer: the split decode (decoders/session/split.py) is as fast
MAX_TWINS = 16          # twins waiting at once (a block not merged yet keeps its own: a
                        # long job's first block may hand its last launch over at the end);
                        # a block past them is decoded again by a process that reads anew
MAX_AGAIN = 8           # blocks decoded again, seeded, per decode (_Results._again), each
                        # once: 1,000-step JAX jobs on the H200 (bench/results-h200-s42.txt)
                        # needing 3 or 4 took 6.8-12.1 s with them, 8.5-14.4 s in one decode;
                        # beyond MAX_TWINS each reads the capture anew from its start
_LEN = struct.Struct("<Q")


def offline_warmup(block):
    """The warm-up of an offline decode's blocks of `block` SUBMISSION records: an eighth of
    a block, from WARMUP up to LIVE_WARMUP. A long job's blocks are long, and its streams
    idle longer (a 1,000-step DDP job cut in 16 blocks: a wait for a release 256
    submissions did not reach); a short capture's blocks stay cheap."""
    return max(WARMUP, min(LIVE_WARMUP, block // 8))


def shards():
    """How many blocks: TRACE_LAUNCH_SHARDS (0 or 1: not sharded); unset, with MIN_CPUS
    CPUs or more, all but two of them (this process skims, and the program may run)."""
    env = os.environ.get("TRACE_LAUNCH_SHARDS", "").strip()
    if env.isdigit():
        return max(1, min(int(env), MAX_SHARDS))
    cpus = usable_cpus()
    return min(cpus - 2, MAX_SHARDS) if cpus >= MIN_CPUS else 1


def cuts(path):
    """The SUBMISSION records of the capture, counted. Diverged for a capture with windows
    or marked launches."""
    from decoders.window import Windows
    with open_capture(path) as f:
        reader = CaptureReader(f, name=str(path))
        if Windows(reader.meta).active:
            raise Diverged("a capture with windows")
        n = 0
        for r in reader.records(only=("SUBMISSION", "MARK"), lazy=("SUBMISSION",)):
            if r.type == "MARK":
                raise Diverged("marked launches: the report shows their submissions")
            n += r.type == "SUBMISSION"
    return n


def _write_message(fd, obj):
    data = marshal.dumps(obj)
    view = memoryview(_LEN.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_message(fd):
    head = _read_exact(fd, _LEN.size)
    if head is None:
        return None
    return marshal.loads(_read_exact(fd, _LEN.unpack(head)[0]) or b"")


def _read_exact(fd, n):
    parts = []
    while n:
        data = os.read(fd, min(n, 1 << 20))
        if not data:
            return None
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


# -- the processes ------------------------------------------------------------------------
POLL_RECORDS = 4096     # records between two looks at what the blocks sent
BLOCK = 8192            # SUBMISSION records per block of a capture read while it is written
                        # (TRACE_LAUNCH_BLOCK; a 500-step transformer's 87,000: 11 blocks, ~2
                        # CPU s each). 4,096 shortened bench/live_sim.py's tail on the H200
                        # (held-out mix3 2.13 -> 1.46 s, the transformer 1.42 -> 1.28) for 40%
                        # more CPU while the program runs, and the transformer's report took
                        # 0.7-1.0 s longer with it in both of two reps: not the default
MIN_BLOCK = 64          # (TRACE_LAUNCH_BLOCK's least)


def live_block():
    """SUBMISSION records per block of a capture read while it is written."""
    env = os.environ.get("TRACE_LAUNCH_BLOCK", "").strip()
    return max(MIN_BLOCK, int(env)) if env.isdigit() else BLOCK


def blocks_of(n, k):
    """SUBMISSION records per block: n of them in k blocks (at least MIN_SUBMISSIONS)."""
    return max(MIN_SUBMISSIONS, -(-n // k))


def follow(path, stream, brief, block, slots, out, warmup=None, board=None, directory=None,
           reopen=None):
    """The skimming process: reads the capture, forks a process for each block of `block`
    SUBMISSION records where its warm-up begins (at most `slots` at a time), and checks
    each block's result as it comes, in order (_Results). Once the records end it writes
    the results to fd `out`, in order, then None; at the first block that cannot be merged,
    at once, a result that says why (the decode then starts again as before, the program
    perhaps still running). `board`: a Board each block's process says how far it got on.
    `directory`: where the blocks of a full decode (brief None) write their lists.
    `reopen`: () -> the capture read anew from its start: a block whose miss a seed
    answers (skim.seeded) is then decoded again, seeded, by its twin (forked with it, where
    its warm-up begins) or, without one, a process that reads the capture anew (respawn)."""
    warmup = WARMUP if warmup is None else warmup
    block = max(block, warmup)
    dec = Block(path, stream, brief, directory=directory)

    def respawn(m, seed):
        """Block m decoded again by a process of its own that reads the capture from its
        start, with the QMD images one decode holds where the block begins planted where
        its warm-up begins: (pid, result file). It tells nothing early (_Results._again)."""
        f = tempfile.TemporaryFile(prefix="trace-decode-block-")
        pid = os.fork()
        if pid:
            return pid, f
        code = 0
        try:
            os.close(out)
            again = Block(path, reopen(), brief, directory=directory)
            again.begin_warmup(max(0, m * block - warmup), m * block, (m + 1) * block)
            again.seed = seed
            if board is not None:
                again.board = lambda d, i: board.mark(m, d, i)
            again.again = True
            _to_the_end(again, again.reader.records(), None, f)
        except BaseException:       # noqa: BLE001 - an empty file: Diverged there
            code = 1
        os._exit(code)

    results = _Results(out, respawn if reopen is not None else None)

    def child(m, s, twin=False):
        os.close(out)
        if not twin:
            for _, w, _ in results.twins.values():     # (a twin sees its pipe's end)
                os.close(w)
        dec.begin_warmup(s, m * block, (m + 1) * block)
        if board is not None:
            dec.board = lambda d, i: board.mark(m, d, i)

    def fork(m, s):
        results.early_check()
        results.reap(slots)
        f = tempfile.TemporaryFile(prefix="trace-decode-block-")
        early = tempfile.TemporaryFile(prefix="trace-decode-early-")
        pid = os.fork()
        if pid == 0:
            child(m, s)
            dec.tell = _Early(early).send
            return f        # the child goes on reading, as the block's decode
        results.add(pid, f, early)
        results.log("fork", m)
        if m and reopen is not None and len(results.twins) < MAX_TWINS:
            # its twin, forked here too, waits for a seed (_Results._again) and then
            # decodes the block, seeded, without reading the capture from its start again;
            # the pipe's end without one ends it
            r, w = os.pipe()
            f = tempfile.TemporaryFile(prefix="trace-decode-block-")
            pid = os.fork()
            if pid == 0:
                os.close(w)
                for _, w, _ in results.twins.values():
                    os.close(w)
                try:
                    seed = _read_message(r)     # (None: the pipe's end, with no seed)
                except BaseException:           # noqa: BLE001 - a seed cut short
                    seed = None
                if seed is None:
                    os._exit(0)
                child(m, s, twin=True)
                dec.seed = seed
                dec.again = True
                return f
            os.close(r)
            results.twins[m] = (pid, w, f)
        return None

    records = dec.reader.records()
    mine = fork(0, 0)
    first = None
    if mine is None:
        m = 1
        for rec in records:
            if rec.type == "SUBMISSION" and dec.nsub == m * block - warmup:
                mine = fork(m, dec.nsub)
                if mine is not None:
                    first = rec     # (the child: its warm-up's first record)
                    break
                m += 1
            dec.feed(rec)
            if not dec.n % POLL_RECORDS:
                results.early_check()
        else:
            while True:     # the blocks' results as they end, their misses meanwhile
                results.reap(len(results.kids) + 1)
                if results.running() == 0:
                    break
                results.early_check()
                time.sleep(EARLY_POLL_S)
            results.reap(0)
            results.dismiss()
            for got in results.done:
                _write_message(out, got)
            _write_message(out, None)
            return
    # a block's process: its records to its end, and its result into its file
    code = 0
    try:
        _to_the_end(dec, records, first, mine)
    except BaseException:       # noqa: BLE001 - an empty file: Diverged there
        code = 1
    os._exit(code)


def _to_the_end(dec, records, first, f):
    """A block's process: its records (`first`, then the rest of `records`) to the block's
    end, and its result into file f (a block decoded again says so)."""
    ended = True
    if first is not None and dec.feed(first) is False:
        ended = False
    else:
        for rec in records:
            if dec.feed(rec) is False:
                ended = False
                break
    got = _pack(dec.finish(ended))
    if getattr(dec, "again", False):
        got["again"] = True
    f.write(marshal.dumps(got))
    f.flush()
    if dec.board is not None:
        dec.board(dec, None)


class Board:
    """How far each block's decode got, for the progress a sharded decode shows: a file
    of SLOT, one per block, that the block's process writes (pwrite: the blocks are forked
    apart) and the decoding process reads. Block m covers the records from its first
    SUBMISSION record (block 0: from record 0) to the next block's first."""
    SLOT = struct.Struct("<qqq")    # the block's first record, the record it reached, ended

    def __init__(self, fd):
        self.fd = fd

    def mark(self, m, block, i):
        """Block m's decode (a blocks.Block) at record i (None: it ended)."""
        lo = 0 if m == 0 else block.lo
        if lo == INF:
            return      # (in its warm-up)
        end = block.end if block.end != INF else block.n
        try:
            os.pwrite(self.fd, self.SLOT.pack(lo, end if i is None else min(i, end),
                                              i is None), m * self.SLOT.size)
        except OSError:
            pass        # (progress only)

    def read(self):
        """[(first record, record reached, ended)] of the blocks so far."""
        try:
            data = os.pread(self.fd, os.fstat(self.fd).st_size, 0)
        except OSError:
            return []
        return list(self.SLOT.iter_unpack(data[:len(data) - len(data) % self.SLOT.size]))


class _Shown:
    """The progress a sharded decode shows (decode_capture's `progress(done, total)`, in
    bytes of the capture): the records the blocks decoded, each in bytes as far as this
    process's own reading put it (it reads ahead of the blocks), so that the bar ends as
    the last block does and not as this process's skim."""

    def __init__(self, progress, where, board):
        self.progress, self.where, self.board = progress, where, board
        pos, self.total = where()
        self.xs, self.ys = [0], [pos]       # record index -> bytes read when it was met

    def note(self, n):
        """This process read `n` records."""
        pos, self.total = self.where()
        if pos >= self.ys[-1] and n > self.xs[-1]:
            self.xs.append(n)
            self.ys.append(pos)
        self.show()

    def _pos(self, r):
        xs, ys = self.xs, self.ys
        j = bisect.bisect_right(xs, r) - 1
        if j >= len(xs) - 1:
            return ys[-1]
        return ys[j] + (ys[j + 1] - ys[j]) * (r - xs[j]) // (xs[j + 1] - xs[j])

    def show(self):
        done = self.ys[0]
        for lo, cur, _ in self.board.read():
            if 0 <= lo < cur:
                done += self._pos(cur) - self._pos(lo)
        total = self.total
        self.progress(min(done, total) if total else done, total)


class _Early:
    """What a block's process tells the follower before it ends (blocks.Block.tell): its
    misses as they come, its known() where its span ends. Why: a block holds its channels'
    last launches for later semaphores, often to the capture's end, and only then writes
    its result; a miss of the next block that counts would be found only then, and the
    decode start again long after the program has exited (a held-out job: 2.5 s after).
    A file both share (made before the fork): items appended after a header that says how
    far they are whole, written after them."""
    HEAD = struct.Struct("<Q")

    def __init__(self, f):
        self.f, self.end = f, self.HEAD.size     # (the file kept open: it is ours to close)

    def send(self, item):
        if self.f is None:
            return      # (the result file still says all of it)
        data = marshal.dumps(item)
        try:
            os.pwrite(self.f.fileno(), _LEN.pack(len(data)) + data, self.end)
            self.end += _LEN.size + len(data)
            os.pwrite(self.f.fileno(), self.HEAD.pack(self.end), 0)
        except OSError:
            self.f = None

    @classmethod
    def read(cls, fd, at):
        """(the items whole past offset `at`, the offset after them)."""
        try:
            head = os.pread(fd, cls.HEAD.size, 0)
            end = cls.HEAD.unpack(head)[0] if len(head) == cls.HEAD.size else 0
            data = os.pread(fd, end - at, at) if end > at else b""
        except OSError:
            return [], at
        items, pos = [], 0
        while pos + _LEN.size <= len(data):
            n = _LEN.unpack_from(data, pos)[0]
            if pos + _LEN.size + n > len(data):
                break
            items.append(marshal.loads(data[pos + _LEN.size:pos + _LEN.size + n]))
            pos += _LEN.size + n
        return items, at + pos


EARLY_POLL_S = 0.02     # between two looks at what the running blocks told


class _Log:
    """TRACE_LAUNCH_SHARD_LOG=FILE (for measuring): when each block's known() and result
    came and which blocks were decoded again, one line each (seconds since the follower
    began, what, block), appended to FILE."""

    def __init__(self):
        path = os.environ.get("TRACE_LAUNCH_SHARD_LOG")
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) \
            if path else None
        self.t0 = time.monotonic()

    def __call__(self, what, block, detail=""):
        if self.fd is not None:
            os.write(self.fd, f"{time.monotonic() - self.t0:.3f} {what} {block} "
                              f"{detail}\n".encode())


class _Results:
    """The blocks' processes (in order) and their results, each checked as soon as it and
    the blocks before it are done: its misses against what the blocks before it knew
    (skim.counts, skim.union). The first that cannot be merged is sent on `out` at once
    and ends the process that follows the capture (its blocks' with it)."""

    def __init__(self, out, respawn=None):
        self.out = out
        self.respawn = respawn  # (block, seed) -> (pid, file): follow()
        self.retried = set()    # blocks decoded again, seeded
        again = os.environ.get("TRACE_LAUNCH_AGAIN", "").strip()
        self.max_again = int(again) if again.isdigit() else MAX_AGAIN   # (for measuring)
        self.log = _Log()
        self.twins = {}         # block -> (pid, the pipe its seed goes down, result file)
        self.launched = 0       # launches of the blocks checked (the next one's offset)
        self.kids = []          # [(pid, the file its result is written to)]
        self.ended = set()      # pids that exited
        self.done = []          # the results checked, in order
        self.had = {}
        self.early = []         # per block: [its _Early file, offset read, misses, known]
        self.early_had = {}     # the union of known() told by the blocks before early_at
        self.early_at = 0

    def add(self, pid, f, early=None):
        self.kids.append((pid, f))
        # [_Early file, offset read, misses, known, the pid of a block decoded again]
        self.early.append([early, _Early.HEAD.size, [], None, None])

    def running(self):
        return sum(1 for pid, _ in self.kids if pid not in self.ended)

    def dismiss(self, j=None):
        """Block j's twin (follow(): None, all of them) ended: its pipe closed unseeded."""
        for m in list(self.twins) if j is None else [j]:
            twin = self.twins.pop(m, None)
            if twin is not None:
                os.close(twin[1])
                twin[2].close()

    def _again(self, j, what, had):
        """Block j decoded again, seeded with what `had` (the union of the blocks before
        it) says one decode holds there, where a miss of it that counts (`what`) is of
        such history (skim.seeded): MAX_AGAIN per decode. False: it cannot be. The first
        process goes on until it tells its known() (its misses no longer read), which the
        blocks after it are checked early against meanwhile (the seeds add nothing a block
        after needs), and is then ended: the blocks after are not held up by this one."""
        if self.respawn is None or j in self.retried or \
                len(self.retried) >= self.max_again or not seeded(what, had):
            return False
        self.retried.add(j)
        self.log("again", j, what[0])
        pid, f = self.kids[j]
        f.close()       # (its result is not read)
        e = self.early[j]
        e[2] = []
        e[4] = pid if pid not in self.ended else None
        seed = seeds(had)
        twin = self.twins.pop(j, None)
        if twin is None:
            self.kids[j] = self.respawn(j, seed)
            return True
        pid, w, f = twin
        try:
            _write_message(w, seed)
        except OSError:     # (the twin is gone: its result, empty, says so)
            pass
        os.close(w)
        self.kids[j] = (pid, f)
        return True

    def early_check(self):
        """The misses the running blocks told so far, each against what the blocks before
        its block told they knew (the same question reap() asks of their results, once
        all of them are whole): the first that counts is sent on `out` at once. A block's
        misses told after the blocks before it all told their known() are checked; those
        told later wait for its result."""
        for j in range(self.early_at, len(self.early)):
            e = self.early[j]
            if e[0] is None:
                continue
            items, e[1] = _Early.read(e[0].fileno(), e[1])
            for kind, value in items:
                if kind == "miss" and e[4] is None:
                    e[2].append(value)
                elif kind == "known":
                    e[3] = value
        while self.early_at < len(self.early):
            j = self.early_at
            e = self.early[j]
            for i, text, what in e[2]:
                if counts(what, self.early_had):
                    if self._again(j, what, self.early_had):
                        break       # (its other misses: the first process's, not read)
                    _write_message(self.out, {"why": f"block {j}: record {i}: {text}"})
                    os._exit(0)     # (the decode kills what is left: its session)
            e[2] = []
            if e[3] is None:
                break
            union(self.early_had, e[3])
            self.log("known", j)
            e[3] = None
            if e[0] is not None:
                e[0].close()
                e[0] = None
            if e[4] is not None:    # (the first process of a block decoded again)
                try:
                    os.kill(e[4], signal.SIGKILL)
                except OSError:
                    pass
                e[4] = None
            self.early_at += 1

    def reap(self, slots):
        """Note the blocks' processes that ended (waiting until fewer than `slots` run:
        0, all of them), and check the results that are next in order."""
        while True:
            running = self.running()
            try:
                pid, _ = os.waitpid(-1, 0 if running and running >= slots else os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            self.ended.add(pid)
            if self.log.fd is not None:
                self.log("ended", next((j for j, k in enumerate(self.kids) if k[0] == pid),
                                       None))
        while len(self.done) < len(self.kids) and self.kids[len(self.done)][0] in self.ended:
            j = len(self.done)
            _, f = self.kids[j]
            f.seek(0)
            data = f.read()
            f.close()
            got = marshal.loads(data) if data else {"why": "no result"}
            why = got.get("why")
            if why:
                why = f"block {j}: {why}"
            again = False
            for i, text, what in got.get("misses", ()):
                if why is None and counts(what, self.had):
                    if self._again(j, what, self.had):
                        again = True
                        break
                    why = f"block {j}: record {i}: {text}"
            if again:
                e = self.early[j]
                if self.early_at == j:  # (the blocks after: checked early against it)
                    union(self.early_had, got.get("known") or {})
                    e[2], e[3] = [], None
                    self.early_at = j + 1
                if e[0] is not None:
                    e[0].close()
                    e[0] = None
                break       # (its result comes later)
            if why:
                _write_message(self.out, {"why": why})
                os._exit(0)     # (the decode kills what is left: its session)
            # the dependent pointers where the block knew no byte, the latches no launch of
            # it arrived at before one waited: one decode's answers
            misses = got.get("misses", ())
            arrivals = self.had.setdefault("arrivals", {})
            got["dependents"] = list({(what[1], what[2]): dependent_answer(what, self.had)
                                      for _, _, what in misses
                                      if what[0] == "dependent"}.items()) + \
                [(("latch",) + tuple(what[1]), arrivals.get(tuple(what[1])))
                 for _, _, what in misses if what[0] == "latch"]
            union(self.had, got.get("known") or {})
            self.dismiss(j)
            lists = got.get("launches")
            for key, n in got.get("arrivals", ()):
                arrivals[tuple(key)] = self.launched + n
            self.launched += lists["n"] if isinstance(lists, dict) else \
                lists[0] if lists else 0
            self.done.append(got)
            self.log("checked", j)
            e = self.early[j]
            if e[0] is not None:
                e[0].close()
                e[0] = None
            if self.early_at == j:      # (it never told its known(): its result did)
                union(self.early_had, got.get("known") or {})
                e[2], e[3] = [], None
                self.early_at = j + 1


def _wait(pid):
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def decode_sharded(path, k, brief, progress=None, stream=None):
    """The decode (decode_capture(brief=); brief None: a full one, its lists each block's
    files laid end to end) of `path` in blocks side by side (k of
    them; of a capture read while it is written (`stream`), of BLOCK SUBMISSION records
    each), or Diverged (the caller decodes it as before). A process of its own follows the
    capture and forks the blocks' (follow()); this one skims every record meanwhile: what
    stands at the end is its own."""
    if stream is None:
        n = cuts(path)
        if n < 2 * MIN_SUBMISSIONS:
            raise Diverged("too few submissions to shard")
        block = blocks_of(n, k)
    else:
        block = live_block()
    board = None
    if progress is not None:
        try:
            board = tempfile.TemporaryFile(prefix="trace-decode-board-")
        except OSError:
            pass        # (progress only: the decode goes on without it)
    directory = tempfile.mkdtemp(prefix="trace-decode-blocks-") if brief is None else None
    proc = _Follower(path, stream, brief, block, max(1, k), board, directory)
    own = stream if stream is not None else open_capture(path)
    try:
        top = Block(path, own, brief)
        if top.why:
            raise Diverged("; ".join(top.why))
        shown = _Shown(progress, _progress_source(own, top.reader), Board(board.fileno())) \
            if board is not None else None
        n = 0
        for rec in top.reader.records():
            if top.feed(rec) is False:
                break
            n += 1
            if not n % POLL_RECORDS:
                proc.poll()     # a block that cannot be merged: Diverged now
                if shown is not None:
                    shown.note(n)
        else:
            top.finish(True)
        if top.why:
            raise Diverged("; ".join(top.why))
        model = top.model
        if model.marks:
            raise Diverged("marked launches: the report shows their submissions")
        if shown is not None:
            shown.note(n)
        blocks = []
        while True:
            got = proc.next(None if shown is None else SHOW_S)
            if got is _WAITING:
                shown.show()    # the last blocks' decodes, after this process's skim
                continue
            if got is None:
                break
            blocks.append(got)
        if shown is not None:
            shown.show()
        blocks = [b for b in blocks if b.get("began")]
        # the blocks must follow one another from the first SUBMISSION record to the end
        spans = [tuple(b["span"]) for b in blocks]
        if not spans or spans[0][0] != 0 or spans[-1][1] is not None or \
                any(a[1] != b[0] for a, b in zip(spans, spans[1:])):
            raise Diverged(f"the blocks do not cover the capture ({spans[:4]})")
        merge(model, blocks, brief)
        _finish(model, top.reader, top.stage, top.stopped)
        for b in blocks:
            model.problems.extend(_problem_load(t) for t in b["problems"])
        again = sum(1 for b in blocks if b.get("again"))
        model.split = f"{len(blocks)} blocks" + (f", {again} decoded again" if again else "")
        return model
    finally:
        proc.close()
        if stream is None:
            own.close()
        if board is not None:
            board.close()
        if directory is not None:   # (the lists merged hold their files open, unlinked)
            import shutil
            shutil.rmtree(directory, ignore_errors=True)


SHOW_S = 0.2            # between two looks at the board while the last blocks decode
_WAITING = object()


class _Follower:
    """follow() in a process of its own (as decoders/session/split.py starts its front):
    next() gives the blocks' results in order, then None; Diverged for one that cannot be
    merged (also from poll(), while this process still reads the capture)."""

    def __init__(self, path, stream, brief, block, slots, board=None, directory=None):
        from decoders.session.split import start_child
        fds = [board.fileno()] if board is not None else []
        self.proc, self.fd = start_child(
            "decoders.session.shard", ["--brief", str(-1 if brief is None else brief),
                                       "--block", str(block), "--slots", str(slots),
                                       "--warmup", str(offline_warmup(block)
                                                       if stream is None else LIVE_WARMUP),
                                       "--board", str(fds[0] if fds else -1)] +
            (["--directory", directory] if directory is not None else []),
            path, stream, session=True, pass_fds=fds)
        self.got = []           # results read by poll()

    def poll(self):
        """Whatever it sent so far, read now (Diverged for a block that cannot be merged)."""
        while select.select([self.fd], [], [], 0)[0]:
            self.got.append(self._read())
            if self.got[-1] is None:
                break

    def next(self, wait=None):
        """The next result; with `wait` (seconds), _WAITING if none came by then."""
        if self.got:
            return self.got.pop(0)
        if wait is not None and not select.select([self.fd], [], [], wait)[0]:
            return _WAITING
        return self._read()

    def _read(self):
        head = _read_exact(self.fd, _LEN.size)
        if head is None:
            raise Diverged("the process that follows the capture ended early")
        got = marshal.loads(_read_exact(self.fd, _LEN.unpack(head)[0]) or b"N")
        if got is not None and got.get("why"):
            raise Diverged(got["why"])
        return got

    def close(self):
        from decoders.session.split import stop_child
        stop_child(self.proc, self.fd, group=True)     # it and its blocks' processes


def main(argv=None):
    """The process that follows the capture (_Follower)."""
    from decoders.session.front import child_parser, open_stream
    ap = child_parser()
    for name in ("--brief", "--block", "--slots", "--warmup", "--board"):
        ap.add_argument(name, type=int, required=True)
    ap.add_argument("--directory")
    args = ap.parse_args(argv)
    gc.disable()    # as the decode: many small acyclic objects, young ones collected by hand
    stream = open_stream(args)
    try:
        def reopen():       # (a capture still being written: read apart with pread)
            return open_stream(args)
        follow(args.path or "capture", stream, None if args.brief < 0 else args.brief,
               args.block, args.slots, args.out, args.warmup,
               Board(args.board) if args.board >= 0 else None, args.directory, reopen)
    except BrokenPipeError:     # the decode went on without us
        return 1
    return 0
