"""No raw bytes from a capture on the terminal (issue 20), and readable lines (issue 16).

A synthetic capture is built from captures/runtime-vadd: its recorded argv holds ESC[31m
and an ESC]0;TITLE BEL title sequence, a NOTE and a MARK hold the same plus a newline, and
the kernel's name (in the cuModuleGetFunction call and in the cubin's symbol and section
names, same length) holds ESC ] 0 BEL. Every text view of `trace-decode` runs on it as a
subprocess whose stdout is a pipe (not a tty), and no 0x1b or 0x07 byte may reach stdout or
stderr; the strings must still be there, escaped the way strace shows them."""
import json
import struct
import subprocess
import sys

import pytest
from construct import Struct

from conftest import ROOT, capture_bytes
from decoders.capture import format as F
from decoders.text import MAX_LINE, TextOut, clip, printable, safe_output

EVIL_ARG = "\x1b[31mred\x1b]0;TITLE\x07"
EVIL_NOTE = "note \x1b[31mred\x1b]0;TITLE\x07\nsecond line"
EVIL_KERNEL = b"\x1b]0\x07"          # as long as "vadd": the cubin's offsets stay right


def _record(tname, body_values, text):
    con = F.BODY[tname]
    fixed = Struct(*con.subcons[:-1])
    body = fixed.build(body_values) + text + bytes(-len(text) % F.TL_ALIGN)
    head = F.TL_RECORD_HEADER.build(dict(
        sync=F.TL_RECORD_SYNC, length=F.TL_RECORD_HEADER_SIZE + len(body),
        type=F.TL_REC_BY_NAME[tname], flags=F.TL_RF_COMPLETE, pid=1, tid=1, seq=0,
        t_start=0, t_end=0))
    return head + body


def evil_capture():
    data = bytearray(capture_bytes("runtime-vadd"))
    fixed = F.TL_FILE_HEADER_PREFIX.parse(data[:F.TL_FILE_HEADER_FIXED])
    meta_at = F.TL_FILE_HEADER_FIXED
    meta = json.loads(bytes(data[meta_at:meta_at + fixed.meta_len]))
    meta["argv"] = meta["argv"] + [EVIL_ARG]
    meta["gpu"] = "H100 \x1b[2J"
    new = json.dumps(meta).encode()
    assert meta_at + len(new) <= fixed.header_size
    data[meta_at:meta_at + fixed.meta_len] = bytes(fixed.meta_len)
    data[meta_at:meta_at + len(new)] = new
    struct.pack_into("<I", data, 0x30, len(new))       # TL_FILE_HEADER meta_len
    body = bytes(data[fixed.header_size:]).replace(b"vadd", EVIL_KERNEL)
    data = bytes(data[:fixed.header_size]) + body
    # NOTE and MARK records before the END (the last record)
    end_at = data.rfind(struct.pack("<I", F.TL_RECORD_SYNC))
    text = EVIL_NOTE.encode()
    extra = (_record("NOTE", dict(level=1, text_len=len(text)), text)
             + _record("MARK", dict(kind=3, id=9, label_len=len(text), reserved0=0), text))
    out = bytearray(data[:end_at] + extra + data[end_at:])
    struct.pack_into("<Q", out, F.TL_CURSOR_OFFSET, len(out))
    return bytes(out)


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    p = tmp_path_factory.mktemp("evil") / "synthetic-escapes.tlc"
    p.write_bytes(evil_capture())
    return p


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", *map(str, args)],
                          capture_output=True, cwd=ROOT, timeout=300)


VIEWS = [[], ["--ioctls"], ["--objects"], ["--stats"], ["--cost"], ["--full-names"],
         ["--launch", "0"], ["--color"], ["--all-launches"]]


@pytest.mark.parametrize("args", VIEWS, ids=lambda a: " ".join(a) or "report")
def test_no_control_bytes_in_report(evil, args):
    p = _run(evil, *args)
    assert "Traceback" not in p.stderr.decode(), p.stderr.decode()[-2000:]
    assert p.returncode in (0, 2), p.stderr
    for stream in (p.stdout, p.stderr):
        if "--color" in args:   # the report's own colours only: ESC [ 0|1|2|31 m
            import re
            stream = re.sub(rb"\x1b\[(?:0|1|2|31)m", b"", stream)
        assert b"\x1b" not in stream and b"\x07" not in stream, stream[:3000]
        assert b"\x9b" not in stream
    out = p.stdout.decode()
    if args in ([], ["--full-names"]):
        # the strings are there, escaped the way strace shows them
        assert "\\x1b[31mred\\x1b]0;TITLE\\a" in out, out[:2000]
        assert "note \\x1b[31mred\\x1b]0;TITLE\\a\\nsecond line" in out
        assert "H100 \\x1b[2J" in out
        assert "\\x1b]0\\a" in out       # the kernel's name


def test_no_control_bytes_in_other_views(evil, tmp_path):
    data = evil.read_bytes()
    cubin = tmp_path / "synthetic-escapes.cubin"      # the module image the capture carries
    cubin.write_bytes(data[data.find(b"\x7fELF"):])
    for args in (["diff", evil], ["diff", evil, evil, "--launch", "0", "--launch", "0"],
                 ["sass", cubin], ["sass", cubin, "--full-names"], ["cubin", cubin],
                 ["sass", evil], ["timeline", evil]):
        p = _run(*args)
        assert "Traceback" not in p.stderr.decode(), (args, p.stderr.decode()[-2000:])
        for stream in (p.stdout, p.stderr):
            assert b"\x1b" not in stream and b"\x07" not in stream, (args, stream[:2000])
    for view in ("sass", "cubin"):
        p = _run(view, cubin)
        assert p.returncode == 0, p.stderr
        assert b"\\x1b]0\\a" in p.stdout, p.stdout[:500]


def test_json_keeps_true_strings(evil):
    p = _run(evil, "--json")
    doc = json.loads(p.stdout)
    assert doc["meta"]["argv"][-1] == EVIL_ARG
    assert [n["text"] for n in doc["notes"] if n["text"].startswith("note")] == [EVIL_NOTE]


def test_printable_and_clip():
    assert printable(EVIL_NOTE) == "note \\x1b[31mred\\x1b]0;TITLE\\a\\nsecond line"
    assert printable(b"a\xffb\x00") == "a\\xffb\\0"
    assert printable("\u202eevil\u0085") == "\\u202eevil\\x85"     # bidi override, NEL
    assert printable("x" * 1000, limit=10) == "x" * 10 + "...[1000 chars]"
    assert printable(b"\0" * 16, length=1 << 31) == "\\0" * 16 + "...[2147483648 B]"
    assert printable("plain (int, float*)") == "plain (int, float*)"
    line = "y" * 5145
    c = clip(line)
    assert len(c) == MAX_LINE and c.endswith("...[5145 chars]")
    assert safe_output("a\x1b]0;T\x07b") == "a\\x1b]0;T\\ab"
    assert safe_output("\x1b[1mhead\x1b[0m \x1b[5m", color=True) == "\x1b[1mhead\x1b[0m \\x1b[5m"


def test_textout_cuts_lines_across_writes():
    import io
    buf = io.StringIO()
    out = TextOut(buf)
    out.write("a" * 200)
    out.write("b" * 200 + "\nshort\n")
    out.write("tail")
    out.flush()
    lines = buf.getvalue().split("\n")
    assert len(lines[0]) == MAX_LINE and lines[0].endswith("...[400 chars]")
    assert lines[1:] == ["short", "tail"]
