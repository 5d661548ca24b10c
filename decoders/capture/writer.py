"""Creating a capture (the tracer's side) and closing it with the END record.

The shim never creates or truncates the file (shim invariant I4): the tracer writes the
header here, then every traced process appends through the header's atomic cursor.
"""
import json
import os
import struct
import time

from decoders.capture import format as F


def _open_rw(path):
    """A binary file object for reading and writing `path`: through its open descriptor when
    it has one (tracer/run.py OutputPath: never reopened by name), else by name."""
    fd = getattr(path, "fd", None)
    if fd is not None:
        return os.fdopen(os.dup(fd), "r+b")
    return open(path, "r+b")


_ROOM = F.TL_HEADER_SIZE - F.TL_FILE_HEADER_FIXED    # bytes for the meta JSON


def _shortened(meta):
    return dict(meta, argv=meta.get("argv", [])[:8], truncated_meta=True)


def _meta_blob(meta):
    """The header's meta JSON, with the command line shortened to fit when it must; None
    when it does not fit even so."""
    blob = json.dumps(meta, sort_keys=True).encode()
    if len(blob) > _ROOM:
        blob = json.dumps(_shortened(meta), sort_keys=True).encode()
    return blob if len(blob) <= _ROOM else None


def create_capture(path, meta, exclusive=False):
    """Create `path` (mode 0600) with a header holding `meta` (a JSON-able dict). When `path`
    carries an open descriptor (`fd`), the header is written through it."""
    blob = _meta_blob(meta)
    if blob is None:    # keep the header fixed-size, never fail
        blob = json.dumps(_shortened(meta), sort_keys=True).encode()[:_ROOM]
    head = F.TL_FILE_HEADER.build(dict(
        version=F.TL_VERSION, header_size=F.TL_HEADER_SIZE, cursor=F.TL_HEADER_SIZE,
        t_start_ns=time.monotonic_ns(), wall_ns=time.time_ns(), tracer_pid=os.getpid(),
        flags=0, meta_len=len(blob), reserved0=0, meta=blob))
    if getattr(path, "fd", None) is not None:
        os.ftruncate(path.fd, 0)
        os.fchmod(path.fd, 0o600)
        os.pwrite(path.fd, head.ljust(F.TL_HEADER_SIZE, b"\0"), 0)
        return
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, head.ljust(F.TL_HEADER_SIZE, b"\0"))
    finally:
        os.close(fd)


def update_meta(path, **items):
    """Add items to the header metadata in place (e.g. the child's pid once known)."""
    with _open_rw(path) as f:
        f.seek(0)
        head = f.read(F.TL_HEADER_SIZE)
        fixed = F.TL_FILE_HEADER_PREFIX.parse(head)
        try:
            meta = json.loads(head[F.TL_FILE_HEADER_FIXED:F.TL_FILE_HEADER_FIXED + fixed.meta_len])
        except ValueError:      # cut to fit by create_capture (a command line of huge words)
            return False
        meta.update(items)
        blob = _meta_blob(meta)
        if blob is None:
            return False
        f.seek(F.TL_FILE_HEADER_FIXED - 8)
        f.write(struct.pack("<II", len(blob), 0))
        f.write(blob.ljust(F.TL_HEADER_SIZE - F.TL_FILE_HEADER_FIXED, b"\0"))
    return True


def append_end(path, exit_status):
    """Append the END record at the cursor and cut the file to its written length.

    Called by the tracer once the traced program has exited, so no process is writing.
    """
    with _open_rw(path) as f:
        f.seek(F.TL_CURSOR_OFFSET)
        cursor = struct.unpack("<Q", f.read(8))[0]
        body = F.TL_END.build(dict(exit_status=exit_status, reserved0=0, cursor=cursor))
        length = F.TL_RECORD_HEADER_SIZE + len(body)
        now = time.monotonic_ns()
        head = F.TL_RECORD_HEADER.build(dict(
            sync=F.TL_RECORD_SYNC, length=length, type=F.TL_REC_BY_NAME["END"],
            flags=F.TL_RF_COMPLETE, pid=os.getpid(), tid=os.getpid(), seq=0, t_start=now,
            t_end=now))
        f.seek(cursor)
        f.write(head + body)
        f.seek(F.TL_CURSOR_OFFSET)
        f.write(struct.pack("<Q", cursor + length))
        f.truncate(cursor + length)


# ---- the tracer's exit step: each distinct module image once, then zstd (issue 17) -------

# fast: 20.7 MB launch-loop-10k -> 0.81 MB in 13 ms (level 3: 0.77 MB in 21 ms)
ZSTD_LEVEL = 1


def _record_walk(data, start, end):
    """(offset, length, type, flags) of each record framed by its sync word and length, from
    `start`; stops at the first one that does not frame (its bytes are then copied as they
    are: nothing after a hole is rewritten)."""
    from decoders.capture.reader import _HEADER_FAST
    unpack = _HEADER_FAST[0].unpack_from if _HEADER_FAST else None
    off, hsize = start, F.TL_RECORD_HEADER_SIZE
    while off + hsize <= end:
        if unpack is not None:
            sync, length, rtype, flags = unpack(data, off)[:4]
        else:
            h = F.TL_RECORD_HEADER.parse(data[off:off + hsize])
            sync, length, rtype, flags = h.sync, h.length, h.type, h.flags
        if sync != F.TL_RECORD_SYNC or length < hsize or length % F.TL_ALIGN or \
                off + length > end:
            return
        yield off, length, rtype, flags
        off += length


def _with_image_section(data, off, body, image_tag, section):
    """The API_ENTER record at `off` with its IMAGE section replaced by `section`."""
    sections = [section if s["tag"] == image_tag else s for s in body["sections"]]
    new = F.TL_API.build(dict(body, nsections=len(sections), sections=sections))
    new += bytes(-len(new) % F.TL_ALIGN)
    hdr = F.TL_RECORD_HEADER.parse(data[off:off + F.TL_RECORD_HEADER_SIZE])
    return F.TL_RECORD_HEADER.build(dict(hdr, length=F.TL_RECORD_HEADER_SIZE + len(new))) + new


def capture_gpus(meta):
    """Compute capabilities (90 for "9.0") of every GPU the tracer saw, or None when the
    capture does not say (then no fatbin entry is left out)."""
    try:
        sms = [int(a) * 10 + int(b) for a, b in
               (str(cc).split(".")[:2] for cc in meta["compute_capabilities"])]
    except (KeyError, TypeError, ValueError):
        return None
    return sms or None


def _plan(data, header, sms=None):
    """{old offset: (old length, new record bytes)} for each rewritten image record (a
    repeated image's becomes an IMAGE_REF to the first copy; a first copy loses the fatbin
    entries no GPU in `sms` runs) and the END record, the bytes saved, and counts."""
    import hashlib

    from construct import Struct
    from decoders.capture.reader import _FAST
    from decoders.cubin import image_for_gpus
    from decoders.cuda import api as A
    slot_of = Struct(*F.TL_API.subcons[:1]).compile()
    parse_api = _FAST.get("API_ENTER") or (lambda b: (F.TL_API.parse(b), None))
    load_slots = {f.slot for f in A.FUNCTIONS if f.kind == "LOAD_IMAGE"}
    image_tag, ref_tag = A.SECTION_BY_NAME["IMAGE"], A.EXIT_STEP_SECTION_BY_NAME["IMAGE_REF"]
    flag = {v: k for k, v in A.SECTION_FLAGS.items()}
    skip = flag["UNREADABLE"] | flag["TRUNCATED"]
    elided_flag = A.EXIT_STEP_SECTION_FLAG_BY_NAME["ENTRIES_ELIDED"]
    api_enter, end_type = F.TL_REC_BY_NAME["API_ENTER"], F.TL_REC_BY_NAME["END"]
    body_at = F.TL_RECORD_HEADER_SIZE
    plan, firsts, saved = {}, {}, 0
    st = {"images": 0, "images_repeated": 0, "images_elided": 0, "entries_elided": 0,
          "elided_bytes": 0}
    for off, length, rtype, _ in _record_walk(data, header.header_size, len(data)):
        if rtype == end_type:
            end = F.TL_END.parse(data[off + body_at:off + length])
            new_end = F.TL_END.build(dict(end, cursor=off - saved))
            plan[off] = (length, data[off:off + body_at] + new_end)
            continue
        if rtype != api_enter or slot_of.parse(data[off + body_at:off + body_at + 4]).slot \
                not in load_slots:
            continue
        body = parse_api(bytes(data[off + body_at:off + length]))[0]
        for s in body["sections"]:
            if s["tag"] != image_tag or s["flags"] & flag["UNREADABLE"] or not s["size"]:
                continue
            st["images"] += 1
            key = (hashlib.sha256(s["data"]).digest(), s["size"])
            first = firsts.get(key)
            if first is None:
                image, dropped = (s["data"], []) if s["flags"] & skip or not sms else \
                    image_for_gpus(bytes(s["data"]), sms)
                if dropped:
                    rec = _with_image_section(data, off, body, image_tag, dict(
                        s, data=image, size=len(image), flags=s["flags"] | elided_flag))
                    plan[off] = (length, rec)
                    st["images_elided"] += 1
                    st["entries_elided"] += len(dropped)
                    st["elided_bytes"] += sum(n for _, n in dropped)
                firsts[key] = (off - saved, len(image), s["flags"] | (elided_flag if dropped else 0))
                saved += length - len(plan[off][1]) if dropped else 0
                break
            at, size, flags = first
            ref = F.TL_IMAGE_REF.build(dict(offset=at, size=size))
            rec = _with_image_section(data, off, body, image_tag, dict(
                tag=ref_tag, size=len(ref), flags=flags, full_size=s["full_size"], data=ref))
            plan[off] = (length, rec)
            saved += length - len(rec)
            st["images_repeated"] += 1
            break       # (one IMAGE section per record)
    return plan, saved, st


def _header_meta(data, header):
    try:
        meta = json.loads(bytes(data[F.TL_FILE_HEADER_FIXED:
                                     F.TL_FILE_HEADER_FIXED + header.meta_len]))
    except (ValueError, UnicodeDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def compact_capture(path, compress=True, threads=-1, all_entries=False):
    """Rewrite the capture at `path` in place, once no process writes it: each distinct
    module image is kept once (a repeated one's record gets an IMAGE_REF to the first copy;
    format version TL_VERSION_IMAGE_REFS), then the whole file is zstd-compressed (level
    ZSTD_LEVEL, `threads` workers; the reader reads it as it is) unless compress=False.
    When compressing, a fatbin image also loses the entries no GPU of the capture runs
    (decoders/cubin image_for_gpus; the GPUs are the header's `compute_capabilities`)
    unless all_entries. The new file replaces the old by rename, mode 0600. Returns
    {raw_bytes, bytes, images, images_repeated, images_elided (distinct images that lost
    entries), entries_elided, elided_bytes, compressed}."""
    import mmap
    from decoders.capture.reader import CaptureReader
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < F.TL_HEADER_SIZE:
            return {"raw_bytes": size, "bytes": size, "images": 0, "images_repeated": 0,
                    "images_elided": 0, "entries_elided": 0, "elided_bytes": 0,
                    "compressed": False}
        CaptureReader(f)    # a header the reader takes, or its one-line CaptureError
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(data)
    try:
        header = F.TL_FILE_HEADER_PREFIX.parse(data[:F.TL_FILE_HEADER_FIXED])
        sms = capture_gpus(_header_meta(data, header)) if compress and all_entries is False else None
        plan, saved, counts = _plan(data, header, sms)
        stats = {"raw_bytes": size, "bytes": size - saved, "compressed": bool(compress), **counts}
        repeats = counts["images_repeated"]
        if not repeats and not compress:
            return stats
        head = F.TL_FILE_HEADER_PREFIX.build(dict(
            header, version=F.TL_VERSION_IMAGE_REFS if repeats else header.version,
            cursor=header.cursor - saved if header.cursor == size else header.cursor))
        tmp = f"{path}.compact{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            with open(fd, "wb", closefd=True) as out:
                sink = out
                if compress:
                    import zstandard
                    sink = zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=threads) \
                        .stream_writer(out, closefd=False)
                sink.write(head)
                pos = len(head)
                for off in sorted(plan):
                    length, rec = plan[off]
                    sink.write(view[pos:off])
                    sink.write(rec)
                    pos = off + length
                sink.write(view[pos:])
                if compress:
                    sink.flush(zstandard.FLUSH_FRAME)
                    sink.close()
                out.flush()
                stats["bytes"] = out.tell()
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return stats
    finally:
        view.release()
        data.close()
