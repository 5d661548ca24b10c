"""The only exception types the decoders raise (STYLE.md 14)."""


class TraceLaunchError(Exception):
    """Base of every error the library raises on purpose."""


class CaptureError(TraceLaunchError):
    """A capture file (or raw dump) is corrupt, truncated or foreign.

    The message always names the file offset, so the CLI can print it as one line.
    """

    def __init__(self, message, offset=None, record=None):
        self.offset = offset
        self.record = record
        where = []
        if record is not None:
            where.append(f"record {record}")
        if offset is not None:
            where.append(f"at offset {offset:#x}")
        self.detail = message
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class DecodeError(TraceLaunchError):
    """A structure inside a whole record could not be decoded; `path` is the dotted node path."""

    def __init__(self, message, path=None, offset=None):
        self.path = path
        self.offset = offset
        prefix = f"{path}: " if path else ""
        suffix = f" (offset {offset:#x})" if offset is not None else ""
        super().__init__(f"{prefix}{message}{suffix}")
