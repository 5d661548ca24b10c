"""Fuzz campaign: mutated captures, raw pushbuffer dumps and cubins/fatbins through the
whole decode path, in-process, with every allocation traced.

Inputs (all synthetic mutants of real bytes):
  capture   windows of the recordings in captures/*/capture.tlc.{gz,zst} (decompressed): the
            file header, the first records, the records around the last submission,
            the API_ENTER/API_EXIT records, END. Decoded with decoders.session.decode_capture,
            then tracer.report.to_json + render_text into a StringIO, and decoded again
            brief (decode_capture(brief=2)): its text report and counts must be the full
            decode's (a difference is a finding, AssertionError); the API records are
            also fed to decoders.cuda.calls.ApiCalls (not yet wired into the session) and
            every IMAGE section they carry to decoders.cubin.find_cubins.
  dump      raw pushbuffer segments cut from the recordings' SUBMISSION records, decoded
            with decoders.pushbuf.decode_dump (the `trace-decode pushbuffer` path) and the
            launch decoder.
  cubin     tests/fixtures/cubins/* (cubins, fatbins, a host executable) and the module
            images carried in API_ENTER IMAGE sections: find_cubins + kernels_json +
            sass_listing (nvdisasm off).

Mutations (bench/mutators.py): random bytes (whole file, tail after a good header, a span overwritten, random
bodies behind valid sync words), truncation at every record boundary (a systematic sweep)
and at random points, bit flips (half aimed at record headers), and absurd lengths and
counts: a length/count field overwritten with a huge value. The field offsets come from
the construct declarations (decoders/capture/format.py for captures, decoders/cubin/
fatbin.py for fatbins, the pushbuffer header field table decoders/pushbuf.py HEADER), not
from hand-written offsets: `int_fields()` walks a declaration over real bytes.

Bombs (issue 20; generators in bench/bombs.py): `bomb` writes length-field bombs that really
hold what they declare, as multi-member gzip: a NOTE or MARK whose text is 64 KiB to 2 GiB
of zeros, a record whose `length` claims up to 2 GiB with zeros behind it, and count fields
(nentries, nsegments, nsections, nbufs) over up to 128 MiB of zeros. And compressed-image
bombs (mutators.image_bomb): a fatbin (a raw cubin or other image is first wrapped in a
one-entry fatbin) with one random entry's payload replaced by a zstd frame of up to 98,303
sequences of 65,539 B, a zstd frame of RLE blocks expanding to 1 MiB .. 4 GiB, an LZ4 match
whose length bytes run on (up to ~1 GiB), or random bytes flagged zstd or LZ4, declaring a
decompressed size that is tiny, about the true one, at IMAGE_DECOMPRESS_CAP, or absurd
(2^40 and up). On cubins every bomb is one; on a capture window that carries a module image
(an API_ENTER IMAGE section) half the bombs are the window with that image replaced by a
bomb fatbin, the rest length-field bombs. The result's `bombs` counts them by shape. A
bomb's memory bound is BOMB_BOUND (its compressed size says nothing of what it inflates to).

Each mutant is classified: ok, clean (a TraceLaunchError subclass; or the capture decoded
with problems, each a TraceLaunchError naming an offset), or crash (anything else,
including a problem that is not a TraceLaunchError or names no offset). The first few
crashing inputs of each signature are saved under /tmp/fuzz-crashes/.

Memory: tracemalloc runs for the whole campaign; for each mutant the traced peak above the
baseline is compared with the input's size. Bound: peak <= 64 x size + 64 MiB. Why: the
decoder keeps Python objects per record (a construct Container, dicts, bytes) whose
overhead is a constant factor of the bytes they came from (measured on the unmutated
inputs and printed as `base ratio`), plus fixed tables; an allocation sized by an
untrusted length (2^32, 2^31) costs gigabytes on a <1 MiB input and breaks any linear
bound. RLIMIT_AS is set to 6 GiB so that such an allocation fails as MemoryError (counted
as a memory violation wherever it surfaces, also inside a reported problem) instead of
swapping a shared machine. A mutant running past --timeout seconds counts as a hang.

--jobs N runs N forked worker processes, worker i with seed S*1000+i (worker_seed), each the
same campaign (--count split among them, --seconds for each); the parent merges their
results: counts summed, crash signatures merged, the maxima of the slowest input, memory
ratios and peak RSS (each worker's own), and every worker's seed. --jobs 1 (the default) is
the one-process campaign with seed S.

usage: python3 bench/fuzz.py [--seconds 600 | --count N] [--seed S] [--jobs N] [--out FILE]
writes bench/results-fuzz-<date>.json (or --out) and prints a summary.
"""
import argparse
import io
import json
import os
import random
import re
import resource
import signal
import struct
import sys
import time
import traceback
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))      # bombs.py, mutators.py

from construct import (Aligned, Array, Bytes, Const, Container, FormatField,  # noqa: E402
                       Renamed, Struct, evaluate)

from decoders.capture import format as F  # noqa: E402
from decoders.errors import TraceLaunchError  # noqa: E402

import bombs  # noqa: E402
import mutators  # noqa: E402
from mutators import (KINDS, absurd_values, bomb, image_bomb, make_capture,  # noqa: E402,F401
                      mutate, reframe)

CAPTURES = ROOT / "captures"
FIXTURES = ROOT / "tests" / "fixtures" / "cubins"
CRASH_DIR = Path("/tmp/fuzz-crashes")
MIB = 1 << 20
MEM_FACTOR, MEM_SLACK = 64, 64 * MIB
BOMB_BOUND = 400 * MIB     # traced Python memory of one bomb (issue 20: 512 MiB RSS in all)
OFFSET = re.compile(r"offset (0x[0-9a-f]+|\d+)")
# A field is a length or count when its declared name says so (format.py names them so).
LENGTH_NAME = re.compile(r"(_len|length|size|count|^n[a-z]+|cursor|^lost)$")


# ---- declarations -> field offsets ---------------------------------------------------------

def int_fields(con, data, path=""):
    """[(dotted path, offset, width in bytes, value)] of every integer field of the construct
    declaration `con` laid over `data` (real bytes that parse), walking Structs, Arrays and
    padded byte strings the way construct's parser does."""
    out = []
    stream = io.BytesIO(bytes(data))
    _walk(con, stream, Container(), path, out)
    return out


def _walk(con, stream, ctx, path, out):
    if isinstance(con, Renamed):
        return _walk(con.subcon, stream, ctx, f"{path}.{con.name}" if path else con.name, out)
    if isinstance(con, Struct):
        new = Container(_=ctx, _io=stream)
        for sc in con.subcons:
            value = _walk(sc, stream, new, path, out)
            if sc.name:
                new[sc.name] = value
        return new
    if isinstance(con, Array):
        return [_walk(con.subcon, stream, ctx, f"{path}[{i}]", out)
                for i in range(evaluate(con.count, ctx))]
    if isinstance(con, FormatField):
        pos = stream.tell()
        value = con.parse_stream(stream)
        out.append((path, pos, con.length, value))
        return value
    if isinstance(con, Aligned):
        start = stream.tell()
        value = _walk(con.subcon, stream, ctx, path, out)
        stream.read(-(stream.tell() - start) % con.modulus)
        return value
    if isinstance(con, (Bytes, Const)):
        return con._parsereport(stream, ctx, path)
    return con._parsereport(stream, ctx, path)


def length_fields(con, data, base=0):
    """int_fields of `con` over `data` whose name marks a length or count, offsets + base."""
    return [(p, base + off, width, v) for p, off, width, v in int_fields(con, data)
            if LENGTH_NAME.search(p.rsplit(".", 1)[-1])]


# ---- the inputs ----------------------------------------------------------------------------

def spans(data):
    """[(offset, length, type)] of each record (bench/bombs.py walks the declared headers)."""
    return bombs.spans(data)


class Base:
    """One unmutated input: bytes, and for captures the record spans and length fields."""

    def __init__(self, target, name, data):
        self.target, self.name, self.data = target, name, data
        self.spans = spans(data) if target == "capture" else []
        self.fields = self._fields()

    def _fields(self):
        d = self.data
        if self.target == "capture":
            out = [(f"file.{p}", off, w, v) for p, off, w, v in
                   length_fields(F.TL_FILE_HEADER_PREFIX, d[:F.TL_FILE_HEADER_FIXED])]
            for k, (off, length, rtype) in enumerate(self.spans):
                tname = F.TL_REC.get(rtype, "?")
                out += [(f"record[{k}].{tname}.{p}", o, w, v) for p, o, w, v in
                        length_fields(F.TL_RECORD_HEADER, d[off:off + 40], off)]
                if tname in F.BODY:
                    out += [(f"record[{k}].{tname}.{p}", o, w, v) for p, o, w, v in
                            length_fields(F.BODY[tname], d[off + 40:off + length], off + 40)]
            return out
        if self.target == "cubin":
            return cubin_fields(d)
        return []


def window(data, head=24, subs=24):
    """A capture of the recording `data`'s header, its first `head` records, the records
    around its last submission, its first and last 12 API records, and END."""
    sp = spans(data)
    recs = [data[o:o + n] for o, n, _ in sp]
    sub = [k for k, s in enumerate(sp) if F.TL_REC.get(s[2]) == "SUBMISSION"]
    api = [k for k, s in enumerate(sp) if F.TL_REC.get(s[2], "").startswith("API_")]
    last = sub[-1] if sub else len(sp) - 1
    keep = sorted(set(range(min(head, len(sp))))
                  | set(range(max(0, last - subs + 3), min(len(sp), last + 3)))
                  | set(api[:12] + api[-12:]) | {len(sp) - 1})
    return make_capture(data[:sp[0][0]], [recs[k] for k in keep])


def load_bases(window_head=24, window_subs=24):
    """name -> Base for every capture window, dump and cubin."""
    from decoders.capture.reader import CaptureReader
    bases = []
    images, segments = [], []
    from decoders.capture.files import open_capture
    for d in sorted(CAPTURES.glob("*/capture.tlc.gz")) + sorted(CAPTURES.glob("*/capture.tlc.zst")):
        name = d.parent.name
        if name == "launch-loop-10k":        # 17 MiB of the same launch: windows of others suffice
            continue
        with open_capture(d) as f:
            data = f.read()
        bases.append(Base("capture", f"{name}-window", window(data, window_head, window_subs)))
        reader = CaptureReader(io.BytesIO(data))
        for rec in reader.records():
            if rec.type == "SUBMISSION" and len(segments) < 400:
                for s in rec.body.segments:
                    if s.size and len(segments) < 400 and len(s.data) >= 16:
                        segments.append((f"{name}@{rec.offset:#x}", bytes(s.data)))
            if rec.type == "API_ENTER":
                for s in rec.body.sections:
                    if s.tag == 6 and len(s.data) > 64:     # decoders/cuda/api.py SECTIONS: IMAGE
                        images.append((f"{name}-image@{rec.offset:#x}", bytes(s.data)))
    seen = set()
    for name, seg in segments[::8]:
        if seg not in seen:
            seen.add(seg)
            bases.append(Base("dump", name, seg))
    for name, img in images:
        if img not in seen:
            seen.add(img)
            bases.append(Base("cubin", name, img))
    for p in sorted(FIXTURES.iterdir()):
        if p.suffix in (".cubin", ".fatbin") or p.name == "shapes_exe":
            bases.append(Base("cubin", p.name, p.read_bytes()))
    return bases


def cubin_fields(data):
    """Length/count fields of a cubin, fatbin or host ELF: the ELF header's section-table
    fields and every section header's sh_offset/sh_size (the Elf64_Shdr layout declared in
    decoders/cubin/elf.py), and the fatbin headers (decoders/cubin/fatbin.py Structs)."""
    from decoders.cubin import elf as E, fatbin as FB
    out = []
    if data[:4] == b"\x7fELF" and len(data) >= 64:
        # Elf64_Ehdr: e_shoff at 0x28 (u64); e_shentsize, e_shnum, e_shstrndx at 0x3a (u16 each)
        out += [("e_shoff", 0x28, 8, None), ("e_shentsize", 0x3a, 2, None),
                ("e_shnum", 0x3c, 2, None), ("e_shstrndx", 0x3e, 2, None)]
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shnum, = struct.unpack_from("<H", data, 0x3c)
        fmt = E._SHDR.format
        off_at = struct.calcsize(fmt[:5])      # sh_name, sh_type, sh_flags, sh_addr
        size_at = struct.calcsize(fmt[:6])
        for i in range(min(shnum, 64)):
            where = shoff + i * E.ELF64_SHDR_SIZE
            if where + E.ELF64_SHDR_SIZE <= len(data):
                out += [(f"shdr[{i}].sh_offset", where + off_at, 8, None),
                        (f"shdr[{i}].sh_size", where + size_at, 8, None)]
    start = data.find(struct.pack("<I", FB.FATBIN_MAGIC))
    while 0 <= start and len(out) < 400:
        try:
            hdr = FB.FATBIN_HEADER.parse(data[start:start + FB.FATBIN_HEADER_SIZE])
        except Exception:
            break
        out += length_fields(FB.FATBIN_HEADER, data[start:start + FB.FATBIN_HEADER_SIZE], start)
        pos, end = start + hdr.header_size, start + hdr.header_size + hdr.fat_size
        while pos + 64 <= min(end, len(data)):
            hsize, = struct.unpack_from("<I", data, pos + 4)
            if hsize < 64 or pos + hsize > len(data):
                break
            e = FB.FATBIN_ENTRY_HEADER.parse(data[pos:pos + hsize])
            out += length_fields(FB.FATBIN_ENTRY_HEADER, data[pos:pos + hsize], pos)
            pos += hsize + e.size
        start = data.find(struct.pack("<I", FB.FATBIN_MAGIC), max(end, start + 4))
    return out


# ---- running one mutant ----------------------------------------------------------------------

class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _check_problems(problems):
    for p in problems:
        if not isinstance(p, TraceLaunchError):
            raise AssertionError(f"problem is not a TraceLaunchError: {p!r}")
        if not OFFSET.search(str(p)):
            raise AssertionError(f"problem names no offset: {p}")
        if "MemoryError" in str(p):
            raise MemoryError(f"reported as a problem: {p}")


BRIEF = 2       # launches a brief decode keeps (the rest are counted, not kept)


def decode_capture_path(path):
    """The whole `trace-decode CAPTURE` path in-process, plus the API calls and their images.
    Returns the number of problems; raises what the decoders raise."""
    from decoders.capture.reader import CaptureReader, open_capture
    from decoders.cubin import find_cubins, kernels_json
    from decoders.cuda.calls import ApiCalls
    from decoders.session import decode_capture
    from tracer.report import render_text, to_json
    model = decode_capture(path)
    render_text(model, io.StringIO(), show_ioctls=True, show_objects=True, show_stats=True)
    json.dumps(to_json(model), default=str)
    _check_problems(model.problems)
    # a brief decode (what trace-decode's default text reads) reports the same text and the
    # same counts (not --stats: its naming coverage reads every ioctl, so it decodes in full)
    texts, brief = [], decode_capture(path, brief=BRIEF)
    for m in (model, brief):
        out = io.StringIO()
        render_text(m, out, launch_limit=BRIEF)
        texts.append(out.getvalue())
    if texts[0] != texts[1]:
        raise AssertionError("the brief decode's text report differs from the full decode's")
    if brief.stats() != model.stats():
        raise AssertionError("the brief decode's counts differ from the full decode's")
    n = len(model.problems)
    stream = open_capture(path)
    try:
        api = ApiCalls()
        for rec in CaptureReader(stream).records():
            if rec.type == "API_ENTER":
                c = api.enter(rec)
                c.summary()
                c.to_json()
                if c.image is not None:
                    try:
                        kernels_json(find_cubins(c.image))
                    except TraceLaunchError:
                        n += 1
            elif rec.type == "API_EXIT":
                c = api.exit(rec)
                if c is not None:
                    c.summary()
                    c.to_json()
        api.unfinished
    finally:
        stream.close()
    return n


def decode_dump_bytes(data):
    from decoders.launch import LaunchDecoder
    from decoders.pushbuf import decode_dump
    res = decode_dump(data, "hopper", va=0x200000000)
    json.loads(res.to_json())
    for p in res.problems:
        if not 0 <= p.offset <= len(data):
            raise AssertionError(f"problem offset {p.offset} outside the {len(data)}-byte dump")
    ld = LaunchDecoder()
    ld.feed_methods(res.methods)
    return len(res.problems)


def decode_cubin_bytes(data):
    from decoders.cubin import find_cubins, kernels_json, sass_listing
    found = find_cubins(data)
    kernels_json(found)
    for _, c in found:
        sass_listing(c, nvdisasm=False)
    return 0


def run_one(target, data, tmpdir, timeout):
    """(outcome, exception or None, peak bytes above the baseline, seconds)."""
    path = tmpdir / f"synthetic-fuzz-{os.getpid()}.tlc"
    if target == "capture":
        path.write_bytes(data)
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    signal.alarm(timeout)
    try:
        if target == "capture":
            nprob = decode_capture_path(path)
        elif target == "dump":
            nprob = decode_dump_bytes(data)
        else:
            nprob = decode_cubin_bytes(data)
        outcome, exc = ("clean" if nprob else "ok"), None
    except TraceLaunchError as e:
        outcome, exc = "clean", None
        if not OFFSET.search(str(e)) and getattr(e, "offset", None) is None:
            outcome, exc = "crash", AssertionError(f"TraceLaunchError without an offset: {e}")
    except Hang as e:
        outcome, exc = "hang", e
    except MemoryError as e:
        outcome, exc = "memory", e
    except Exception as e:     # noqa: BLE001 - what the campaign is looking for
        outcome, exc = "crash", e
    finally:
        signal.alarm(0)
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - before
    return outcome, exc, peak, dt


def signature(exc):
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    ours = [f for f in tb if "/decoders/" in f.filename or "/tracer/" in f.filename]
    where = ours[-1] if ours else (tb[-1] if tb else None)
    loc = f"{os.path.relpath(where.filename, ROOT)}:{where.lineno} {where.name}" if where else "?"
    return f"{type(exc).__name__} at {loc}"


# ---- the campaign ---------------------------------------------------------------------------

def campaign(seconds=None, count=None, seed=0, timeout=60, progress=True, only_kinds=None,
             tag=""):
    """One process's campaign; `tag` prefixes its progress lines and saved inputs (a worker
    of --jobs)."""
    rng = random.Random(seed)
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, resource.getrlimit(resource.RLIMIT_AS)[1]))
    signal.signal(signal.SIGALRM, _alarm)
    tmpdir = Path(os.environ.get("TMPDIR", "/tmp"))
    CRASH_DIR.mkdir(exist_ok=True)
    bases = load_bases()
    tracemalloc.start()
    # Unmutated inputs first: they must decode, and give the baseline memory ratio.
    base_ratio = 0.0
    for b in bases:
        outcome, exc, peak, _ = run_one(b.target, b.data, tmpdir, timeout)
        if outcome not in ("ok", "clean"):
            print(f"base {b.name}: {outcome} {exc!r}")
        if len(b.data) >= 64 << 10:
            base_ratio = max(base_ratio, peak / len(b.data))
    per = defaultdict(Counter)          # "target/kind" -> Counter(outcome)
    sigs = {}                           # signature -> {count, first, samples}
    worst = {"ratio": 0.0}              # peak / size, inputs of 64 KiB and more
    worst_bound = {"of_bound": 0.0}     # peak / (64 x size + 64 MiB), any input
    violations = []
    slowest = {"seconds": 0.0}
    sweep = Counter()
    shapes = Counter()                  # "target/shape" of each bomb (mutators.bomb_shape)
    targets = {t: [b for b in bases if b.target == t] for t in ("capture", "dump", "cubin")}
    weights = [("capture", 0.7), ("dump", 0.15), ("cubin", 0.15)]
    t_start = time.time()
    n = 0
    while True:
        if count is not None and n >= count:
            break
        if seconds is not None and time.time() - t_start >= seconds:
            break
        r = rng.random()
        target = "capture" if r < weights[0][1] else ("dump" if r < 0.85 else "cubin")
        base = rng.choice(targets[target])
        pool = KINDS if target == "capture" else KINDS[:-1]   # reframe: API records
        if only_kinds:
            pool = tuple(k for k in pool if k in only_kinds) or ("absurd",)
        kind = rng.choice(pool)
        if kind == "bomb" and only_kinds is None and rng.random() < 0.5:
            kind = "absurd"     # bombs take seconds each: half as often as the others
        key = (base.name, kind)
        data, desc = mutate(rng, base, kind, sweep=sweep[key])
        sweep[key] += 1
        outcome, exc, peak, dt = run_one(target, data, tmpdir, timeout)
        n += 1
        per[f"{target}/{kind}"][outcome] += 1
        if kind == "bomb":
            shapes[f"{target}/{mutators.bomb_shape(desc)}"] += 1
        size = max(len(data), 1)
        ratio = peak / size
        of_bound = peak / (MEM_FACTOR * size + MEM_SLACK)
        if of_bound > worst_bound["of_bound"]:
            worst_bound = {"of_bound": round(of_bound, 4), "peak": peak, "size": len(data),
                           "target": target, "kind": kind, "base": base.name, "mutation": desc}
        if ratio > worst["ratio"] and len(data) >= 64 << 10:
            worst = {"ratio": round(ratio, 2), "peak": peak, "size": len(data), "target": target,
                     "kind": kind, "base": base.name, "mutation": desc}
        bound = BOMB_BOUND if kind == "bomb" else MEM_FACTOR * len(data) + MEM_SLACK
        if peak > bound or outcome == "memory":
            violations.append({"peak": peak, "size": len(data), "base": base.name,
                               "kind": kind, "mutation": desc, "outcome": outcome})
            _save(f"{tag}memory-{len(violations)}", target, data)
        if dt > slowest["seconds"]:
            slowest = {"seconds": round(dt, 3), "size": len(data), "target": target,
                       "kind": kind, "base": base.name, "mutation": desc}
        if outcome in ("crash", "hang"):
            sig = signature(exc) if outcome == "crash" else f"hang over {timeout} s"
            s = sigs.setdefault(sig, {"count": 0, "samples": []})
            s["count"] += 1
            if len(s["samples"]) < 3:
                p = _save(f"{tag}crash-{len(sigs)}-{len(s['samples'])}", target, data)
                s["samples"].append({"file": str(p), "target": target, "base": base.name,
                                     "kind": kind, "mutation": desc, "error": repr(exc)[:300]})
                if s["count"] == 1:
                    print(f"{tag}CRASH {sig}: {base.name} {kind} {desc}: {exc!r}"[:400], flush=True)
                    print("".join(traceback.format_exception(exc)[-4:])[:1500], flush=True)
        if progress and n % 500 == 0:
            crashes = sum(c["crash"] for c in per.values())
            print(f"{tag}{n} mutants, {time.time() - t_start:.0f} s, {crashes} crashes, "
                  f"worst ratio {worst['ratio']}", flush=True)
    tracemalloc.stop()
    elapsed = time.time() - t_start
    totals = Counter()
    for c in per.values():
        totals.update(c)
    return {
        "tool": "bench/fuzz.py", "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "seed": seed,
        "seconds": round(elapsed, 1), "mutants": n, "mutants_per_second": round(n / elapsed, 1),
        "python": sys.version.split()[0], "bases": {t: [b.name for b in v] for t, v in targets.items()},
        "outcomes": dict(totals),
        "per_kind": {k: dict(v) for k, v in sorted(per.items())},
        "bombs": dict(sorted(shapes.items())),
        "crashes": {k: v for k, v in sorted(sigs.items(), key=lambda kv: -kv[1]["count"])},
        "memory": {"bound": f"peak <= {MEM_FACTOR} x size + {MEM_SLACK // MIB} MiB",
                   "base_ratio_unmutated": round(base_ratio, 2),
                   "worst_ratio_64k_and_up": worst, "worst_fraction_of_bound": worst_bound,
                   "violations": violations[:20], "violation_count": len(violations)},
        "slowest": slowest,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "tracebacks": sum(c["count"] for c in sigs.values()),
    }


def _save(stem, target, data):
    p = CRASH_DIR / f"{stem}.{ {'capture': 'tlc', 'dump': 'pb', 'cubin': 'bin'}[target] }"
    p.write_bytes(data)
    return p


# ---- several processes ---------------------------------------------------------------------

def worker_seed(seed, i):
    """Worker i of --jobs N runs with seed seed*1000+i (so seed 7 gives 7000, 7001, ...):
    distinct streams, and each worker's mutants can be made again alone with --seed."""
    return seed * 1000 + i


def _worker(out_path, kwargs):
    res = campaign(**kwargs)
    Path(out_path).write_text(json.dumps(res))


def run_jobs(jobs, seconds=None, count=None, seed=0, timeout=60, only_kinds=None):
    """`campaign` in `jobs` forked worker processes (worker_seed), --count split among them,
    --seconds for each; their results merged into one (merge)."""
    import multiprocessing
    import tempfile
    ctx = multiprocessing.get_context("fork")
    shares = [None] * jobs if count is None else \
        [count // jobs + (i < count % jobs) for i in range(jobs)]
    with tempfile.TemporaryDirectory(prefix="fuzz-jobs-") as tmp:
        procs = []
        for i in range(jobs):
            kw = dict(seconds=seconds, count=shares[i], seed=worker_seed(seed, i),
                      timeout=timeout, only_kinds=only_kinds, tag=f"[w{i}] ")
            path = Path(tmp) / f"worker-{i}.json"
            procs.append((i, path, ctx.Process(target=_worker, args=(path, kw))))
            procs[-1][2].start()
        results, failed = [], []
        for i, path, p in procs:
            p.join()
            if p.exitcode == 0 and path.exists():
                results.append(json.loads(path.read_text()))
            else:       # a worker that died is reported, not dropped in silence
                failed.append({"worker": i, "seed": worker_seed(seed, i), "exitcode": p.exitcode})
    if not results:
        raise SystemExit(f"every worker failed: {failed}")
    res = merge(results, seed)
    res["failed_workers"] = failed
    return res


def merge(results, seed):
    """One result from the workers': counts and per-kind outcomes summed, crash signatures
    merged (counts summed, the first samples kept), the maxima of the slowest input, the
    worst memory ratios and peak RSS, and every worker's seed."""
    out = dict(results[0])
    out.update(seed=seed, jobs=len(results), worker_seeds=[r["seed"] for r in results],
               seconds=max(r["seconds"] for r in results),
               mutants=sum(r["mutants"] for r in results))
    out["mutants_per_second"] = round(out["mutants"] / max(out["seconds"], 1e-9), 1)
    out["outcomes"] = _summed(r["outcomes"] for r in results)
    out["bombs"] = _summed(r["bombs"] for r in results)
    out["per_kind"] = {k: _summed(r["per_kind"].get(k, {}) for r in results)
                       for k in sorted({k for r in results for k in r["per_kind"]})}
    crashes = {}
    for r in results:
        for sig, v in r["crashes"].items():
            c = crashes.setdefault(sig, {"count": 0, "samples": []})
            c["count"] += v["count"]
            c["samples"] = (c["samples"] + v["samples"])[:3]
    out["crashes"] = dict(sorted(crashes.items(), key=lambda kv: -kv[1]["count"]))
    mems = [r["memory"] for r in results]
    out["memory"] = dict(
        mems[0], base_ratio_unmutated=max(m["base_ratio_unmutated"] for m in mems),
        worst_ratio_64k_and_up=max((m["worst_ratio_64k_and_up"] for m in mems),
                                   key=lambda w: w["ratio"]),
        worst_fraction_of_bound=max((m["worst_fraction_of_bound"] for m in mems),
                                    key=lambda w: w["of_bound"]),
        violations=[v for m in mems for v in m["violations"]][:20],
        violation_count=sum(m["violation_count"] for m in mems))
    out["slowest"] = max((r["slowest"] for r in results), key=lambda w: w["seconds"])
    out["peak_rss_bytes"] = max(r["peak_rss_bytes"] for r in results)
    out["tracebacks"] = sum(r["tracebacks"] for r in results)
    out["workers"] = [{k: r[k] for k in ("seed", "mutants", "seconds", "mutants_per_second",
                                         "outcomes", "peak_rss_bytes", "tracebacks")}
                      for r in results]
    return out


def _summed(counts):
    total = Counter()
    for c in counts:
        total.update(c)
    return dict(sorted(total.items()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=60, help="seconds before a mutant is a hang")
    ap.add_argument("--out", default=None)
    ap.add_argument("--kinds", default=None, help="comma-separated mutation kinds (default: all)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes; worker i uses seed SEED*1000+i (default 1: SEED)")
    args = ap.parse_args(argv)
    if args.seconds is None and args.count is None:
        args.seconds = 600
    kinds = args.kinds.split(",") if args.kinds else None
    if args.jobs > 1:
        res = run_jobs(args.jobs, args.seconds, args.count, args.seed, args.timeout, kinds)
    else:
        res = campaign(args.seconds, args.count, args.seed, args.timeout, only_kinds=kinds)
    out = Path(args.out) if args.out else ROOT / "bench" / f"results-fuzz-{time.strftime('%Y-%m-%d')}.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    seeds = f"seed {res['seed']}" + (f", workers' seeds {res['worker_seeds']}" if args.jobs > 1 else "")
    print(f"\n{res['mutants']} mutants in {res['seconds']} s ({seeds}): {res['outcomes']}")
    for k, v in res["per_kind"].items():
        print(f"  {k:28s} {v}")
    print(f"bombs: {res['bombs']}")
    if res.get("failed_workers"):
        print(f"FAILED WORKERS: {res['failed_workers']}")
    print(f"crash signatures: {len(res['crashes'])}")
    for sig, v in res["crashes"].items():
        print(f"  {v['count']:6d}  {sig}  e.g. {v['samples'][0]['file']}")
    m = res["memory"]
    print(f"memory: {m['bound']}; unmutated inputs of 64 KiB+ up to "
          f"{m['base_ratio_unmutated']} x size; violations {m['violation_count']}")
    print(f"  worst ratio (inputs >= 64 KiB): {m['worst_ratio_64k_and_up']}")
    print(f"  worst fraction of the bound: {m['worst_fraction_of_bound']}")
    print(f"slowest: {res['slowest']}")
    print(f"peak RSS of the campaign process{' (largest worker)' if args.jobs > 1 else ''}: "
          f"{res['peak_rss_bytes'] / MIB:.0f} MiB; "
          f"tracebacks {res['tracebacks']}")
    print(f"written to {out}")
    return 1 if res["crashes"] or m["violation_count"] or res.get("failed_workers") else 0


if __name__ == "__main__":
    sys.exit(main())
