"""Untrusted captures (issue 20): length-field bombs built from captures/runtime-vadd by
bench/bombs.py (small generators; nothing large is committed), each decoded by the real
`trace-decode` process under an address-space limit. Each must end within the budget with
a one-line problem per fault, a non-zero exit and no traceback."""
import importlib.util
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ROOT, capture_file
from tracer.cli_common import ERR_LINE

_spec = importlib.util.spec_from_file_location("bench_bombs", ROOT / "bench" / "bombs.py")
bombs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bombs)

AS_LIMIT = 1 << 30          # 1 GiB of address space: a 2 GiB allocation fails at once
BUDGET_RSS = 512 << 20      # issue 20: 512 MiB peak RSS
BUDGET_S = 60


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


# A small Python between the test and the decode: a child's ru_maxrss starts at what its
# parent had resident when it forked (Linux records the old memory's high-water mark at
# exec), and pytest's process can hold gigabytes (1.9 GB on the GPU machine, torch loaded);
# this one holds a few MB. It writes the decode's exit status and peak RSS (KB) to argv[1].
_WAIT = ("import os, sys\n"
         "pid = os.fork()\n"
         "if pid == 0:\n"
         "    os.execv(sys.executable, [sys.executable] + sys.argv[2:])\n"
         "_, status, usage = os.wait4(pid, 0)\n"
         "with open(sys.argv[1], 'w') as f:\n"
         "    f.write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')\n")


def decode(path, *args, timeout=BUDGET_S * 2):
    """(returncode, stdout bytes, stderr text, seconds, peak RSS bytes of the decode and of
    the processes it waited for)."""
    with tempfile.TemporaryDirectory() as tmp:
        said = os.path.join(tmp, "status")
        t0 = time.monotonic()
        # its own process group: a timeout ends the decode too, not the launcher alone
        p = subprocess.Popen([sys.executable, "-c", _WAIT, said, "-m", "tracer.cli_main",
                              "trace-decode", str(path), *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=ROOT, preexec_fn=_limit,
                             start_new_session=True)
        try:
            p.stdout, p.stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise
        dt = time.monotonic() - t0
        with open(said) as f:
            rc, kb = map(int, f.read().split())
    assert p.returncode == 0, p.stderr[-2000:]      # the launcher's own
    return rc, p.stdout, p.stderr.decode("utf-8", "replace"), dt, kb * 1024


def _bounded(rc, out, err, dt, rss, want):
    assert "Traceback" not in err and "MemoryError" not in err, err[-2000:]
    assert rc == 2, (rc, err[-2000:])
    assert re.search(want, err), err[-2000:]
    for line in err.splitlines():
        assert line.startswith("trace-decode: "), line
        assert len(line) <= ERR_LINE, line[:400]
    assert dt < BUDGET_S, dt
    assert rss < BUDGET_RSS, rss



@pytest.fixture(scope="module")
def vadd():
    return bombs.load("runtime-vadd")


def test_note_bomb_two_gib(tmp_path, vadd):
    """The issue's bomb: a gzip'd capture holding one NOTE record of 2^31 bytes (a ~2 MB
    file). It was 9.0 GiB RSS, 29 s and 2 GiB of NUL bytes on stdout."""
    p = tmp_path / "synthetic-note-bomb.tlc.gz"
    p.write_bytes(bombs.text_bomb(vadd))
    assert p.stat().st_size < 4 << 20
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, r"record \d+ \(NOTE\) at offset 0x[0-9a-f]+: length "
             r"2147483648 is over the NOTE maximum of 65536 B: text of 2147483600 B cut")
    assert len(out) < 64 << 10
    assert b"\0" not in out
    assert b"2147483600 B" in out          # the note is shown elided, with its true length
    # every record of the recording around the bomb still decodes: the END is read
    assert b"exit     0" in out
    rc, out, err, dt, rss = decode(p, "--json")
    _bounded(rc, out, err, dt, rss, r"\(NOTE\)")
    assert len(out) < 4 << 20


def test_note_bomb_zstd(tmp_path, vadd):
    """The same 2^31-byte NOTE in one zstd frame (a 117 KB file): streamed the same way."""
    pytest.importorskip("zstandard")
    p = tmp_path / "synthetic-note-bomb.tlc.zst"
    p.write_bytes(bombs.text_bomb(vadd, codec="zstd"))
    assert p.stat().st_size < 1 << 20
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, r"\(NOTE\) at offset 0x[0-9a-f]+: length 2147483648 is over")
    assert b"exit     0" in out and b"\0" not in out


@pytest.mark.parametrize("tname", ["MARK", "NOTE"])
def test_text_over_maximum_keeps_head(tmp_path, vadd, tname):
    p = tmp_path / f"synthetic-{tname}.tlc.gz"
    p.write_bytes(bombs.text_bomb(vadd, tname=tname, text_len=3 << 20))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"\({tname}\) at offset 0x[0-9a-f]+: length \d+ is over "
             rf"the {tname} maximum")


def test_length_lie(tmp_path, vadd):
    """A record whose length says 2 GiB, zeros behind it: dropped after its fields, the zeros
    skipped as a hole, streaming."""
    p = tmp_path / "synthetic-length-lie.tlc.gz"
    p.write_bytes(bombs.length_lie(vadd))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, r"length 2147483640 but its fields take \d+ B")
    assert "zero-filled hole" in err


@pytest.mark.parametrize("tname,field,count", [
    ("SUBMISSION", "nsegments", (1 << 27) // 16), ("SUBMISSION", "nentries", (1 << 27) // 8),
    ("API_ENTER", "nsections", 65535), ("IOCTL", "nbufs", 1 << 20)])
def test_count_bombs(tmp_path, vadd, tname, field, count):
    """A count over 128 MiB of zeros (zeros parse as empty items): refused by the count
    maximum or by the fields/frame check, within the budget."""
    p = tmp_path / f"synthetic-count-{tname}-{field}.tlc.gz"
    length = 4 << 20 if tname == "IOCTL" else 1 << 27
    p.write_bytes(bombs.count_bomb(vadd, tname=tname, field=field, count=count, length=length))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"\({tname}\) at offset 0x[0-9a-f]+: ")


def test_record_over_kind_maximum_is_skipped(tmp_path, vadd):
    """An IOCTL record framed at 64 MiB (over its 4 MiB maximum): skipped without being read
    into memory, and the records after it still decode."""
    p = tmp_path / "synthetic-ioctl-big.tlc.gz"
    length = 64 << 20     # its arg copies (before, after) fill the frame: the fields are whole
    p.write_bytes(bombs.count_bomb(vadd, tname="IOCTL", field="arg_size",
                                   count=(length - 80) // 2, length=length))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, r"\(IOCTL\) at offset 0x[0-9a-f]+: length 67108864 is over "
             r"the IOCTL maximum of 4194304 B: record skipped")
    assert b"exit     0" in out


def test_body_problem_says_why(tmp_path, vadd):
    """No bare exception class name: a body that does not parse says what ran out."""
    from decoders.capture.reader import CaptureReader
    import io
    sp = bombs.spans(vadd)
    off, length, _ = next(s for s in sp if s[2] == 5)          # an IOCTL record
    data = bytearray(vadd)
    # its path_len one larger: the path runs into the fields after it, and they past the end
    import struct
    struct.pack_into("<I", data, off + 40 + 36, struct.unpack_from("<I", data, off + 76)[0] + 4096)
    r = CaptureReader(io.BytesIO(bytes(data)))
    list(r.records())
    msgs = [str(p) for p in r.problems if "does not parse" in str(p)]
    assert msgs, [str(p) for p in r.problems]
    assert "runs past the end of the record" in msgs[0], msgs[0]
    assert not re.search(r"\((StreamError|error|ValueError)\)", msgs[0])


@pytest.mark.parametrize("what,data,words", [
    ("directory", None, "is a directory, not a trace-launch capture: expected a capture"),
    ("empty", b"", "not a trace-launch capture: an empty file"),
    ("text", b"hello\n", "not a trace-launch capture: text, magic"),
    ("elf", b"\x7fELF\x02\x01\x01\x00" + bytes(56), "not a trace-launch capture: an ELF file"),
    ("json", b'{"meta": {}}', "JSON text (a --json report is not a capture)"),
    # issue 27: these were called "text" (zeros and control bytes decode as UTF-8)
    ("zeros", bytes(4096), "not a trace-launch capture: zero bytes (the first "),
    ("control", b"\x01\x02\x03\x04\x05\x06\x07\x08" * 8,
     "not a trace-launch capture: binary data that is not a capture"),
])
def test_not_a_capture_says_what(tmp_path, what, data, words):
    """`trace-decode DIR` or a file that is not a capture: one line naming what the input
    is not and what was expected (it was click's `Usage: trace-decode report ...`, a
    subcommand the user never typed)."""
    if data is None:
        p = tmp_path / "rec"
        p.mkdir()
        (p / "capture.tlc.gz").write_bytes(b"")
    else:
        p = tmp_path / f"synthetic-{what}.tlc"
        p.write_bytes(data)
    for args in ([p], ["timeline", p], ["diff", p]):
        r = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", *map(str, args)],
                           capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert r.returncode == 2
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert words in lines[0] and "Usage" not in lines[0], lines[0]
        assert "expected a capture written by trace-launch" in lines[0]
        if data is None:
            assert lines[0].endswith(f"{p / 'capture.tlc.gz'} is one")


def test_many_records_stop_at_the_entry_limit(tmp_path, vadd):
    """300,000 NOTE records (a 130 KB gzip file): the decoder keeps an entry per record, so
    it stops at KEPT_ENTRIES with one line, within the budget."""
    from decoders.session import KEPT_ENTRIES
    p = tmp_path / "synthetic-many-notes.tlc.gz"
    p.write_bytes(bombs.many_records(vadd, n=300_000))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"decoding stopped at record \d+: the capture has more "
             rf"than {KEPT_ENTRIES} ioctl, mmap, open, mark and note records")
    assert "cut short" not in err


def test_big_ioctl_bodies_are_not_all_kept(tmp_path, vadd):
    """600 ioctls with 1 MiB argument copies (a 1.3 MB file; it was 1.27 GB RSS), after the
    recording's own. A decode that keeps every entry (the JSON) writes those past its first
    few to its file without their bodies (what the views read of a body is taken as it is
    decoded: decoders/ioctl.py facts), so nothing is lost and nothing is reported; the text
    report, a brief decode, counts them and keeps none. Both within the budget."""
    p = tmp_path / "synthetic-big-ioctls.tlc.gz"
    p.write_bytes(bombs.big_ioctls(vadd, n=600))
    rc, out, err, dt, rss = decode(p, "--json")
    assert rc == 0 and not err, (rc, err[-2000:])
    assert dt < BUDGET_S and rss < BUDGET_RSS, (dt, rss)
    stats = json.loads(out)["stats"]
    assert stats["ioctls"] > 600
    # each big one decoded (a NV_ESC_SYS_PARAMS), counted with the recording's own
    from decoders.session import decode_capture
    from tracer.report_json import coverage_stats
    own = coverage_stats(decode_capture(capture_file("runtime-vadd")))
    assert stats["params_opaque"] == own["params_opaque"]
    assert stats["params_decoded"] > own["params_decoded"]
    rc, out, err, dt, rss = decode(p)
    assert rc == 0 and not err, (rc, err[-2000:])
    assert b"exit     0" in out and dt < BUDGET_S and rss < BUDGET_RSS
    n = sum(int(line.split()[0]) for line in out.decode().split("ioctls by device file\n")[1]
            .split("ioctls by escape")[0].splitlines() if line.strip())
    assert n > 600          # every ioctl counted


def test_ioctl_bodies_kept_in_memory_are_bounded(monkeypatch):
    """The bodies of the entries kept in memory count against KEPT_BYTES: past it they are
    dropped and one line says so, and what the views read of them (their facts, the naming
    coverage) stays whole."""
    import decoders.session.budget as B
    from decoders.session import decode_capture
    from tracer.report_json import coverage_stats
    path = capture_file("torch-small")
    whole = decode_capture(path, keep=None)
    monkeypatch.setattr(B, "KEPT_BYTES", 64 << 10)
    cut = decode_capture(path, keep=None)
    said = [str(x) for x in cut.problems if "ioctl bodies and strings" in str(x)]
    assert len(said) == 1 and "keep their summary and names, not their bodies" in said[0]
    dropped = [i for i in cut.ioctls if i["_body"] is None]
    assert 0 < len(dropped) < len(cut.ioctls)
    assert all(i["_facts"] is not None for i in cut.ioctls)
    assert coverage_stats(cut) == coverage_stats(whole)


def test_big_submissions(tmp_path, vadd):
    """20 SUBMISSION records with a 16 MiB segment of zeros each (a 360 KB file): spilled in
    small batches, a run of zero words is one NOP packet; no problem (the records are
    well formed), within the budget (40 of them took 2.0 GB)."""
    p = tmp_path / "synthetic-big-submissions.tlc.gz"
    p.write_bytes(bombs.big_submissions(vadd, n=20))
    for args in ((), ("--json",)):
        rc, _, err, dt, rss = decode(p, *args)
        assert rc == 0, err[-2000:]
        assert "Traceback" not in err
        assert rss < BUDGET_RSS, rss


def test_zero_run_is_one_nop():
    from decoders.pushbuf import NOP, decode_dump, encode, pack_words, INC
    words = [0] * 100000 + encode(INC, 1, 0x2B4, [5]) + [0, 0]
    r = decode_dump(pack_words(words), launches=False)
    assert [(p.form, p.offset) for p in r.methods] == [(NOP, 0), ("INC", 400000), (NOP, 400008)]


def test_segment_of_one_word_packets(tmp_path, vadd):
    """SUBMISSIONs whose 4 MiB segment (the shim's MAX_SEG) is 1 M one-word IMMD headers: a
    packet each was 666 MB per segment; decoding stops at MAX_PACKETS with a problem."""
    from decoders.pushbuf import HEADER, MAX_PACKETS
    word = HEADER.build(SEC_OP=4, METHOD_COUNT=1, METHOD_SUBCHANNEL=1, METHOD_ADDRESS=0x40)
    word = word[0] if isinstance(word, list) else word
    p = tmp_path / "synthetic-immd-segments.tlc.gz"
    p.write_bytes(bombs.big_submissions(vadd, n=8, seg_size=4 << 20, word=word))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"more than {MAX_PACKETS} method packets in one piece of "
             rf"pushbuffer: the remaining \d+ bytes not decoded")


def test_big_module_images(tmp_path, vadd):
    """8 module loads whose image (a real cubin) is padded to 60 MiB: past KEPT_IMAGES the
    images are not kept, one line says so (8 x 100 MiB took 549 MB)."""
    from decoders.session import KEPT_IMAGES
    p = tmp_path / "synthetic-big-images.tlc.gz"
    p.write_bytes(bombs.big_images(vadd, n=8))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"module images pass {KEPT_IMAGES >> 20} MiB in all")
    assert b"exit     0" in out


def test_skipped_bytes_budget(tmp_path, vadd):
    """Five 2 GiB NOTE records (10 GiB of zeros in one zstd frame): each is read past, and
    past MAX_SKIPPED (8 GiB) decoding stops with one line instead of going on for minutes."""
    pytest.importorskip("zstandard")
    from decoders.capture.reader import MAX_SKIPPED
    p = tmp_path / "synthetic-notes-10g.tlc.zst"
    p.write_bytes(bombs.repeated_text_bomb(vadd, n=5))
    rc, out, err, dt, rss = decode(p)
    _bounded(rc, out, err, dt, rss, rf"decoding stopped at offset 0x[0-9a-f]+: more than "
             rf"{MAX_SKIPPED >> 30} GiB of the capture were holes, garbage or records over "
             rf"their maximum")
    assert err.count("is over the NOTE maximum") == 5       # the fifth passes 8 GiB
    assert "cut short" not in err


def test_fuzz_bomb_mutator(monkeypatch):
    """bench/fuzz.py's bomb kind: capture bombs are gzip files that inflate to a capture
    declaring a large record, count or length, or (where the capture carries a module image)
    the capture with an image bomb (tests/test_fuzz_image_bombs.py); on cubins it calls the
    image_bomb hook."""
    import gzip
    import random
    import struct as st
    spec = importlib.util.spec_from_file_location("bench_fuzz_u", ROOT / "bench" / "fuzz.py")
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    from decoders.capture import format as F
    base = fuzz.Base("capture", "runtime-vadd", bombs.load("runtime-vadd"))
    rng = random.Random(3)
    kinds = set()
    for _ in range(6):
        data, desc = fuzz.bomb(rng, base)
        if desc.startswith("image"):
            assert data[:8] == F.TL_MAGIC, desc
            kinds.add("image")
            continue
        assert data[:2] == b"\x1f\x8b", desc
        with gzip.open(io.BytesIO(data)) as f:
            head = f.read(F.TL_HEADER_SIZE)
        assert head[:8] == F.TL_MAGIC
        cursor, = st.unpack_from("<Q", head, F.TL_CURSOR_OFFSET)
        assert cursor > len(base.data), desc          # the bomb really adds bytes
        kinds.add(desc.split()[0])
    assert len(kinds) >= 2, kinds
    cubin = fuzz.Base("cubin", "c", (ROOT / "tests" / "fixtures" / "cubins" /
                                      "shapes.sm_90.cubin").read_bytes())
    monkeypatch.setattr(fuzz.mutators, "image_bomb", lambda rng, base: (b"BOMB", "hook"))
    assert fuzz.bomb(rng, cubin) == (b"BOMB", "hook")


def test_many_marked_launches(tmp_path, vadd):
    """30,000 BEGIN/END mark pairs around submissions (a 107 KB file): the report prints the
    first MAX_MARKED with their methods and says there are more; it took over 60 s."""
    from tracer.report import MAX_MARKED
    p = tmp_path / "synthetic-many-marks.tlc.gz"
    p.write_bytes(bombs.many_marks(vadd))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", str(p)],
                       capture_output=True, text=True, cwd=ROOT, timeout=BUDGET_S * 2,
                       preexec_fn=_limit)
    assert time.monotonic() - t0 < BUDGET_S
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stdout.count("\nmarked launch 1:") == MAX_MARKED
    assert f"the first {MAX_MARKED} are shown" in r.stdout


def test_identical_module_images_count_once(tmp_path, vadd):
    """The same 8 loads of one 60 MiB image (what the ranks of a job do with the libraries
    they share, issue 26): each distinct image counts once against KEPT_IMAGES, so none is
    dropped and no problem is reported, in the memory one image takes."""
    p = tmp_path / "synthetic-same-images.tlc.gz"
    p.write_bytes(bombs.big_images(vadd, n=8, distinct=False))
    rc, out, err, dt, rss = decode(p)
    assert rc == 0, err[-2000:]
    assert "module images pass" not in err
    assert b"exit     0" in out
    assert dt < BUDGET_S
    assert rss < BUDGET_RSS, rss
