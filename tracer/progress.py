"""A progress line on stderr for long work (issue 24): how much is done, the rate and the
time left, redrawn in place. Only on a terminal, and only once the work has run past
DELAY_S: a pipe, a file or a short decode gets nothing, so output stays byte for byte.
The decoders never print; they call `progress(done, total)` (decode_capture) and this
draws it."""
import os
import sys
import time
from collections import deque

DELAY_S = 2.0       # work that ends sooner shows nothing
EVERY_S = 0.2       # at most this often a redraw
BAR = 20            # characters of the bar, fewer on a narrow terminal
WINDOW_S = 5.0      # the rate is over the last few seconds: a capture's module images are
                    # half its bytes and decode fast, its steps slow (the average over the
                    # whole decode made the time left a third of what it was)


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _time(s):
    s = int(s + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Bar:
    """progress(done, total) -> "trace-decode: [#####     ] 48%  12.1 MiB of 25.0 MiB
    3.2 MiB/s  0:04 left" (total None: no bar, no time left; the rate over the last
    WINDOW_S seconds, from the start until a second has passed); with `unit`, counts of it
    ("120,000 of 440,000 items  38,000/s") instead of bytes. A context manager:
    leaving it clears the line, so what is written to the stream next starts on a clean
    line."""

    def __init__(self, label, stream=None, delay=None, clock=time.monotonic, unit=None):
        self.label = label
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.delay = DELAY_S if delay is None else delay
        self.clock = clock
        self.start = clock()
        self.last = None
        self.drawn = False
        self.seen = deque()     # (time, done) of the calls within WINDOW_S
        try:
            self.on = self.stream.isatty()
        except (AttributeError, ValueError):
            self.on = False

    def __call__(self, done, total=None):
        if not self.on:
            return
        now = self.clock()
        elapsed = now - self.start
        seen = self.seen
        seen.append((now, done))
        while len(seen) > 2 and now - seen[1][0] >= WINDOW_S:
            seen.popleft()
        if elapsed < self.delay or (self.last is not None and now - self.last < EVERY_S):
            return
        self.last = now
        t0, d0 = seen[0]
        rate = (done - d0) / (now - t0) if now - t0 >= 1.0 else \
            done / elapsed if elapsed > 0 else 0
        try:
            width = os.get_terminal_size(self.stream.fileno()).columns or 80   # 0: not set
        except (AttributeError, ValueError, OSError):
            width = 80
        frac = min(done / total, 1.0) if total else None
        size = _size if self.unit is None else (lambda n: f"{n:,}")
        unit = "" if self.unit is None else f" {self.unit}"
        speed = f"{_size(rate)}/s" if self.unit is None else f"{rate:,.0f}/s"
        left = f"  {_time(max(total - done, 0) / rate)} left" if total and done and rate else ""
        tail = f"{size(done)}" + (f" of {size(total)}" if total else "") + f"{unit}  {speed}{left}"
        if len(self.label) + len(tail) + 7 > width - 1:     # the time left must show: the
            tail = f"{size(done)}{unit}  {speed}{left}"    # total goes first (the % says it)
        text = f"{self.label}: "
        if frac is not None:
            room = min(BAR, width - 1 - len(text) - len(tail) - 10)   # what fits: the bar
            bar = f"[{'#' * int(frac * room):{room}s}] " if room >= 5 else ""
            text += f"{bar}{frac:.0%}  "
        text += tail
        self._write("\r" + text[:max(width - 1, 10)] + "\x1b[K")
        self.drawn = True

    def close(self):
        if self.drawn:
            self._write("\r\x1b[K")
            self.drawn = False

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):      # a closed or broken stderr: no more progress
            self.on = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
