"""The long lists of a report (launches, submissions, API calls) rendered by forked worker
processes, a range of items each, and written in order by the process that decoded them.

Why: a training run's JSON is ~550 MB of text made by Python code, one item at a time,
long after the capture is decoded; the items are independent once the model exists. The
workers are forked after decoding, so they read the model as it is (copy on write, the
spilled items through os.pread) and send back text. At most `workers + 2` ranges are in
flight, so the text waiting to be written stays a few MB whatever the capture holds.

map_ranges does the same for a view that makes something else of each item (the timeline's
events, decoders/timeline.py): the workers send back what a function made of each item,
marshalled, and the caller goes on with it in order.

TRACE_LAUNCH_JOBS=N sets the number of workers (1: none, all in this process).
"""
import gc
import marshal
import os
import signal
import struct
import sys
from collections import deque

MIN_ITEMS = 2048    # fewer items: rendered here (starting workers costs more than it saves)
CHUNK = 64          # items a worker renders at a time, at least: ~1.3 MB of a training
CHUNK_MAX = 512     # run's launches; at most this many. Between them, a worker's range is a
                    # quarter of its share of the list: each range costs the parent a round
                    # trip (a 100-step transformer's --json on 2 CPUs: 6.1-6.7 s with 64 at a
                    # time, 5.2 s with 512; 2048 no faster, and its text in flight +20 MiB)
CHUNK_TEXT = 8 << 20    # ...or fewer, once their text passes this (an item's size comes
                        # from the capture: a submission may carry megabytes of pushbuffer)
MAX_WORKERS = 12

_JOB = None         # work(lo, hi) -> (bytes, the index after the last item done): set
                    # before the workers fork, called by them


def jobs():
    """How many worker processes: TRACE_LAUNCH_JOBS, else the CPUs this process may use."""
    env = os.environ.get("TRACE_LAUNCH_JOBS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return int(env)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_WORKERS))


def _items(seq, lo, hi):
    if hasattr(seq, "iter_range"):
        return seq.iter_range(lo, hi)
    return iter(seq[lo:hi])


def _render(seq, one, sep, lo, hi):
    """(text of items lo.., the index after the last one rendered): all up to hi, or fewer
    when their text passed CHUNK_TEXT (the rest is rendered by the parent)."""
    parts, size, end = [], 0, lo
    for item in _items(seq, lo, hi):
        text = one(end, item)
        parts.append(text)
        size += len(text)
        end += 1
        if size > CHUNK_TEXT:
            break
    return sep.join(parts), end


def chunk(n, workers):
    """Items in each range of a list of n rendered by `workers` (CHUNK, CHUNK_MAX)."""
    return max(CHUNK, min(CHUNK_MAX, n // (workers * 4)))


def worth_it(seq, workers=None):
    """Whether render_ranges would use workers for seq."""
    return (jobs() if workers is None else workers) >= 2 and len(seq) >= MIN_ITEMS


def render_ranges(seq, one, write, sep=",\n  ", workers=None, advance=None):
    """write() the text one(index, item) makes of each item of seq, in order: one text per
    item, or several items' joined by `sep` (render_json's separator by default). With a
    long seq, forked workers render ranges of it. `advance(n)`: n more items written."""
    workers = jobs() if workers is None else workers
    if not worth_it(seq, workers):
        for k, item in enumerate(seq):
            write(one(k, item))
            if advance is not None:
                advance(1)
        return

    def work(lo, hi):
        text, end = _render(seq, one, sep, lo, hi)
        return text.encode("utf-8", "surrogatepass"), end

    ranges = _ranges(seq, work, workers)
    try:
        for k, lo, hi, data, end in ranges:
            if data is not None:    # (None: the worker failed; the range is rendered here)
                write(data.decode("utf-8", "surrogatepass"))
            for j, item in enumerate(_items(seq, end, hi), end):   # what the worker left
                write(one(j, item))
            if advance is not None:
                advance(hi - lo)
    finally:
        ranges.close()          # (a write that failed: the workers killed now)


def map_ranges(seq, fn, workers=None):
    """fn(item) of each item of seq, in order, as a generator. With a long seq, forked
    workers make ranges of it, each sent back in one marshal.dumps (what fn returns must
    be what marshal takes), while the caller goes on with the ranges before."""
    workers = jobs() if workers is None else workers
    if not worth_it(seq, workers):
        for item in seq:
            yield fn(item)
        return

    def work(lo, hi):
        return marshal.dumps([fn(item) for item in _items(seq, lo, hi)]), hi

    ranges = _ranges(seq, work, workers)
    try:
        for k, lo, hi, data, end in ranges:
            if data is not None:
                yield from marshal.loads(data)
            for item in _items(seq, end, hi):     # the range of a worker that failed: here
                yield fn(item)
    finally:
        ranges.close()


def _ranges(seq, work, workers):
    """(k, lo, hi, what work(lo, hi) gave, the index after the last item it did) of each
    range of seq in order, made by `workers` forked processes, at most workers + 2 ranges
    in flight; None and lo where a worker failed (the caller does the range itself)."""
    global _JOB
    n = len(seq)
    flush = getattr(seq, "_flush", None)
    if flush is not None:
        flush()             # its last batch in the file before the workers read it
    for stream in (sys.stdout, sys.stderr):
        try:                # what this process has buffered is written once, by it
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    _JOB = work
    gc.freeze()             # the workers' collector leaves the model's pages shared
    pool = None
    try:
        pool = _Workers(workers)
        pending = deque()
        step = chunk(n, workers)
        for k, lo in enumerate(range(0, n, step)):
            hi = min(lo + step, n)
            pool.send(k, lo, hi)
            pending.append((k, lo, hi))
            if len(pending) > workers + 2:
                yield _received(pool, *pending.popleft())
        while pending:
            yield _received(pool, *pending.popleft())
        pool.close()
        pool = None
    finally:
        if pool is not None:
            pool.close(kill=True)   # (a Ctrl-C, or a write that failed): nothing waits on them
        _JOB = None
        gc.unfreeze()


def _received(pool, k, lo, hi):
    data, end = pool.recv(k)
    return (k, lo, hi, data, end) if data is not None else (k, lo, hi, None, lo)


_TASK = struct.Struct("<qq")        # lo, hi
_RESULT = struct.Struct("<Qq")      # bytes of text, the index after the last item (-1: failed)


class _Workers:
    """Forked workers, each with a pipe for its ranges and one for their texts. Range k goes
    to worker k % n, so each worker answers in the order it was asked and the parent reads
    the texts in list order. The workers ignore SIGINT (blocked across the fork, so none
    is hit before it can ignore it): a Ctrl-C is the parent's, which kills and reaps them.
    (multiprocessing.Pool's workers printed tracebacks at a Ctrl-C, and its terminate()
    could wait forever on a result a worker had half written: trace-decode --json hung.)"""

    def __init__(self, n):
        self.procs = []         # (pid, task fd, result fd)
        try:
            for _ in range(n):
                task_r, task_w = os.pipe()
                result_r, result_w = os.pipe()
                pid = fork_worker(lambda: _serve(task_r, result_w),
                                  [task_w, result_r] + [f for p in self.procs for f in p[1:]])
                os.close(task_r)
                os.close(result_w)
                self.procs.append((pid, task_w, result_r))
        except BaseException:
            self.close(kill=True)
            raise

    def send(self, k, lo, hi):
        # 16 bytes, at most workers + 2 ranges in flight: the pipe never fills
        _write_all(self.procs[k % len(self.procs)][1], _TASK.pack(lo, hi))

    def recv(self, k):
        fd = self.procs[k % len(self.procs)][2]
        size, end = _RESULT.unpack(_read_exactly(fd, _RESULT.size))
        if end < 0:
            return None, None
        return _read_exactly(fd, size), end

    def close(self, kill=False):
        """End the workers (their task pipes closed: they exit) and reap them; kill=True:
        SIGKILL first, whatever they were doing."""
        procs, self.procs = self.procs, []
        for pid, task_w, result_r in procs:
            if kill:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            os.close(task_w)
        for pid, task_w, result_r in procs:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            os.close(result_r)


def fork_worker(serve, close=()):
    """A forked process that closes the descriptors `close`, runs serve() and exits (status
    0, or 1 if it raised), without atexit handlers or a flush of stdio (the parent's own).
    It ignores SIGINT, blocked across the fork so that none hits it before it can: a
    Ctrl-C is the parent's, which kills and reaps its workers. Its pid."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
                for fd in close:
                    os.close(fd)
                serve()
                status = 0
            finally:
                os._exit(status)
        return pid
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _serve(task_r, result_w):
    """A worker: each range asked for made (_JOB) and sent back, until the task pipe is
    closed. Its collector runs once per range, on the young objects only: a range's items
    are many small acyclic objects, and the collector, left to itself, ran every 700
    allocations over them (a 100-step transformer's --json on 2 CPUs: its render 1.42-1.58 s
    with it, 1.25-1.39 s without; the whole decode, 5 alternated reps, median 5.13 s with it,
    4.85 s without)."""
    gc.disable()
    while True:
        task = _read_exactly(task_r, _TASK.size, eof_ok=True)
        if task is None:
            return
        lo, hi = _TASK.unpack(task)
        try:
            data, end = _JOB(lo, hi)
        except Exception:   # noqa: BLE001 - the parent renders the range itself and says why
            data, end = b"", -1
        gc.collect(1)
        _write_all(result_w, _RESULT.pack(len(data), end))
        _write_all(result_w, data)


def _read_exactly(fd, n, eof_ok=False):
    parts = []
    while n:
        data = os.read(fd, min(n, 1 << 20))
        if not data:
            if eof_ok and not parts:
                return None
            raise OSError(f"a render worker ended early (fd {fd})")
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
