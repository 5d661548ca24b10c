"""A decode that runs long draws a progress line on stderr when stderr is a terminal, and
never otherwise (issue 24): checked on a pseudo-terminal (pty), against a pipe, and
through `trace-decode` itself, whose output stays byte for byte the same."""
import os
import pty
import re
import subprocess
import sys
import threading

from conftest import ROOT, capture_path
from tracer.progress import Bar


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _drain(fd):
    """Everything readable from fd until its other end is closed."""
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:         # a pty master reads EIO once the slave is closed
            break
        if not chunk:
            break
        out += chunk
    return out


def test_bar_on_a_terminal_after_the_delay():
    master, slave = pty.openpty()
    clock = _Clock()
    with os.fdopen(slave, "w") as stream:
        with Bar("trace-decode", stream, delay=2.0, clock=clock) as bar:
            clock.t = 1.0
            bar(10 << 20, 100 << 20)           # within the delay: nothing
            clock.t = 4.0
            bar(40 << 20, 100 << 20)
            clock.t = 4.05
            bar(41 << 20, 100 << 20)           # too soon after the last draw
            clock.t = 5.0
            bar(50 << 20, None)                # no total: no bar, no time left
            clock.t = 10.0
            bar(1000 << 20, 1000 << 20)        # done: the whole line still fits
    text = _drain(master).decode()
    os.close(master)
    draws = [d for d in text.split("\r") if d]
    assert re.fullmatch(r"trace-decode: \[(#+) *\] 40%  40.0 MiB of 100.0 MiB  10.0 MiB/s  "
                        r"0:06 left\x1b\[K", draws[0]), draws
    assert len(draws[0]) <= 80 + 3     # one terminal line (80 columns when not set)
    assert draws[1] == "trace-decode: 50.0 MiB  10.0 MiB/s\x1b[K"
    # the rate of the last WINDOW_S seconds: 950 MiB since the call at 5.0 s
    assert draws[2].endswith("100%  1000.0 MiB of 1000.0 MiB  190.0 MiB/s  0:00 left\x1b[K")
    assert len(draws[2]) <= 80 + 3
    assert len(draws) == 4 and draws[3] == "\x1b[K"       # cleared on leaving


def test_time_left_follows_the_recent_rate():
    """A capture's module images are half its bytes and decode in a fraction of the time its
    steps take: 50 MiB in the first 2 s, then 1 MiB/s. At 10 s (58 of 100 MiB) the average
    since the start (5.8 MiB/s) would say 0:07 left; the last WINDOW_S seconds say 0:42."""
    master, slave = pty.openpty()
    clock = _Clock()
    with os.fdopen(slave, "w") as stream:
        with Bar("trace-decode", stream, delay=2.0, clock=clock) as bar:
            for t, done in ((1.0, 25), (2.0, 50), (4.0, 52), (6.0, 54), (8.0, 56), (10.0, 58)):
                clock.t = t
                bar(done << 20, 100 << 20)
    text = _drain(master).decode()
    os.close(master)
    draws = [d for d in text.split("\r") if d and d != "\x1b[K"]
    assert draws[-1].endswith("58%  58.0 MiB of 100.0 MiB  1.0 MiB/s  0:42 left\x1b[K"), draws


def test_no_bar_when_stderr_is_not_a_terminal():
    r, w = os.pipe()
    clock = _Clock()
    with os.fdopen(w, "w") as stream:
        with Bar("trace-decode", stream, delay=0, clock=clock) as bar:
            for k in range(5):
                clock.t = k + 1.0
                bar(k << 20, 5 << 20)
    assert _drain(r) == b""
    os.close(r)


# trace-decode as the console script runs it, with no delay (the captures here decode in
# about a second; the bar waits two)
_CLI = ("import sys, tracer.progress as p; p.DELAY_S = 0; p.EVERY_S = 0; "
        "from tracer.cli import trace_decode; trace_decode(sys.argv[1:], prog_name='trace-decode')")


def _trace_decode(args, tty):
    """(stdout, stderr) of trace-decode ARGS with stderr a pty or a pipe."""
    cmd = [sys.executable, "-c", _CLI, *args]
    if not tty:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True)
        return p.stdout, p.stderr
    master, slave = pty.openpty()
    got = []
    reader = threading.Thread(target=lambda: got.append(_drain(master)))
    reader.start()
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    reader.join()
    os.close(master)
    return p.stdout, got[0]


def test_trace_decode_draws_on_a_tty_only():
    path = capture_path("jax-jit")
    out_tty, err_tty = _trace_decode([path, "--json"], tty=True)
    out_pipe, err_pipe = _trace_decode([path, "--json"], tty=False)
    assert b"trace-decode: [" in err_tty and b"%  " in err_tty and b" left" in err_tty
    # then the JSON's items as they are written (stdout is not the terminal here)
    assert re.search(rb"trace-decode: JSON: \[#+ *\] \d+%  [\d,]+ of [\d,]+ items  [\d,]+/s  "
                     rb"\d+:\d\d left", err_tty)
    assert err_tty.endswith(b"\r\x1b[K")      # the line is cleared before anything else
    assert err_pipe == b""
    assert out_tty == out_pipe and out_pipe.startswith(b"{")


def test_timeline_diff_and_explain_draw_on_a_tty_only(tmp_path):
    """The other commands that decode a whole capture show the same line on a terminal
    (issue 24: any decode past about two seconds): `timeline` also while it makes, sorts
    and writes its events (as long again as the decode on a long job), and what it writes
    is byte for byte the same."""
    path = capture_path("jax-jit")
    outs = []
    for tty in (True, False):
        out = tmp_path / f"trace-{tty}.json"
        _, err = _trace_decode(["timeline", path, "-o", str(out)], tty=tty)
        outs.append(out.read_bytes())
        if tty:
            assert b"trace-decode: [" in err and b" left" in err
            assert re.search(rb"trace-decode: timeline: [\d,]+ events  [\d,]+/s", err)
            assert err.endswith(b"\r\x1b[K")
        else:
            assert err == b""
    assert outs[0] == outs[1] and outs[0].startswith(b'{"traceEvents":[')
    for args in (["diff", path], ["explain", path]):
        out_tty, err_tty = _trace_decode(args, tty=True)
        out_pipe, err_pipe = _trace_decode(args, tty=False)
        assert b"trace-decode: [" in err_tty and err_tty.endswith(b"\r\x1b[K"), args
        assert err_pipe == b"" and out_tty == out_pipe and out_pipe, args


def test_a_long_label_keeps_the_rate_and_the_time_left():
    """On an 80-column terminal, trace-launch's line after the program exits left the rate
    and the time left past the edge ("...: 4%  12.1 MiB of 299.3 MiB" and no more): the
    total goes first, the percentage still says it."""
    master, slave = pty.openpty()
    clock = _Clock()
    with os.fdopen(slave, "w") as stream:
        with Bar("trace-launch: program exited; decoding", stream, delay=0, clock=clock) as bar:
            clock.t = 1.0
            bar(12 << 20, 299 << 20)
            clock.t = 2.0
            bar(1000 << 20, 299_000 << 20)      # wider numbers: still one line
    text = _drain(master).decode()
    os.close(master)
    draws = [d for d in text.split("\r") if d and d != "\x1b[K"]
    assert draws[0] == ("trace-launch: program exited; decoding: 4%  12.0 MiB  12.0 MiB/s  "
                        "0:24 left\x1b[K"), draws
    assert draws[1].endswith(" left\x1b[K") and len(draws[1]) <= 80 + 2, draws
    # a short label keeps everything, the bar too (test_bar_on_a_terminal_after_the_delay)
