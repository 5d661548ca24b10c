"""The cuMemAlloc ranges (and cuMemMap mappings) a kernel argument may point into
(decoders/cuda/attribute.py resolve): what the capture's allocation calls made, as a launch
of a given record saw them.

A pointer is looked up by bisection over the bases of its process's ranges, not by a scan
of every range: a program that allocates without a caching allocator (PyTorch with
PYTORCH_NO_CUDA_MEMORY_CACHING=1, CuPy without its pool) or that keeps tensors alive step
after step holds thousands of ranges, and each pointer argument of each launch scanned them
all. Ranges live at one record do not overlap (the driver hands out a VA once until it is
freed), so of the ranges live at the launch's record the one with the largest base at or
below the pointer is the only one that can hold it. Ranges not live then (made after the
launch's record, or freed at or before it and not yet dropped) are passed over; there are
few, because launches are attributed soon after their calls return.
"""
import bisect
import heapq

# the fields of a range: its base, size, the call that made it, that call's record, the
# record of its free (None while live), its process
BASE, SIZE, CALL, INDEX, FREED, PID = range(6)


class Allocations:
    """add() and free() as calls return, in record order; find() per pointer, with the
    launch's record, which never goes down from one find() to the next."""

    def __init__(self):
        self._seq = 0
        self._kept = {}         # seq -> range (a list: free() sets its FREED)
        self._live = {}         # (pid, base) -> [(seq, range)] not freed yet
        self._freed = []        # heap of (record of the free, seq): dropped once passed
        self._bases = {}        # pid -> sorted [(base, seq)] of the kept ranges
        # what a memo of lookups checks (attribute.py _args): adds and frees so far, and
        # the record of the latest (a find at a later record sees all of them)
        self.version = 0
        self.changed = -1

    def __len__(self):
        return len(self._kept)

    def add(self, pid, base, size, call, index):
        self._changed(index)
        self._seq += 1
        r = [base, size, call, index, None, pid]
        self._kept[self._seq] = r
        self._live.setdefault((pid, base), []).append((self._seq, r))
        bisect.insort(self._bases.setdefault(pid, []), (base, self._seq))

    def free(self, pid, base, index):
        self._changed(index)
        for seq, r in self._live.pop((pid, base), ()):
            r[FREED] = index
            heapq.heappush(self._freed, (index, seq))

    def free_range(self, pid, base, size, index):
        """Free every live range of `pid` that starts in [base, base + size) (cuMemUnmap:
        one call may unmap several cuMemMap mappings that sit side by side)."""
        bases = self._bases.get(pid, ())
        i = bisect.bisect_left(bases, (base, -1))
        starts = set()
        while i < len(bases) and bases[i][0] < base + size:
            starts.add(bases[i][0])
            i += 1
        for start in starts:
            self.free(pid, start, index)

    def _changed(self, index):
        self.version += 1
        if index is not None and index > self.changed:
            self.changed = index

    def _drop(self, at_index):
        freed, kept = self._freed, self._kept
        while freed and freed[0][0] <= at_index:
            seq = heapq.heappop(freed)[1]
            r = kept.pop(seq, None)
            if r is not None:
                bases = self._bases[r[PID]]
                del bases[bisect.bisect_left(bases, (r[BASE], seq))]

    def find(self, value, at_index, pid):
        """The range live at record `at_index` that holds `value`, of process `pid` (None:
        any process), or None."""
        self._drop(at_index)
        if pid is None:
            return self._scan(value, at_index)
        bases = self._bases.get(pid)
        if not bases:
            return None
        kept = self._kept
        # (value, inf) sorts after every (value, seq): ranges starting at value included
        i = bisect.bisect_right(bases, (value, float("inf"))) - 1
        while i >= 0:
            r = kept[bases[i][1]]
            if r[INDEX] < at_index and (r[FREED] is None or r[FREED] > at_index) and r[SIZE]:
                return r if value < r[BASE] + r[SIZE] else None
            i -= 1
        return None

    def _scan(self, value, at_index):
        for r in self._kept.values():
            if r[BASE] <= value < r[BASE] + r[SIZE] and r[INDEX] < at_index and (
                    r[FREED] is None or r[FREED] > at_index):
                return r
        return None
