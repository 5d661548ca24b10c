"""A decode split over two processes: the front (decoders/session/front.py, started here)
decodes the SUBMISSION records into launches; this process reads the same capture for
everything else, and at each SUBMISSION record hands the launch sink what the front's
launch stage handed its sink at that record. The model is the one a decode in one process
makes: the sink sees the same launches, in the same order, between the same records.

The two readers must meet the same records: each group of events names its record's
number and offset, and a group that does not match the record here (a capture whose
framing the two read differently), a front that died, or anything the front cannot follow
(a capture window's resync, a decode stopped by a budget) raises Diverged, and the
capture is decoded again in one process (decoders/session decode_capture).

TRACE_LAUNCH_SPLIT=0 never splits, =1 always (where it can); unset: with two CPUs or more,
for a capture read while it is written or one of SPLIT_MIN_BYTES or more.
"""
import atexit
import marshal
import os
import signal
import subprocess
import sys
import threading
from collections import deque

from decoders.errors import DecodeError, TraceLaunchError
from decoders.session.entries import _launch_problems
from decoders.session.front import (_LEN, ARRIVED, COPY, END, GROUPS, LATE, SINK, SYNC,
                                    reader_problems as reader_problems_of)
from decoders.session.launches import LaunchSink
from decoders.session.model import _launch_load

SPLIT_MIN_BYTES = 8 << 20       # of capture (compressed: times COMPRESSION, or gzip's ISIZE)
COMPRESSION = 8
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def package_env():
    """os.environ with this package's root first on PYTHONPATH: the environment of a child
    Python that imports it (the front; tracer/cli_launch.py's exit step), installed or not."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=_ROOT + (os.pathsep + path if path else ""))


class Diverged(TraceLaunchError):
    """The front cannot give what a decode in one process would: decode in one instead."""


def usable_cpus():
    """The CPUs this process may run on (its affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def wanted(path, stream=None):
    """Whether decode_capture should split (module docstring)."""
    env = os.environ.get("TRACE_LAUNCH_SPLIT", "").strip()
    if env in ("0", "1"):
        return env == "1"
    if usable_cpus() < 2:
        return False
    if stream is not None:
        return bool(getattr(stream, "live", False))
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            magic = f.read(4)
            if magic[:2] == b"\x1f\x8b" and size >= 18:
                f.seek(-4, os.SEEK_END)     # ISIZE: its last member's size, a lower bound
                raw = int.from_bytes(f.read(4), "little")
            elif magic == b"\x28\xb5\x2f\xfd":
                raw = _zstd_content_size(magic + f.read(14))
            else:
                raw = 0
    except OSError:
        return False
    if magic[:2] == b"\x1f\x8b" or magic == b"\x28\xb5\x2f\xfd":
        # a launch loop's gzip packs 20 MB into 0.9 MB: the estimate alone left it unsplit
        size = max(size * COMPRESSION, raw)
    return size >= SPLIT_MIN_BYTES


def _zstd_content_size(head):
    """The first zstd frame's content size, from its header (0 where it does not say)."""
    try:
        import zstandard
    except ImportError:
        return 0
    try:
        n = zstandard.get_frame_parameters(head).content_size
    except zstandard.ZstdError:     # (a header it does not read: the reader will say so)
        return 0
    return n if 0 < n < 1 << 62 else 0


_SESSIONS = {}          # child in a session of its own, not stopped yet -> the pid that started it


@atexit.register
def _end_sessions():
    """A tracer that exits (a Ctrl-C while its report is made) ends the sessions it started:
    the terminal's signals do not reach them."""
    for proc, pid in list(_SESSIONS.items()):
        if pid == os.getpid():      # (not in a process forked since)
            _kill_group(proc)


def _kill_group(proc):
    _SESSIONS.pop(proc, None)
    # the group outlives its leader: a leader that exited (not reaped yet, so its pid,
    # the group's id, is not reused) may leave processes it forked
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def start_child(module, args, path, stream=None, session=False, pass_fds=()):
    """(Popen, the read end of its --out pipe) of `python -c "module.main(argv)"` reading
    the same capture: by path, or (a capture read while it is written) through its own
    descriptor of the file and a pipe closed once `stream.finished` is set. `session`: in a
    session of its own (killpg ends it and the processes it forked). `pass_fds`: more
    descriptors it inherits (named in `args`)."""
    r, w = os.pipe()
    argv = [sys.executable, "-c", f"import sys; from {module} import main; "
            "sys.exit(main(sys.argv[1:]))", "--out", str(w)] + list(args)
    fds, closing = [w] + list(pass_fds), []
    if stream is not None and getattr(stream, "live", False):
        fd = os.dup(stream.fd)
        fin_r, fin_w = os.pipe()
        argv += ["--fd", str(fd), "--finished", str(fin_r)]
        fds += [fd, fin_r]
        closing = [fd, fin_r]
        # the writers are done: the child reads to the end of the file (LiveCapture)
        threading.Thread(target=_close_when, args=(stream.finished, fin_w),
                         name="trace-launch-child-finished", daemon=True).start()
    else:
        argv += ["--path", os.path.abspath(str(path))]
    try:
        proc = subprocess.Popen(argv, pass_fds=fds, env=package_env(), cwd=_ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=session)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
        for fd in closing:
            os.close(fd)
    if session:
        _SESSIONS[proc] = os.getpid()
    return proc, r


class Front:
    """The front process and its pipe: next() gives its groups one at a time, end() what
    its decoder's finish gave."""

    def __init__(self, path, stream=None):
        self.proc, r = start_child("decoders.session.front", [], path, stream)
        self.fd = r
        self.groups = deque()
        self.ended = None

    def _read(self, n):
        parts = []
        while n:
            data = os.read(self.fd, min(n, 1 << 20))
            if not data:
                raise Diverged("the decode's front process ended early")
            parts.append(data)
            n -= len(data)
        return b"".join(parts)

    def _message(self):
        if self.ended is not None:
            raise Diverged("the front sent nothing more for this record")
        (n,) = _LEN.unpack(self._read(_LEN.size))
        kind, payload = marshal.loads(self._read(n))
        if kind == GROUPS:
            self.groups.extend(payload)
        elif kind == END:
            self.ended = payload
        else:
            raise Diverged(f"the front sent a message of kind {kind}")

    def next(self):
        while not self.groups:
            self._message()
        return self.groups.popleft()

    def end(self):
        while self.ended is None and not self.groups:
            self._message()
        if self.groups:
            raise Diverged("the front decoded SUBMISSION records this decode did not meet")
        return self.ended

    def close(self):
        stop_child(self.proc, self.fd)


def stop_child(proc, fd, group=False):
    """Close the pipe from a child of start_child() and end it (`group`: and what it forked,
    its session)."""
    try:
        os.close(fd)
    except OSError:
        pass
    if group:
        _kill_group(proc)
    elif proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass
    proc.wait()


def _close_when(event, fd):
    event.wait()
    os.close(fd)


class RemoteLaunchStage:
    """LaunchStage's interface (decoders/session/launches.py) over a Front: the sink here,
    fed what the front's sink was at each SUBMISSION record."""

    def __init__(self, model, attr, front, windows=None):
        self.sink = LaunchSink(model, attr, windows)
        self.front = front
        self.record_offsets = {}
        self._pending = {}      # serial -> launch arrived, not yet handed to the sink
        self._last = {}         # channel key -> (serial, launch): its last launch
        self._group = None      # the front's group for the SUBMISSION being handled

    @property
    def decoder(self):
        # only a capture window's stage asks for it (to resync): the front cannot
        raise Diverged("a capture window's edge: the streams resync")

    def head(self, rec):
        """The front's group for SUBMISSION `rec` (read here unparsed: the reader's `lazy`),
        checked to be this record's; its body's model.submission_head."""
        group = self.front.next()
        index, offset = group[0], group[1]
        if index != rec.index or offset != rec.offset:
            raise Diverged(f"record {rec.index} at {rec.offset:#x} here, {index} at "
                           f"{offset:#x} in the front")
        if group[5]:
            raise Diverged("the front's reader found a problem: the readers may part")
        self._group = group
        return group[4]

    def feed(self, rec, call):
        """One SUBMISSION (after head()): the sink fed what the front's sink was."""
        if self._group is None or self._group[0] != rec.index:
            self.head(rec)      # a record read parsed (not the usual one-step path)
        index, _, events, problems, head, _ = self._group
        self._group = None
        sink = self.sink
        sink.call = call
        sink.at = (rec.pid, rec.tid, rec.t_start)
        self._apply(events, (rec.pid, head[1], head[2], head[0]))
        if problems:
            self.record_offsets[rec.index] = rec.offset

    def _apply(self, events, key):
        sink, pending = self.sink, self._pending
        for ev in events:
            kind = ev[0]
            if kind == ARRIVED:
                _, serial, dumped, latch, last = ev
                launch = _launch_load(dumped)
                launch.latch = latch
                pending[serial] = launch
                if last:
                    self._last[key] = (serial, launch)
                sink.arrived(launch)
            elif kind == SINK:
                launch = pending.pop(ev[1], None)
                if launch is None:
                    raise Diverged(f"the front's launch {ev[1]} never arrived")
                sink(launch)
            elif kind == LATE:
                _, serial, had, added = ev
                launch = pending.get(serial)
                if launch is None:
                    got = self._last.get(key)
                    launch = got[1] if got is not None and got[0] == serial else None
                s = launch._summary if launch is not None else None
                if s is None or len(s["semaphores"]) != had:
                    raise Diverged(f"the front's launch {serial} changed out of sight")
                s["semaphores"] = s["semaphores"] + added
                sink.late(launch)
            elif kind == SYNC:
                sink.sync(ev[1])
            elif kind == COPY:
                sink.copy(ev[1])

    def finish(self, model, reader_problems=(), since=0):
        """`reader_problems`: this decode's reader's. The front's must be the same: a capture
        cut short (a job killed, a recording stopped) ends in a record both readers find
        truncated at the same offset, and the readers did not part; a record one of them
        parses and the other passes over unparsed may be a problem to one alone."""
        events, problems, theirs = self.front.end()
        if [tuple(p) for p in theirs] != reader_problems_of(reader_problems):
            raise Diverged("the front's reader found other problems: the readers may part")
        self._apply(events, None)
        _launch_problems(model, _Result([_problem(*p) for p in problems]), self.record_offsets)
        self.sink.settle()


class _Result:
    def __init__(self, problems):
        self.problems = problems


def _problem(text, path, offset):
    """A DecodeError that reads as the front's did (its text, path and offset)."""
    e = DecodeError.__new__(DecodeError)
    Exception.__init__(e, text)
    e.path, e.offset = path, offset
    return e
