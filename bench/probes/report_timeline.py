"""trace-launch with its default report, with the times of its exit steps on stderr: when
the program exited (the live decode told to finish), when the live decode ended (and how:
model.split), when the exit step (the capture's rewrite) ended, and when the report was
printed. A probe's instrument: what the report's time after the program is made of.

    python3 bench/probes/report_timeline.py TRACE-LAUNCH-ARGS...
"""
import sys
import time

from tracer import cli_launch, live
from tracer.cli import trace_launch

T0 = time.monotonic()


def note(text):
    print(f"[timeline {time.monotonic() - T0:7.3f}] {text}", file=sys.stderr, flush=True)


finish = live.LiveDecode.finish


def timed_finish(self):
    note("program exited: waiting for the live decode")
    self.thread.join()
    note(f"live decode ended: {getattr(self.model, 'split', None)}")
    return finish(self)


live.LiveDecode.finish = timed_finish
apart = cli_launch._finish_capture_apart


def timed_apart(*a, **k):
    note("exit step began")
    try:
        return apart(*a, **k)
    finally:
        note("exit step ended")


cli_launch._finish_capture_apart = timed_apart
try:
    trace_launch(prog_name="trace-launch")
finally:
    note("done")
