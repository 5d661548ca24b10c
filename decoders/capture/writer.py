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


def create_capture(path, meta, exclusive=False):
    """Create `path` (mode 0600) with a header holding `meta` (a JSON-able dict). When `path`
    carries an open descriptor (`fd`), the header is written through it."""
    blob = json.dumps(meta, sort_keys=True).encode()
    room = F.TL_HEADER_SIZE - F.TL_FILE_HEADER_FIXED
    if len(blob) > room:   # keep the header fixed-size: shorten the command line, never fail
        meta = dict(meta, argv=meta.get("argv", [])[:8], truncated_meta=True)
        blob = json.dumps(meta, sort_keys=True).encode()[:room]
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
        meta = json.loads(head[F.TL_FILE_HEADER_FIXED:F.TL_FILE_HEADER_FIXED + fixed.meta_len])
        meta.update(items)
        blob = json.dumps(meta, sort_keys=True).encode()
        if len(blob) > F.TL_HEADER_SIZE - F.TL_FILE_HEADER_FIXED:
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
