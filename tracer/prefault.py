"""Keep the capture file's next pages resident ahead of the shim's cursor, from the tracer.

The shim writes each record into fresh pages of the shared capture mapping. Bringing a
page into existence (allocate, zero; in a VM also the host's first touch) cost about a
microsecond per launch on the H100 machine: more than the record itself. The tracer has
nothing else to do while the program runs, so this thread grows the file and faults the
pages in (MADV_POPULATE_WRITE on its own short-lived mappings) a few MiB ahead of the
cursor; the shim then finds them in the page cache. It never writes file data: growing is
fallocate (only ever grows), and populating keeps what is there, so it cannot race the
shim's records. Any error stops the thread and leaves the shim to do it all itself.
"""
import mmap
import os
import struct
import threading

from decoders.capture import format as F

MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)   # Linux 5.14
AHEAD = 32 << 20
STEP = 4 << 20


class Prefaulter(threading.Thread):
    def __init__(self, path, ahead=AHEAD, step=STEP, period=0.002):
        super().__init__(name="trace-launch-prefault", daemon=True)
        self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        self.ahead, self.step, self.period = ahead, step, period
        self.upto = 0                    # pages below this offset have been populated
        self.error = None
        self._halt = threading.Event()

    def cursor(self):
        return struct.unpack("<Q", os.pread(self.fd, 8, F.TL_CURSOR_OFFSET))[0]

    def step_once(self):
        """Populate up to `ahead` bytes past the cursor; returns the populated end."""
        cursor = self.cursor()
        self.upto = max(self.upto, cursor - cursor % self.step)
        while self.upto < cursor + self.ahead and not self._halt.is_set():
            end = self.upto + self.step
            if os.fstat(self.fd).st_size < end:
                os.posix_fallocate(self.fd, 0, end)
            m = mmap.mmap(self.fd, self.step, offset=self.upto)
            try:
                m.madvise(MADV_POPULATE_WRITE)
            finally:
                m.close()
            self.upto = end
        return self.upto

    def run(self):
        try:
            while not self._halt.wait(self.period):
                self.step_once()
        except (OSError, ValueError) as exc:   # old kernel, full disk: the shim copes alone
            self.error = exc

    def stop(self):
        self._halt.set()
        if self.is_alive():
            self.join()
        os.close(self.fd)
