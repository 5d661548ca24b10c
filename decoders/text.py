"""Strings from a capture, made safe to print (issue 20) and short enough to read (issue 16).

A capture is untrusted input: its argv, paths, kernel names, notes and environment may hold
terminal control sequences (ESC[31m, ESC]0;TITLE BEL) or newlines. `printable` shows every
character that is not printable as an escape, the way strace does (`\\x1b`, `\\n`, `\\t`),
so a value is always one piece of one line and nothing from a capture drives the terminal.
JSON output keeps the true strings (JSON escapes control characters itself).

`clip` cuts a long value with a marker that shows its true length; `MAX_LINE` is the
longest line a text report writes (issue 16).
"""
import re

MAX_LINE = 300                  # no line of a text report is longer (issue 16)
ELLIPSIS = "..."

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\v": "\\v", "\f": "\\f", "\b": "\\b",
          "\a": "\\a", "\0": "\\0"}
# C0, DEL, C1 controls; format characters such as bidi overrides (U+202A-E, U+2066-9) and
# separators are caught by str.isprintable below, this is the fast pre-check.
_UNSAFE = re.compile(r"[^\x20-\x7e]")


def _escape_char(ch):
    e = _NAMED.get(ch)
    if e is not None:
        return e
    if ch.isprintable():
        return ch
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def printable(value, limit=None, length=None):
    """`value` (str or bytes; bytes are UTF-8, odd bytes shown as \\xNN) with every
    non-printable character escaped. `limit`: cut to about that many characters, with a
    marker giving the true length; `length`: the true length when `value` is already a
    cut (a NOTE the reader kept the head of)."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8", "backslashreplace")
    elif not isinstance(value, str):
        value = str(value)
    unit = "chars" if length is None else "B"
    full = len(value) if length is None else max(length, len(value))
    cut = full > len(value)
    if limit is not None and len(value) > limit:
        value, cut = value[:limit], True
    if _UNSAFE.search(value):
        value = "".join(c if "\x20" <= c <= "\x7e" else _escape_char(c) for c in value)
        if limit is not None and len(value) > limit:
            value, cut = value[:limit], True
    if cut:
        return f"{value}{ELLIPSIS}[{full} {unit}]"
    return value


def clip(line, limit=MAX_LINE):
    """A line cut to `limit` characters with the true length shown (for lines built from
    several values; each capture string in it has already been through printable)."""
    if len(line) <= limit:
        return line
    marker = f"{ELLIPSIS}[{len(line)} chars]"
    return line[:max(limit - len(marker), 0)] + marker


_C0 = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_SGR = re.compile(r"\x1b\[(?:0|1|2|31)m")     # the report's own (tracer/report.py Style)


def safe_output(text, color=False):
    """The last guard before a stream: every control character but the newline escaped. With
    `color`, the report's own SGR colour sequences (ESC [ digits m) pass; nothing else does.
    Capture strings are escaped where they are rendered (printable); this catches any path
    that missed it, so no ESC or BEL from a capture reaches the terminal."""
    if not _C0.search(text):
        return text
    if color:
        parts = _SGR.split(text)
        sgrs = _SGR.findall(text)
        out = [_C0.sub(lambda m: _escape_char(m.group()), parts[0])]
        for s, p in zip(sgrs, parts[1:]):
            out.append(s)
            out.append(_C0.sub(lambda m: _escape_char(m.group()), p))
        return "".join(out)
    return _C0.sub(lambda m: _escape_char(m.group()), text)


class TextOut:
    """A text stream for a report: every write goes through safe_output, and each line is
    cut to `limit` characters (None: not cut) with its true length shown. Lines are held
    until their newline (flush writes a partial one)."""

    def __init__(self, stream, color=False, limit=MAX_LINE):
        if isinstance(stream, TextOut):     # already guarded: keep the outer settings
            stream._spill()                 # what it holds goes first
            stream = stream._stream
        self._stream = stream
        self._color = color
        self._limit = limit
        self._line = []
        self._done = []         # whole lines not yet handed to the stream
        self._size = 0

    BATCH = 1 << 16     # characters of whole lines written to the stream at once

    def write(self, text):
        if "\n" not in text:
            self._line.append(text)
            return len(text)
        *lines, rest = text.split("\n")
        lines[0] = "".join(self._line) + lines[0]
        self._line = [rest] if rest else []
        done = "".join(self._out(line) + "\n" for line in lines)
        self._done.append(done)
        self._size += len(done)
        if self._size >= self.BATCH:    # a report of 300,000 lines: a write per batch
            self._spill()
        return len(text)

    def _out(self, line):
        line = safe_output(line, self._color)
        if self._limit is not None and len(line) > self._limit:
            if self._color:
                line = _SGR.sub("", line)
            line = clip(line, self._limit)
        return line

    def _spill(self):
        if self._done:
            self._stream.write("".join(self._done))
            self._done, self._size = [], 0

    @property
    def limit(self):
        return self._limit

    def write_made(self, text):
        """Write whole lines another TextOut with these settings already made (escaped and
        cut): a report's part rendered by a worker process."""
        if self._line:      # a partial line first, as it is (never between launches)
            self._done.append(self._out("".join(self._line)))
            self._line = []
        self._spill()
        self._stream.write(text)
        return len(text)

    def flush(self):
        self._spill()
        if self._line:
            self._stream.write(self._out("".join(self._line)))
            self._line = []
        return self._stream.flush()

    def isatty(self):
        return self._stream.isatty()

    def __getattr__(self, name):
        return getattr(self._stream, name)
