"""Opening a capture file: its bytes, gunzipped or unzstd'ed as they come."""
import gzip
import io
import os

from decoders.capture.untrusted import ZSTD_MAGIC, not_a_directory
from decoders.errors import CaptureError

GZIP_MAGIC = b"\x1f\x8b"


class _PreadFile(io.RawIOBase):
    """A file read with os.pread at its own position: a forked copy of the stream reads on
    where it was, whatever the other copy reads (a file's offset is shared across fork)."""

    def __init__(self, path):
        super().__init__()
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self.pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        data = os.pread(self.fd, len(b), self.pos)
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)

    def seek(self, offset, whence=io.SEEK_SET):
        base = (0, self.pos, os.fstat(self.fd).st_size)[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def tell(self):
        return self.pos

    def fileno(self):
        return self.fd

    def close(self):
        if not self.closed:
            os.close(self.fd)
        super().close()


class ZstdStream:
    """zstandard's stream reader with the file under it as `fileobj` (as gzip.GzipFile has
    it): how far into the file the decompression got, for progress (whole.py)."""

    def __init__(self, reader, fileobj):
        self._reader, self.fileobj = reader, fileobj
        self.read = reader.read

    def __getattr__(self, name):
        return getattr(self._reader, name)

    def close(self):
        self._reader.close()
        self.fileobj.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open_capture(path, private=False):
    """A binary stream over the capture, transparently gunzipped or unzstd'ed. A directory
    is a CaptureError that says what was expected. `private`: over a file read at its own
    position (_PreadFile): a process forked from the reader reads on apart."""
    import os
    if os.path.isdir(path):
        raise not_a_directory(path)
    raw = io.BufferedReader(_PreadFile(path)) if private else open(path, "rb")
    magic = raw.read(4)
    raw.seek(0)
    if magic[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw)
    if magic == ZSTD_MAGIC:
        try:
            import zstandard
        except ImportError as exc:
            raw.close()
            raise CaptureError("capture is zstd-compressed but the zstandard module is not "
                               "installed (pip install zstandard)", offset=0) from exc
        return ZstdStream(zstandard.ZstdDecompressor().stream_reader(raw), raw)
    return raw
