"""The GPU memory image a launch decoder rebuilds from the method stream: GPU VA -> bytes,
as far as uploads and copies wrote them."""
import lz4.block

PAGE = 4096

_ONES = memoryview(b"\x01" * PAGE)      # "known" marks for up to a page, sliced without a copy
# The known map of a page that a write covered whole (module code, a graph's uploads): one
# shared read-only map instead of a page's own (a 2-GPU JAX job: 6,145 of 11,750 pages)
_FULL = memoryview(bytes(_ONES))


class SparseMemory:
    """GPU VA -> bytes, as far as the stream wrote them (4 KiB pages + known-byte map).

    The last few writes are also kept whole (`RECENT`, none overlapping another: a write
    drops the ones it overlaps), so a read inside one of them is a slice: a QMD or
    constant bank is read right after the upload that wrote it.
    A page is a pair of memoryviews over its bytearrays (data, known): a memoryview takes
    a same-size slice assignment ~3x faster than a bytearray, and reads copy only once.
    A page one write covered whole shares _FULL as its known map.

    A write of BLOB_MIN bytes or more is kept lz4-packed (a blob) until a read or a later
    write reaches a page it lies on, and only then goes into pages: the driver uploads module
    code that way (16-64 KiB at a time), which no QMD or constant bank read reaches; its
    pages were most of the image (a 2-rank FSDP job's front: 154 MiB, 134 with them packed;
    docs/measurements.md, session 24). A page under blobs is a list in the page table,
    [its (data, known) or None, blob, ...]: the lookup every access makes anyway finds
    them. Blobs never overlap one another, and each is newer than the bytes of the page
    under it."""

    RECENT = 4
    # (more than a PAGE) Above the constant bank 0 uploads of all but a kernel with more than
    # ~15.5 KiB of arguments (Hopper allows 32,764 bytes), whose bank is then packed at each
    # launch and unpacked at the next (40 KiB saved a third as much memory there)
    BLOB_MIN = 16 << 10

    def __init__(self):
        self._pages = {}      # page number -> (data, known): memoryviews of bytearray(PAGE);
                              # or a list: a page under blobs (above)
        self._recent = []     # [(va, end, bytes)], oldest first, pairwise disjoint
        self.writes = 0       # writes so far, and the last one that started at each VA:
        self.starts = {}      # a QMD sent twice with no upload between runs once
        self.tag = None       # the SUBMISSION record being fed (set by LaunchDecoder)
        self.written_by = {}  # VA -> tag of the last write that started there

    def _page(self, page):
        entry = self._pages[page] = (memoryview(bytearray(PAGE)), memoryview(bytearray(PAGE)))
        return entry

    def write(self, va, data):
        n = len(data)
        if not n:
            return
        self.writes += 1
        starts = self.starts
        if len(starts) > 65536:         # bounded whatever a capture holds
            starts.clear()
            self.written_by.clear()
        starts[va] = self.writes
        self.written_by[va] = self.tag
        if data.__class__ is not bytes:
            data = bytes(data)
        page, off = divmod(va, PAGE)
        stop = off + n
        if n > PAGE and n >= self.BLOB_MIN:
            self._pack(va, data)
        elif stop <= PAGE:                      # within one page (a QMD, a constant bank)
            entry = self._pages.get(page)
            if type(entry) is list:
                entry = self._entry(page)
            if entry is None:
                entry = self._page(page)
            entry[0][off:stop] = data
            if entry[1] is not _FULL:
                if n == PAGE:
                    self._pages[page] = (entry[0], _FULL)
                else:
                    entry[1][off:stop] = _ONES[:n]
        else:
            pos = 0
            pages = self._pages
            while pos < n:
                page, off = divmod(va + pos, PAGE)
                chunk = min(n - pos, PAGE - off)
                entry = pages.get(page)
                if type(entry) is list:
                    entry = self._entry(page)
                if entry is None:
                    entry = self._page(page)
                entry[0][off:off + chunk] = data[pos:pos + chunk]
                if entry[1] is not _FULL:
                    if chunk == PAGE:
                        pages[page] = (entry[0], _FULL)
                    else:
                        entry[1][off:off + chunk] = _ONES[:chunk]
                pos += chunk
        end = va + n
        recent = self._recent
        for start, last, _ in recent:
            if start < end and va < last:       # overlapped: no longer the latest bytes
                recent = self._recent = [r for r in recent if r[1] <= va or r[0] >= end]
                break
        recent.append((va, end, data))
        if len(recent) > self.RECENT:
            del recent[0]

    def _pack(self, va, data):
        """A blob of data at va: the blobs it overlaps go into pages first."""
        pages, end = self._pages, va + len(data)
        first, last = va // PAGE, (end - 1) // PAGE
        for page in range(first, last + 1):
            entry = pages.get(page)
            if type(entry) is list:
                for blob in [b for b in entry[1:] if b[0] < end and va < b[1]]:
                    self._unpack(blob)
        blob = (va, end, lz4.block.compress(data))
        for page in range(first, last + 1):
            entry = pages.get(page)
            if type(entry) is list:
                entry.append(blob)
            else:
                pages[page] = [entry, blob]

    def _unpack(self, blob):
        """Move a blob into pages (under the blobs that share its first and last page)."""
        pages = self._pages
        start, end, packed = blob
        data = lz4.block.decompress(packed)
        for page in range(start // PAGE, (end - 1) // PAGE + 1):
            entry = pages[page]
            rest = [b for b in entry[1:] if b is not blob]
            under = entry[0]
            if under is None:
                under = self._page(page)        # (the page table's entry is set below)
            lo, hi = max(start, page * PAGE), min(end, (page + 1) * PAGE)
            off = lo - page * PAGE
            under[0][off:off + hi - lo] = data[lo - start:hi - start]
            if hi - lo == PAGE:
                under = (under[0], _FULL)
            elif under[1] is not _FULL:
                under[1][off:off + hi - lo] = _ONES[:hi - lo]
            pages[page] = [under] + rest if rest else under

    def _entry(self, page):
        """The (data, known) of a page under blobs, once they are in pages."""
        for blob in self._pages[page][1:]:
            self._unpack(blob)
        return self._pages[page]

    def _cached(self, va, n):
        """The n bytes at va from one recent write that holds them all, else None."""
        if n <= 0:
            return None
        for start, end, data in self._recent:
            if start <= va and va + n <= end:
                return data[va - start:va - start + n]
        return None

    def read(self, va, n):
        """The n bytes at va if every one is known, else None."""
        data = self.read_known(va, n)
        return data if len(data) == max(n, 0) else None

    def read_known(self, va, limit):
        """The known bytes from va onward, up to the first unknown byte or `limit` bytes."""
        if limit > 0:                           # _cached(), inline
            stop = va + limit
            for start, end, data in self._recent:
                if start <= va and stop <= end:
                    return data[va - start:stop - start]
        page, off = divmod(va, PAGE)
        if 0 < limit <= PAGE - off:             # within one page: one slice
            entry = self._pages.get(page)
            if type(entry) is list:
                entry = self._entry(page)
            if entry is None:
                return b""
            stop = entry[1].obj.find(0, off, off + limit)
            return bytes(entry[0][off:off + limit if stop == -1 else stop])
        out = bytearray()
        pos = 0
        while pos < limit:
            page, off = divmod(va + pos, PAGE)
            chunk = min(limit - pos, PAGE - off)
            entry = self._pages.get(page)
            if type(entry) is list:
                entry = self._entry(page)
            if entry is None:
                break
            stop = entry[1].obj.find(0, off, off + chunk)
            if stop == -1:
                out += entry[0][off:off + chunk]
                pos += chunk
                continue
            out += entry[0][off:stop]
            break
        return bytes(out)

    def holds(self, va, n, prefix):
        """Whether the n bytes at va are all known and start with `prefix` (n >= its
        length), compared where they lie; False also where they cross a page."""
        page, off = divmod(va, PAGE)
        if off + n > PAGE:
            return False
        entry = self._pages.get(page)
        if type(entry) is list:
            entry = self._entry(page)
        return entry is not None and entry[1].obj.find(0, off, off + n) == -1 and \
            entry[0].obj.startswith(prefix, off)

    def known(self, va, n):
        return self.read(va, n) is not None

    def __len__(self):
        for page in [p for p, e in self._pages.items() if type(e) is list]:
            if type(self._pages.get(page)) is list:
                self._entry(page)
        return sum(e[1].obj.count(1) for e in self._pages.values())
