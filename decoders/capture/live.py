"""A capture read while the traced program still writes it: trace-launch decodes as the
program runs, so its report is ready soon after the program exits (issue 17).

The shim reserves a record by moving the header's cursor, writes it, and publishes it last
by storing its `type` with release order (shim/tracelaunch.c rec_publish); a record whose
type is still 0 is being written. LiveCapture is a read-only stream over the file's
descriptor that hands out bytes only up to the end of the last published record in an
unbroken run from the start (a record not yet published stops the run: everything after
it waits), blocking while there is nothing new. Once `finished` is set (the program has
exited and the tracer has appended the END record), it reads the rest of the file as it
is, so an unpublished record (a process that died while writing it) is seen by the reader
exactly as in an offline decode.
"""
import os
import threading

from construct import ConstructError

from decoders.capture import format as F
from decoders.capture.reader import _HEADER_FAST, I_LENGTH, I_SYNC, I_TYPE

SCAN = 1 << 20      # bytes of record headers read at once while walking the published run


class LiveCapture:
    """read(n) over the capture open at `fd` (never moves the descriptor's offset: pread)."""

    live = True     # CaptureReader: no end from the header's cursor (it still moves)

    def __init__(self, fd, finished=None, poll_s=0.02):
        self.fd = fd
        self.finished = finished if finished is not None else threading.Event()
        self.poll_s = poll_s
        self.pos = 0            # next byte handed out
        self.safe = 0           # end of the published run walked so far
        self.final = False      # the writers are done: read to the end of the file

    def _header(self):
        head = os.pread(self.fd, F.TL_FILE_HEADER_FIXED, 0)
        try:
            return F.TL_FILE_HEADER_PREFIX.parse(head)
        except ConstructError:      # not (yet) a capture: the reader says so in final mode
            return None

    def _walk(self):
        """Move self.safe over records published since the last walk."""
        head = self._header()
        if head is None:
            return
        if self.safe == 0:
            self.safe = head.header_size        # written before the program started
        cursor = head.cursor
        hsize = F.TL_RECORD_HEADER_SIZE
        unpack = _HEADER_FAST[0].unpack_from
        while self.safe + hsize <= cursor:
            block = os.pread(self.fd, min(SCAN, cursor - self.safe), self.safe)
            at = 0
            while at + hsize <= len(block):
                h = unpack(block, at)
                length = h[I_LENGTH]
                if h[I_SYNC] != F.TL_RECORD_SYNC or not h[I_TYPE] or length < hsize or \
                        length % F.TL_ALIGN or self.safe + at + length > cursor:
                    self.safe += at
                    return                      # not published yet (or not a record)
                at += length        # (a published record is whole, also past this block)
            if not at:
                return
            self.safe += at

    def read(self, n=-1):
        if n is None or n < 0:
            n = 1 << 30
        while True:
            if self.final:
                data = os.pread(self.fd, n, self.pos)
                self.pos += len(data)
                return data
            if self.safe <= self.pos:
                self._walk()
            if self.safe > self.pos:
                data = os.pread(self.fd, min(n, self.safe - self.pos), self.pos)
                self.pos += len(data)
                if data:
                    return data
            if self.finished.is_set():
                self.final = True
                continue
            self.finished.wait(self.poll_s)

    def reopen(self):
        """The same capture from its start (a decode begun again: decoders/session)."""
        return LiveCapture(self.fd, self.finished, self.poll_s)

    def close(self):
        pass
