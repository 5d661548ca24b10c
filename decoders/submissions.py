"""Whole captures: SUBMISSION records, in doorbell order per channel -> method packets
(decoders/pushbuf.py, one StreamDecoder per channel) -> launches (decoders/launch, one
LaunchDecoder per process)."""
from collections import deque

from decoders.capture.format import TL_SF_COPIED, TL_SF_UNMAPPED, TL_SUB_LOST
from decoders.errors import DecodeError
from decoders.gpfifo import segment_lengths
from decoders.launch import LaunchDecoder
from decoders.launch.qmds import run_order
from decoders.methods import class_info
from decoders.pushbuf import StreamDecoder


class _Where:
    """"record N (channel token T)", formatted only when a problem needs it."""
    __slots__ = ("record_index", "token")

    def __init__(self, record_index, token):
        self.record_index = record_index
        self.token = token

    def __format__(self, spec):
        return format(f"record {self.record_index} (channel token {self.token:#x})", spec)

    __str__ = lambda self: format(self, "")


class SubmissionResult:
    """What decode_submissions() found: .launches (Launch, in decode order), .problems
    (DecodeError, each naming the record, channel and stream offset), .channels
    ({channel key: {'token', 'hChannel', 'pid', 'submissions', 'bytes', 'binding'}})."""

    def __init__(self, launches, problems, channels):
        self.launches = launches
        self.problems = problems
        self.channels = channels

    @property
    def kernels(self):
        """The launches that run a program (not the driver's GRID_NULL companions)."""
        return [l for l in self.launches if l.summary["kernel"]]


class SubmissionDecoder:
    """Streaming form of decode_submissions(): feed() one SUBMISSION body at a time.

    Per channel (key: pid, hClient, hChannel, token) one StreamDecoder carries SET_OBJECT
    bindings and split method sequences from one submission to the next. One
    LaunchDecoder per process holds the reconstructed GPU VA image, with I2M state per
    channel: the channels of one process share one GPU address space (CUDA's unified
    addressing), so an upload on one channel is visible to a QMD read on another.
    """

    # Launches held for their channel's next launch before they go to the sink anyway: a
    # channel that goes idle after a launch would otherwise hold back every launch behind
    # it to the end (captures/jax-jit holds 640 of its 641 so).
    HOLD = 4096

    def __init__(self, gpu="hopper", memory_lookup=None, sink=None, arrived=None, late=None,
                 sync=None, copy=None):
        """sink: None to keep every launch in .launches; or a callable that takes each
        launch, in the same order, once nothing can change it any more (a later method of
        its channel may still attach a semaphore to a channel's last launch) or once HOLD
        launches wait behind it, and then nothing keeps it here: memory stays flat however
        many launches a capture holds.
        arrived: with a sink, a callable that takes each launch when the submission that
        made it has been decoded (before any sink call of that submission).
        late: a callable that takes a launch (held, or handed over past HOLD) whose
        semaphores a later submission of its channel added to: only the channel's last
        launch can change, so this is the one launch to look at again.
        sync: a callable that takes each semaphore method no launch holds (a wait, or a
        release on a channel with no launch yet: decoders/launch/decoder.py _semaphore),
        with its record_index and pid, in submission order.
        copy: the same for each copy engine transfer (LAUNCH_DMA with a data transfer)."""
        self._stream_cls = StreamDecoder
        self.sync = sync
        self.copy = copy
        self.gpu = gpu
        self.memory_lookup = memory_lookup
        self.launches = []
        self.sink = sink
        self.arrived = arrived
        self.late = late
        self._pending = deque()     # (launch, its _Channel) not yet handed to the sink
        self.problems = []
        self.channels = {}
        self._streams = {}          # channel key -> StreamDecoder
        self._seen_problems = {}    # channel key -> problems already converted
        self._decoders = {}         # pid -> LaunchDecoder
        self._count = 0

    def decoder(self, pid=None):
        """The LaunchDecoder (memory image, copies) of one process."""
        ld = self._decoders.get(pid)
        if ld is None:
            ld = self._decoders[pid] = LaunchDecoder(gpu=self.gpu, memory_lookup=self.memory_lookup)
        return ld

    def feed(self, record_index, body, pid=None):
        """Decode one SUBMISSION record body; returns the launches it produced."""
        # Subscripts, not attributes: a construct Container's attribute access is a Python
        # call per field.
        token, hChannel = body["token"], body["hChannel"]
        key = (pid, body["hClient"], hChannel, token)
        dec = self._streams.get(key)
        if dec is None:
            host = body.hClass if class_info(body.hClass) is not None else None
            dec = self._streams[key] = self._stream_cls(gpu=self.gpu, host_class=host)
            self.channels[key] = {"pid": pid, "token": token, "hChannel": hChannel,
                                  "hClient": body.hClient, "host_class": dec.host_class,
                                  "submissions": 0, "bytes": 0, "binding": dec.binding}
            self._seen_problems[key] = 0
        info = self.channels[key]
        info["submissions"] += 1
        ld = self._decoders.get(pid)
        if ld is None:
            ld = self.decoder(pid)
        ld.begin_submission(record_index)
        launches = ld.launches
        # a semaphore method of this submission may attach to the channel's last launch
        ch = ld._channels.get(key)
        last = ch.last_launch if ch is not None else None
        nsem = len(last._summary["semaphores"]) if last is not None else 0
        nl, nlp = len(launches), len(ld.problems)
        lost = body["lost"]
        if body["flags"] & TL_SUB_LOST or lost:
            where = _Where(record_index, token)
            self.problems.append(DecodeError(
                f"{where}: {lost} GP entries were overwritten before the capture read "
                f"them; the method stream has a hole", path="pushbuf"))
        lengths = segment_lengths(body["entries"])
        nlen = len(lengths)
        k = 0
        for seg in body["segments"]:
            seg_size, seg_flags = seg["size"], seg["flags"]
            want = lengths[k] if k < nlen else seg_size
            k += 1
            size = seg_size if seg_flags & TL_SF_COPIED else 0
            if size:
                data = seg["data"]
                if len(data) != size:
                    data = data[:size]
                info["bytes"] += size
                va = seg["va"]
                packets = dec.feed_raw(data, va, packets=False)
                if packets is None:         # a replayed template: ops on its words
                    ld.feed_template(key, dec.template, tuple(dec.binding.items()),
                                     dec.host_class, dec.words, dec.data, dec.base, va)
                else:
                    ld.feed_raw(packets, channel=key)
            if want > size:
                why = ("segment not mapped in the traced process" if seg_flags & TL_SF_UNMAPPED
                       else "segment clipped by the capture")
                where = _Where(record_index, token)
                dec.gap(want - size, f"{where}: GP segment at {seg.va:#x} ({want} bytes): {why}",
                        seg.va + size)
        ld.end_submission()
        for name, take in (("syncs", self.sync), ("copies", self.copy)):
            got = getattr(ld, name)
            if got:
                setattr(ld, name, [])       # (taken each submission: nothing grows)
                if take is not None:
                    for e in got:
                        e["record_index"] = record_index
                        e["pid"] = pid
                        take(e)
        if len(dec.problems) != self._seen_problems[key] or len(ld.problems) != nlp:
            self._convert(key, dec, ld, nlp, _Where(record_index, token))
        n = self._count
        self._count = n + 1
        if last is not None and self.late is not None and \
                len(last._summary["semaphores"]) != nsem:
            self.late(last)
        if len(launches) == nl:
            return []
        new = launches[nl:]
        for launch in new:
            launch.record_index = record_index
            launch.submission_index = n
            launch.channel = token
            launch.pid = pid
            launch.hChannel = hChannel
            s = launch._summary
            s["record_index"] = record_index
            s["submission_index"] = n
            s["channel"] = token
            s["pid"] = pid
        new = run_order(new)        # as the GPU runs them (a graph's first replay)
        sink = self.sink
        if sink is None:
            self.launches.extend(new)
            return new
        del launches[:]
        arrived, pending = self.arrived, self._pending
        ch = ld._channels.get(key)
        for launch in new:
            if arrived is not None:
                arrived(launch)
            pending.append((launch, ch))
        while pending and pending[0][1].last_launch is not pending[0][0]:
            sink(pending.popleft()[0])
        while len(pending) > self.HOLD:
            sink(pending.popleft()[0])
        return new

    def resync(self, body=None, pid=None):
        """Every channel, or the channel of SUBMISSION `body` (of process `pid`, as fed),
        starts clean at its next submission (decoders/window.py: a capture window's edge,
        or submissions the window left out)."""
        key = None if body is None else (pid, body["hClient"], body["hChannel"], body["token"])
        for k, dec in self._streams.items():
            if key is None or k == key:
                dec.resync()
                self.decoder(k[0]).resync(k)

    def _convert(self, key, dec, ld, nlp, where):
        done = self._seen_problems[key]
        for p in dec.problems[done:]:
            self.problems.append(DecodeError(f"{where}: {p.message}", path="pushbuf",
                                             offset=p.offset))
        self._seen_problems[key] = len(dec.problems)
        for p in ld.problems[nlp:]:
            self.problems.append(DecodeError(f"{where}: {p['message']}", path="launch",
                                             offset=p["offset"]))

    def finish(self):
        """End of capture: a channel whose stream stops inside a sequence is a problem."""
        for key, dec in self._streams.items():
            dec.finish()
            ld = self.decoder(key[0])
            self._convert(key, dec, ld, len(ld.problems), f"end of capture (channel token "
                                                          f"{key[3]:#x})")
        self.hand_over()
        return SubmissionResult(self.launches, self.problems, self.channels)

    def hand_over(self):
        """The launches still held (for later semaphores of their channels) handed to the
        sink, in order: at the capture's end, or at a block's (decoders/session/blocks.py)."""
        while self._pending:
            self.sink(self._pending.popleft()[0])


def decode_submissions(submissions, gpu="hopper", memory_lookup=None):
    """Decode every SUBMISSION of a capture, in record order, into launches.

    submissions: an iterable (a generator is fine: nothing is kept but channel state and
    the reconstructed memory) of `(record_index, body)` or `(record_index, body, pid)`,
    where body is a SUBMISSION record body as decoders.capture.reader parses it (fields
    token, hClient, hChannel, hClass, flags, lost, entries, segments[va, size, flags,
    data]) and pid the recording process (None when the caller has one process).
    Submissions of one channel must come in doorbell order (capture record order is).

    Returns a SubmissionResult: .launches (each a Launch with .summary, .node,
    .record_index, .submission_index, .channel), .kernels, .problems (DecodeError).
    Never raises on stream content.
    """
    dec = SubmissionDecoder(gpu=gpu, memory_lookup=memory_lookup)
    for item in submissions:
        if len(item) == 3:
            dec.feed(item[0], item[1], item[2])
        else:
            dec.feed(item[0], item[1])
    return dec.finish()
