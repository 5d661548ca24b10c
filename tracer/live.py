"""trace-launch decodes the capture while the program runs (decoders/capture/live.py), in a
thread of the tracer, which otherwise only waits for the program: the report is ready
soon after the program exits instead of a decode's length later.

Only where it cannot slow the program: with at least MIN_CPUS CPUs for this process (the
decoder takes one while the program runs) and a report to print. Anything that goes wrong
in the thread leaves no model, and the capture is decoded from the file as before.
"""
import os
import threading

MIN_CPUS = 4


def wanted():
    """TRACE_LAUNCH_LIVE=0: never, =1: always; unset: with MIN_CPUS CPUs or more."""
    env = os.environ.get("TRACE_LAUNCH_LIVE", "")
    if env in ("0", "1"):
        return env == "1"
    try:
        return len(os.sched_getaffinity(0)) >= MIN_CPUS
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= MIN_CPUS


class LiveDecode:
    """decode_capture(output) in a thread from start() until finish() returns the model."""

    def __init__(self, output, brief=None, full_blocks=False):
        from decoders.capture.live import LiveCapture
        self.path = str(output)
        # its own descriptor of the same open file (pread only): never the name again
        self.fd = os.dup(output.fd)
        self.finished = threading.Event()
        self.stream = LiveCapture(self.fd, self.finished)
        self.brief = brief      # decode_capture(brief=): what the report will show
        self.full_blocks = full_blocks      # decode_capture(full_blocks=): the JSON report
        self.model = None
        self.error = None
        self.bar = None         # tracer/progress.py Bar, once the program has exited
        self.thread = threading.Thread(target=self._run, name="trace-launch-decode",
                                       daemon=True)

    def start(self):
        self.thread.start()
        return self

    def _run(self):
        from decoders.session import decode_capture
        try:
            self.model = decode_capture(self.path, stream=self.stream, progress=self._progress,
                                        brief=self.brief, full_blocks=self.full_blocks)
        except BaseException as exc:     # noqa: BLE001 - the file is decoded again instead
            self.error = exc

    def _progress(self, done, total):
        bar = self.bar          # (set by finish(), in the tracer's thread)
        if bar is not None:
            bar(done, total)

    def release(self):
        """The END record is written: the reader may read to the end (finish() waits)."""
        self.finished.set()

    def finish(self):
        """Once the END record is written: let the reader read to the end, wait for the
        decode, and return its model (None when it failed). What is left of the decode once
        the program has exited shows a progress line (on a terminal, past a few seconds):
        the report never waits silently."""
        from tracer.progress import Bar
        self.bar = Bar("trace-launch: program exited; decoding")    # (the time left fits in 80)
        self.finished.set()
        try:
            self.thread.join()
        finally:
            self.bar.close()
            os.close(self.fd)
        return self.model if self.error is None else None
