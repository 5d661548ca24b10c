"""The long lists of a report (launches, submissions, API calls) rendered by forked worker
processes, a range of items each, and written in order by the process that decoded them.

Why: a training run's JSON is ~550 MB of text made by Python code, one item at a time,
long after the capture is decoded; the items are independent once the model exists. The
workers are forked after decoding, so they read the model as it is (copy on write, the
spilled items through os.pread) and send back text. At most `workers + 2` ranges are in
flight, so the text waiting to be written stays a few MB whatever the capture holds.

TRACE_LAUNCH_JOBS=N sets the number of workers (1: none, all in this process).
"""
import gc
import os
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

_JOB = None         # (sequence, one, sep): set before the workers fork, read by them


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


def _render(lo, hi):
    """(text of items lo.., the index after the last one rendered): all up to hi, or fewer
    when their text passed CHUNK_TEXT (the rest is rendered by the parent)."""
    seq, one, sep = _JOB
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


def render_ranges(seq, one, write, sep=",\n  ", workers=None):
    """write() the text one(index, item) makes of each item of seq, in order: one text per
    item, or several items' joined by `sep` (render_json's separator by default). With a
    long seq, forked workers render ranges of it."""
    global _JOB
    n = len(seq)
    workers = jobs() if workers is None else workers
    if not worth_it(seq, workers):
        for k, item in enumerate(seq):
            write(one(k, item))
        return
    import multiprocessing
    flush = getattr(seq, "_flush", None)
    if flush is not None:
        flush()             # its last batch in the file before the workers read it
    for stream in (sys.stdout, sys.stderr):
        try:                # a worker flushes the standard streams when it ends
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    _JOB = (seq, one, sep)
    gc.freeze()             # the workers' collector leaves the model's pages shared

    def finish(task, hi):
        text, end = task.get()
        write(text)
        for k, item in enumerate(_items(seq, end, hi), end):   # what the worker left
            write(one(k, item))
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            pending = deque()
            step = chunk(n, workers)
            for lo in range(0, n, step):
                hi = min(lo + step, n)
                pending.append((pool.apply_async(_render, (lo, hi)), hi))
                if len(pending) > workers + 2:
                    finish(*pending.popleft())
            while pending:
                finish(*pending.popleft())
    finally:
        _JOB = None
        gc.unfreeze()
