"""The JSON report's long lists rendered while the capture is still being decoded.

Why: on a machine of few CPUs a split decode (decoders/session/split.py) keeps one CPU
busy with the decoding process and the other half idle (the front decodes the submissions
in half the time: a 100-step transformer on 2 CPUs, 3.9 s against 2.0 s), and then the
render of the launches and API calls starts from nothing. The items of a list are final
once a batch of them is written to its file (decoders/spill.py SpillList: a later change
to one is a patch, read on top), so a worker process renders each batch as it is sealed,
at a low priority (it takes what the decode leaves), and the render writes its text where
no patch came since, rendering the rest as before (tracer/parallel.py).

The worker is forked when the decode starts (its memory is then small, and the lists'
files exist already), is told of each batch through a pipe it reads (a full pipe: the
batch is left to the render), and stops when the decode ends (finish()): what it did not
render by then is rendered as before. TRACE_LAUNCH_PRERENDER=0 turns it off.
"""
import bisect
import marshal
import os
import select
import signal
import struct
import tempfile

from decoders.session.split import usable_cpus
from tracer.parallel import fork_worker, render_ranges

_TASK = struct.Struct("<qqqq")      # list number, batch, its file offsets lo and hi
NICE = 10                           # the worker's: below the decode's two processes
SEP = ",\n  "                       # between two items (tracer/report_json.py chunk)


def wanted():
    """Whether a JSON report's decode should render ahead (TRACE_LAUNCH_PRERENDER, and
    two CPUs or more: with one, the worker would take the decode's)."""
    env = os.environ.get("TRACE_LAUNCH_PRERENDER", "").strip()
    if env in ("0", "1"):
        return env == "1"
    return usable_cpus() >= 2


class Prerender:
    """Renders the batches of a model's lists as they are sealed. `views`: {list name:
    one(index, item) -> text}, the functions the render uses for them (their index
    argument unused). attach(model) at the decode's start; finish() at its end, then
    texts(name) for render()."""

    def __init__(self, views):
        self.views = views
        self.model = None
        self.pid = None
        self._names = []
        self._texts = {}        # name -> {batch: (offset, bytes)} in self._out
        self._out = None
        self._task_w = self._stop_w = self._result_r = None

    def attach(self, model):
        """Start rendering `model`'s lists (a decode started again after one gave up
        attaches its new model: the worker of the old one is ended first)."""
        self.close()
        lists = [(name, getattr(model, name, None)) for name in self.views]
        lists = [(name, lst) for name, lst in lists
                 if lst is not None and hasattr(lst, "on_seal") and not lst.drop]
        if not lists:
            return
        files = [lst.open_file() for _, lst in lists]
        self._out = tempfile.TemporaryFile(prefix="trace-decode-prerender-")
        task_r, task_w = os.pipe()
        stop_r, stop_w = os.pipe()
        result_r, result_w = os.pipe()
        out = self._out.fileno()

        def serve():
            os.nice(NICE)
            _serve([(lst, f.fileno(), self.views[name]) for (name, lst), f in zip(lists, files)],
                   task_r, stop_r, out, result_w)
        pid = fork_worker(serve, (task_w, stop_w, result_r))
        for fd in (task_r, stop_r, result_w):
            os.close(fd)
        os.set_blocking(task_w, False)
        self.pid, self.model = pid, model
        self._task_w, self._stop_w, self._result_r = task_w, stop_w, result_r
        self._names = [name for name, _ in lists]
        for n, (name, lst) in enumerate(lists):
            lst.on_seal = self._sealed(n)

    def _sealed(self, n):
        def sealed(k, lo, hi, first):
            if self._task_w is None:
                return
            try:
                os.write(self._task_w, _TASK.pack(n, k, lo, hi))
            except BlockingIOError:
                pass        # the worker is behind: the render does this batch
            except OSError:
                self.close()
        return sealed

    def finish(self, wait=False):
        """The decode ended: the worker stops after the batch it is on (wait=True: once it
        rendered every batch it was told of), and says which batches it rendered."""
        if self.pid is None:
            return
        model = self.model
        for name in self._names:
            getattr(model, name).on_seal = None
        os.close(self._task_w)
        self._task_w = None
        if not wait:
            os.close(self._stop_w)
            self._stop_w = None
        data = _read_all(self._result_r)
        os.close(self._result_r)
        self._result_r = None
        if self._stop_w is not None:
            os.close(self._stop_w)
            self._stop_w = None
        _reap(self.pid)
        self.pid = None
        try:
            done = marshal.loads(data) if data else []
        except (EOFError, ValueError, TypeError):
            done = []
        for n, k, off, size in done:
            self._texts.setdefault(self._names[n], {})[k] = (off, size)

    def texts(self, model, name):
        """{batch: (offset, bytes)} rendered ahead for `model`'s list `name` (empty: none)."""
        if model is not self.model:
            return {}
        return self._texts.get(name, {})

    def read(self, off, size):
        return os.pread(self._out.fileno(), size, off)

    def close(self):
        """End the worker, whatever it is doing, and drop what it rendered."""
        if self.model is not None:
            for name in self._names:
                lst = getattr(self.model, name, None)
                if lst is not None:
                    lst.on_seal = None
        for attr in ("_task_w", "_stop_w", "_result_r"):
            fd = getattr(self, attr)
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
                setattr(self, attr, None)
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            _reap(self.pid)
            self.pid = None
        if self._out is not None:
            self._out.close()
            self._out = None
        self.model = None
        self._texts = {}


def _reap(pid):
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _read_all(fd):
    parts = []
    while True:
        data = os.read(fd, 1 << 16)
        if not data:
            return b"".join(parts)
        parts.append(data)


def _serve(lists, task_r, stop_r, out_fd, result_w):
    """The worker: each batch it is told of rendered into out_fd, until stop_r is closed;
    then [(list number, batch, offset, bytes)] of those it did, marshalled to result_w."""
    done, at = [], 0
    for n, k, lo, hi in _tasks(task_r, stop_r):
        lst, fd, one = lists[n]
        batch = marshal.loads(os.pread(fd, hi - lo, lo))
        raw = SEP.join(one(0, lst._loaded(obj)) for obj in batch).encode("utf-8",
                                                                          "surrogatepass")
        os.pwrite(out_fd, raw, at)
        done.append((n, k, at, len(raw)))
        at += len(raw)
    data = memoryview(marshal.dumps(done))
    while data:
        data = data[os.write(result_w, data):]


def _tasks(task_r, stop_r):
    """The tasks read from task_r, one at a time, until stop_r is closed (looked at before
    each) or task_r is."""
    pending = b""
    while True:
        if len(pending) < _TASK.size:
            ready, _, _ = select.select([task_r, stop_r], [], [])
            if stop_r in ready:
                return
            data = os.read(task_r, _TASK.size * 256)
            if not data:
                return
            pending += data
            continue
        if select.select([stop_r], [], [], 0)[0]:
            return
        yield _TASK.unpack_from(pending)
        pending = pending[_TASK.size:]


class _Slice:
    """Items lo..hi of a SpillList, as render_ranges reads a list."""

    def __init__(self, seq, lo, hi):
        self.seq, self.lo, self.hi = seq, lo, hi

    def __len__(self):
        return self.hi - self.lo

    def iter_range(self, lo, hi):
        return self.seq.iter_range(self.lo + lo, self.lo + min(hi, len(self)))

    def __iter__(self):
        return self.iter_range(0, len(self))

    def _flush(self):
        pass


def render(seq, one, write, texts, read, advance=None):
    """render_ranges(seq, one, write) with the batches in `texts` ({batch: (offset,
    bytes)}, read(offset, bytes) gives their text) written as they were rendered ahead,
    but those with an item patched since (SpillList.patch)."""
    seq._flush()
    kept, starts, nbatch = len(seq._items), seq._starts, len(seq._starts)
    stale = {bisect.bisect_right(starts, i - kept) - 1 for i in seq._patches if i >= kept}
    lo = 0
    for k in range(nbatch):
        got = texts.get(k)
        if got is None or k in stale:
            continue
        a = kept + starts[k]
        b = kept + (starts[k + 1] if k + 1 < nbatch else seq._nspilled)
        if lo < a:
            render_ranges(_Slice(seq, lo, a), one, write, advance=advance)
        write(read(*got).decode("utf-8", "surrogatepass"))
        if advance is not None:
            advance(b - a)
        lo = b
    if lo < len(seq):
        render_ranges(_Slice(seq, lo, len(seq)), one, write, advance=advance)
