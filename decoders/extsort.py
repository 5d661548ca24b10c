"""ExternalSort: items sorted by a key in bounded memory (the timeline of a long job sorts
hundreds of thousands of events: decoders/timeline.py).

Items are held RUN at a time, each run sorted and marshalled to an anonymous temporary
file in batches of BATCH; iteration merges the runs (heapq.merge), reading one batch per
run at a time. Equal keys keep the order they were added in (a sequence number follows the
key), as Python's stable sort does: a capture of any length sorts as a short one does.
Keys and payloads are what marshal takes (ints, floats, str, tuples, lists, dicts, None).
"""
import heapq
import marshal
import os
import tempfile
from itertools import count


class ExternalSort:
    RUN = 16384         # items held before a run is written: ~20 MB of timeline events
    BATCH = 256         # items per marshalled block of a run (what a merge holds of each)

    def __init__(self, run=None):
        self.run = run or self.RUN
        self._items = []
        self._seq = count()
        self._runs = []         # [[block end offsets]] of each run written
        self._file = None
        self._written = 0

    def __len__(self):
        return len(self._items) + sum(n for _, n in self._runs)

    def add(self, key, payload):
        self._items.append((key, next(self._seq), payload))
        if len(self._items) >= self.run:
            self._write_run()

    def _write_run(self):
        items = self._items
        items.sort()      # (key, seq, payload): seq is unique, payloads never compared
        self._items = []
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="trace-decode-sort-")
        ends = []
        for i in range(0, len(items), self.BATCH):
            data = marshal.dumps(items[i:i + self.BATCH])
            os.pwrite(self._file.fileno(), data, self._written)
            self._written += len(data)
            ends.append(self._written)
        self._runs.append((ends, len(items)))

    def _read_run(self, start, ends):
        fd = self._file.fileno()
        for end in ends:
            yield from marshal.loads(os.pread(fd, end - start, start))
            start = end

    def __iter__(self):
        """(key, payload) in key order, once; the sorter is empty after."""
        if not self._runs:
            items, self._items = self._items, []
            items.sort()
            for key, _, payload in items:
                yield key, payload
            return
        if self._items:
            self._write_run()
        runs, starts = [], 0
        for ends, _ in self._runs:
            runs.append(self._read_run(starts, ends))
            starts = ends[-1] if ends else starts
        try:
            for key, _, payload in heapq.merge(*runs):
                yield key, payload
        finally:
            self.close()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
        self._runs = []
        self._items = []
