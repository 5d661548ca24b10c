"""The front of a split decode (decoders/session/split.py): a process of its own that reads
the same capture and decodes its SUBMISSION records into launches, while the decoding
process does everything else (ioctls, API calls, the launch sink). What the launch stage
would hand its sink (decoders/session/launches.py: arrived, sink, late, sync, copy) is
recorded, in the order it happens, per SUBMISSION record, and sent down a pipe.

Why a process: a long training job's decode is half submissions and half the rest, and
the two halves share nothing but the launches that cross between them; one Python process
runs them one after the other.

Wire format: messages, each an 8-byte little-endian length and a marshalled
(kind, payload). GROUPS: a list of (record index, record offset, events, problems grew,
model.submission_head of the body, the reader's problems so far), one per SUBMISSION
record in record order. END: (events of the decoder's finish, its problems as (text,
path, offset), the reader's problems as (text, offset)). An event is a tuple whose first
item says what it is: ARRIVED (serial, the launch as model._launch_dump makes it, its
summary copied, latch, whether it is its channel's last launch now), SINK (serial), LATE
(serial, semaphores it had, the semaphores added), SYNC (entry), COPY (entry).

Started by decoders/session/split.py as `main(["--out", FD, "--path", CAPTURE])` or, for a
capture read while it is written, `main(["--out", FD, "--fd", FD, "--finished", FD])`.
"""
import gc
import marshal
import os
import select
import struct
import sys
from collections import deque

from decoders.session.model import _launch_dump, submission_head

GROUPS, END = 0, 1
ARRIVED, SINK, LATE, SYNC, COPY = range(5)
FLUSH_GROUPS = 128      # SUBMISSION records per message
FLUSH_EVENTS = 4096     # ...or fewer, once their events pass this (a hostile capture's
                        # submission may hold thousands of launches); the pipe holds back
                        # the rest until the decoding process reads
COLLECT_RECORDS = 1024  # records between two collections of young objects (as the decode)
_LEN = struct.Struct("<Q")


class Recorder:
    """The launch stage's callbacks, recorded as events (what LaunchSink would be handed)."""

    def __init__(self):
        self.events = []
        self.serial = 0
        self.key = None         # (pid, hClient, hChannel, token) of the record being fed
        self.had = None         # the semaphores its channel's last launch had before it
        self.decoder = None     # the SubmissionDecoder (its channels' last launches)

    def arrived(self, launch):
        launch.serial = n = self.serial
        self.serial = n + 1
        t = _launch_dump(launch)
        s = dict(t[0])      # as it is now: a later submission may add semaphores (LATE)
        s["semaphores"] = list(s["semaphores"])
        ch = self.decoder.decoder(launch.pid)._channels.get(self.key)
        last = ch is not None and ch.last_launch is launch
        self.events.append((ARRIVED, n, (s,) + t[1:], launch.latch, last))

    def sink(self, launch):
        self.events.append((SINK, launch.serial))

    def late(self, launch):
        sems = launch._summary["semaphores"]
        self.events.append((LATE, launch.serial, self.had, sems[self.had:]))

    def sync(self, entry):
        self.events.append((SYNC, entry))

    def copy(self, entry):
        self.events.append((COPY, entry))

    def take(self):
        ev = self.events
        self.events = []
        return ev


def _message(kind, payload):
    data = marshal.dumps((kind, payload))
    return _LEN.pack(len(data)) + data


def _write(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Sender:
    """send() with the writes in a thread of their own: the decode goes on while the
    decoding process is busy with earlier messages (with a pipe's 64 KiB alone, each side
    waited for the other ~10% of a 500-step job's decode, measured on the H100 host), up
    to QUEUED bytes of messages not yet written (memory stays bounded). A write that fails
    (the decoding process went on without us) is raised by the next put()."""

    QUEUED = 32 << 20

    def __init__(self, fd):
        import threading
        self.fd = fd
        self._queue = deque()
        self._bytes = 0
        self._error = None
        self._done = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="trace-launch-front-send",
                                        daemon=True)
        self._thread.start()

    def put(self, kind, payload):
        data = _message(kind, payload)
        with self._cond:
            while self._bytes >= self.QUEUED and self._error is None:
                self._cond.wait()
            if self._error is not None:
                raise self._error
            self._queue.append(data)
            self._bytes += len(data)
            self._cond.notify_all()

    def close(self):
        """Wait until every message is written; raise what a write raised."""
        with self._cond:
            self._done = True
            self._cond.notify_all()
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _run(self):
        while True:
            with self._cond:
                while not self._queue and not self._done:
                    self._cond.wait()
                if not self._queue:
                    return
                data = self._queue.popleft()
            try:
                _write(self.fd, data)
            except OSError as exc:
                with self._cond:
                    self._error = exc
                    self._queue.clear()
                    self._cond.notify_all()
                return
            with self._cond:
                self._bytes -= len(data)
                self._cond.notify_all()


def run(stream, out):
    """Decode the SUBMISSION records of the capture `stream` and send the events to fd
    `out` (module docstring)."""
    from decoders.capture.reader import CaptureReader
    from decoders.session.launches import gpu_family
    from decoders.submissions import SubmissionDecoder
    reader = CaptureReader(stream)
    rec = Recorder()
    dec = SubmissionDecoder(gpu=gpu_family(reader.meta), sink=rec.sink, arrived=rec.arrived,
                            late=rec.late, sync=rec.sync, copy=rec.copy)
    rec.decoder = dec
    sender = Sender(out)
    groups = []
    n = events = 0
    for r in reader.records(only=("SUBMISSION",)):
        n += 1
        if not n % COLLECT_RECORDS:
            gc.collect(0)
        if r.type != "SUBMISSION":
            continue
        b = r.body
        key = rec.key = (r.pid, b["hClient"], b["hChannel"], b["token"])
        ch = dec.decoder(r.pid)._channels.get(key)
        last = ch.last_launch if ch is not None else None    # (the one LATE can name)
        rec.had = len(last._summary["semaphores"]) if last is not None else None
        nproblems = len(dec.problems)
        dec.feed(r.index, b, r.pid)
        got = rec.take()
        groups.append((r.index, r.offset, got, len(dec.problems) != nproblems,
                       submission_head(b), len(reader.problems)))
        events += len(got)
        if len(groups) >= FLUSH_GROUPS or events >= FLUSH_EVENTS:
            sender.put(GROUPS, groups)
            groups = []
            events = 0
    if groups:
        sender.put(GROUPS, groups)
    result = dec.finish()
    sender.put(END, (rec.take(), [(str(p), getattr(p, "path", None), getattr(p, "offset", None))
                                  for p in result.problems], reader_problems(reader.problems)))
    sender.close()


def reader_problems(problems):
    """A reader's problems as (text, offset) pairs: what the two readers of a split decode
    compare at the end (decoders/session/split.py)."""
    return [(str(p), getattr(p, "offset", None)) for p in problems]


class PipeEvent:
    """threading.Event's is_set/wait over a pipe: set once its write end is closed."""

    def __init__(self, fd):
        self.fd = fd
        self._set = False

    def wait(self, timeout=None):
        if not self._set:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            self._set = bool(ready)
        return self._set

    def is_set(self):
        return self.wait(0)


def open_stream(args):
    """The capture a child of split.start_child() reads: --path, or --fd and --finished."""
    if args.path is not None:
        from decoders.capture.reader import open_capture
        return open_capture(args.path, private=True)    # (a process it forks reads apart)
    from decoders.capture.live import LiveCapture
    return LiveCapture(args.fd, PipeEvent(args.finished))


def child_parser():
    """The arguments split.start_child() gives: --out, and --path or --fd and --finished."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=int, required=True)
    ap.add_argument("--path")
    ap.add_argument("--fd", type=int)
    ap.add_argument("--finished", type=int)
    return ap


def main(argv=None):
    args = child_parser().parse_args(argv)
    gc.disable()    # as the decode: many small acyclic objects, young ones collected by hand
    stream = open_stream(args)
    try:
        run(stream, args.out)
    except BrokenPipeError:     # the decoding process went on without us
        return 1
    finally:
        stream.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
