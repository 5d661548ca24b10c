"""SpillList: a list that keeps its first items in memory and the rest, marshalled, in an
anonymous temporary file (decoders/session keeps a capture's submissions, launches and
API calls in them)."""
import bisect
import marshal
import os
import tempfile
from array import array
from collections.abc import Sequence


class Dropped(IndexError):
    """An item a brief decode counted and did not keep (SpillList drop=True)."""


class SpillList(Sequence):
    """A list that keeps its first `keep` items in memory and writes the rest, marshalled,
    to an anonymous temporary file: a capture's submissions and launches grow with its
    length, memory must not (peak RSS stays flat, bench/decode_rss.py).

    Reading an item back gives an equal, fresh object: `dump` turns an item into data
    marshal takes (dicts, lists, ints, str, bytes), `load` turns it back. Sequence API:
    len(), [i], [a:b], iteration (any number at once: reads use os.pread), plus append().
    Items read back are copies: changing one does not change the list.

    Spilled items are marshalled BATCH at a time, one marshal.dumps per batch: the keys
    (and any object items share) are written once per batch instead of once per item,
    which halves the cost of spilling a launch summary. Reading item i loads its batch;
    items of one batch read together may share what they shared when appended.

    drop=True (a brief decode, decoders/session decode_capture): items past `keep` are
    counted, not written; only those given to pin() can be read back. Reading any other
    raises Dropped: a view that needs every item must ask for a full decode."""

    CHUNK = 1 << 20
    BATCH = 64
    BATCH_BYTES = 8 << 20    # a batch of big items is written sooner (untrusted sizes)

    def __init__(self, keep=256, dump=None, load=None, repair=None, drop=False,
                 directory=None):
        self.keep = keep
        # a file by name in `directory` (a block of a decode in blocks: the decoding process
        # adopts it, decoders/session/blocks.py) instead of an anonymous one
        self.directory = directory
        self.name = None
        self.drop = drop
        self._dropped = 0              # items counted and not kept (drop=True)
        self._pinned = {}              # item number -> a dropped item kept all the same
        self._items = []
        self._dump = dump
        self._load = load
        self._repair = repair
        self._patches = {}             # item number -> marshalled late change (patch)
        self._file = None
        self._batch = []               # dumped items not yet marshalled
        self._ends = array("Q")        # end offset of each marshalled batch
        self._starts = array("Q")      # spilled-item number of each batch's first item
        self._nspilled = 0             # items in marshalled batches
        self._written = 0
        self._batch_bytes = 0          # bytes objects in the open batch (append_dumped)
        # on_seal(k, lo, hi, n): batch k (items spilled n and on) written at lo..hi of the
        # file (tracer/prerender.py renders it while the decode goes on)
        self.on_seal = None

    def append(self, item):
        if len(self._items) < self.keep:
            self._items.append(item)
            return
        if self.drop:
            self._dropped += 1
            return
        self._batch.append(self._dump(item) if self._dump else item)
        if len(self._batch) >= self.BATCH:
            self._seal()

    def append_dumped(self, obj):
        """append() of an item given in the form `dump` makes: loaded now if the list keeps
        it in memory, else spilled as it is (the item is only made when it is read)."""
        if len(self._items) < self.keep:
            self._items.append(self._load(obj) if self._load else obj)
            return
        if self.drop:
            self._dropped += 1
            return
        self._batch.append(obj)
        if obj.__class__ is tuple:      # a submission's record bytes: seal big batches early
            self._batch_bytes += sum(len(x) for x in obj if x.__class__ is bytes)
        if len(self._batch) >= self.BATCH or self._batch_bytes > self.BATCH_BYTES:
            self._seal()

    def open_file(self):
        """The file spilled items go to, made now if not yet (a process forked after this
        reads the batches written later)."""
        if self._file is None and self.directory is not None:
            fd, self.name = tempfile.mkstemp(prefix="trace-decode-", dir=self.directory)
            self._file = os.fdopen(fd, "w+b")
        elif self._file is None:
            self._file = tempfile.TemporaryFile(prefix="trace-decode-")
        return self._file

    def _seal(self):
        """Marshal the open batch and write it (one pwrite per batch: no buffer to grow)."""
        if self._batch:
            data = marshal.dumps(self._batch)
            lo = self._written
            os.pwrite(self.open_file().fileno(), data, lo)
            self._written += len(data)
            self._starts.append(self._nspilled)
            self._ends.append(self._written)
            self._nspilled += len(self._batch)
            self._batch = []
            self._batch_bytes = 0
            if self.on_seal is not None:
                self.on_seal(len(self._ends) - 1, lo, self._written, self._starts[-1])

    def _flush(self):
        self._seal()

    def pin(self, i, item):
        """Keep item i (appended or about to be: its number) although the list drops it."""
        if self.drop and i >= self.keep:
            self._pinned[i] = item

    def sealed(self, i):
        """Whether item i is in the file already: a later change to the object appended
        no longer shows when it is read back (a kept or not yet sealed item still does)."""
        j = i - len(self._items)
        return 0 <= j < self._nspilled

    def patch(self, i, change):
        """A late change to item i, already in the file: each read of the item gives
        repair(item, change) (the constructor's `repair`), with a fresh copy of `change`.
        A later patch of the same item replaces the earlier one."""
        self._patches[i] = marshal.dumps(change)

    def _patched(self, i, item):
        blob = self._patches.get(i)
        return item if blob is None else self._repair(item, marshal.loads(blob))

    def __len__(self):
        return len(self._items) + self._nspilled + len(self._batch) + self._dropped

    def _dropped_error(self, i):
        return Dropped(f"item {i} of {len(self)} was counted, not kept (a brief decode keeps "
                       f"the first {self.keep} and the pinned ones)")

    def _loaded(self, obj):
        return self._load(obj) if self._load else obj

    def _range(self, k):
        return (self._ends[k - 1] if k else 0), self._ends[k]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("SpillList index out of range")
        if i < len(self._items):
            return self._items[i]
        if self._dropped:
            item = self._pinned.get(i)
            if item is None:
                raise self._dropped_error(i)
            return item
        self._flush()
        j = i - len(self._items)
        k = bisect.bisect_right(self._starts, j) - 1
        lo, hi = self._range(k)
        batch = marshal.loads(os.pread(self._file.fileno(), hi - lo, lo))
        item = self._loaded(batch[j - self._starts[k]])
        return self._patched(i, item) if self._patches else item

    def __iter__(self):
        if self._dropped:
            raise self._dropped_error(len(self._items))
        yield from self._items
        self._flush()
        ends, nbatch = self._ends, len(self._ends)
        patches, i = self._patches, len(self._items)
        k = 0
        while k < nbatch:
            lo = ends[k - 1] if k else 0
            end = k
            while end + 1 < nbatch and ends[end + 1] - lo <= self.CHUNK:
                end += 1
            block = os.pread(self._file.fileno(), ends[end] - lo, lo)
            for j in range(k, end + 1):
                a = (ends[j - 1] if j else 0) - lo
                for obj in marshal.loads(block[a:ends[j] - lo]):
                    yield self._patched(i, self._loaded(obj)) if patches else self._loaded(obj)
                    i += 1
            k = end + 1

    def following(self, lo):
        """Items lo.. in order while the list still grows: as iter_range, but the open
        batch is read where it is (copies of its items), not sealed first, so a reader that
        follows the list between appends (decoders/pick.py LaunchUntil) leaves its batches as
        appending alone makes them."""
        kept_sealed = len(self._items) + self._nspilled
        yield from self.iter_range(lo, kept_sealed, seal=False)
        # (not appended to while this runs: the decode is paused for its `until`)
        for n, obj in enumerate(self._batch[max(0, lo - kept_sealed):],
                                max(lo, kept_sealed)):
            item = self._loaded(marshal.loads(marshal.dumps(obj)))
            yield self._patched(n, item) if self._patches else item

    def iter_range(self, lo, hi, seal=True):
        """Items lo..hi-1 in order, reading only the batches that hold them (os.pread: a
        forked worker reads its own range of the same file). seal=False: only up to the
        items marshalled already (following)."""
        hi = min(hi, len(self))
        kept = len(self._items)
        for i in range(lo, min(hi, kept)):
            yield self._items[i]
        if hi <= kept:
            return
        if self._dropped:
            raise self._dropped_error(max(lo, kept))
        if seal:
            self._flush()
        j, end = max(lo, kept) - kept, hi - kept
        k = bisect.bisect_right(self._starts, j) - 1
        while j < end and k < len(self._ends):
            lo_b, hi_b = self._range(k)
            batch = marshal.loads(os.pread(self._file.fileno(), hi_b - lo_b, lo_b))
            first = self._starts[k]
            for n, obj in enumerate(batch[j - first:end - first], kept + j):
                item = self._loaded(obj)
                yield self._patched(n, item) if self._patches else item
            j = first + len(batch)
            k += 1

    def __bool__(self):
        return len(self) > 0

    def __eq__(self, other):
        return isinstance(other, (list, SpillList)) and len(self) == len(other) and \
            all(a == b for a, b in zip(self, other))

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def handed(self):
        """What adopt() needs of a list kept in a named file (`directory`), none of it in
        memory (keep=0): its batches sealed, their places, its patches."""
        self._flush()
        return {"n": len(self), "name": self.name, "starts": list(self._starts),
                "ends": list(self._ends), "patches": dict(self._patches)}

    @classmethod
    def adopt(cls, handed, dump=None, load=None, repair=None):
        """The list handed() describes, read from its file (opened, then unlinked: it goes
        with the last descriptor)."""
        lst = cls(0, dump, load, repair)
        if handed["name"] is not None:
            lst._file = open(handed["name"], "rb")
            os.unlink(handed["name"])
        lst._starts = array("Q", handed["starts"])
        lst._ends = array("Q", handed["ends"])
        lst._nspilled = handed["n"]
        lst._written = lst._ends[-1] if lst._ends else 0
        lst._patches = handed["patches"]
        return lst


class SpillChain(Sequence):
    """Lists (SpillLists) laid end to end, read as one: a decode in blocks' lists, each
    block's own (decoders/session/blocks.py merge), and `tail`, a list what comes after
    them is appended to (append, append_dumped)."""

    keep = 0

    def __init__(self, parts, tail):
        self.parts = list(parts) + [tail]
        self.tail = tail
        self._firsts = []       # the index of each part's first item
        n = 0
        for p in self.parts:
            self._firsts.append(n)
            n += len(p)
        self._fixed = self._firsts[-1]      # items before the tail
        self.append, self.append_dumped = tail.append, tail.append_dumped

    def __len__(self):
        return self._fixed + len(self.tail)

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("SpillChain index out of range")
        k = bisect.bisect_right(self._firsts, i) - 1
        return self.parts[k][i - self._firsts[k]]

    def __iter__(self):
        for p in self.parts:
            yield from p

    def iter_range(self, lo, hi):
        hi = min(hi, len(self))
        k = max(0, bisect.bisect_right(self._firsts, lo) - 1)
        while lo < hi and k < len(self.parts):
            first = self._firsts[k]
            part = self.parts[k]
            end = min(hi, first + len(part))
            if lo < end:
                yield from part.iter_range(lo - first, end - first)
                lo = end
            k += 1

    def _flush(self):
        self.tail._flush()

    def __bool__(self):
        return len(self) > 0

    def close(self):
        for p in self.parts:
            p.close()


class SpilledBytes:
    """Bytes kept in an anonymous temporary file instead of memory (BytesSpill.put), read back
    whole by bytes(). Equal to another and hashed by its content's key (length, SHA-256), so
    it stands in for the bytes wherever they were a dict key. A decode keeps module images
    so (decoders/session/budget.py): a library's fatbin is tens of MB, and its bytes are read
    again only to name a kernel not named yet."""

    __slots__ = ("_spill", "_at", "_n", "_key")

    def __init__(self, spill, at, n, key):
        self._spill, self._at, self._n, self._key = spill, at, n, key

    def __len__(self):
        return self._n

    def __bytes__(self):
        return self._spill.read(self._at, self._n)

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, SpilledBytes) and other._key == self._key


class BytesSpill:
    """The file SpilledBytes live in: appended to, read with os.pread (never moves an offset).
    Closed when the last SpilledBytes of it goes (each holds it)."""

    def __init__(self):
        self._file = tempfile.TemporaryFile(prefix="trace-decode-")
        self._written = 0

    def put(self, data, key):
        at = self._written
        view = memoryview(data)
        while view:
            n = os.pwrite(self._file.fileno(), view, self._written)
            self._written += n
            view = view[n:]
        return SpilledBytes(self, at, len(data), key)

    def read(self, at, n):
        whole = os.pread(self._file.fileno(), n, at)    # (one read: no second copy)
        if len(whole) == n:
            return whole
        out = bytearray(whole)
        while len(out) < n:
            chunk = os.pread(self._file.fileno(), n - len(out), at + len(out))
            if not chunk:
                raise OSError(f"spill file ends at {at + len(out)}, before {at + n}")
            out += chunk
        return bytes(out)
