"""Which launch to explain (pick_launch), and the look-ups into the decoded model that the
story's sections make for it (_Reader)."""
import re

from decoders.errors import TraceLaunchError

from tracer.explain.story import _summary


class ExplainError(TraceLaunchError):
    """No launch to explain: an index that is not in the capture."""


# -- which launch ------------------------------------------------------------------------
def pick_launch(model, index=None):
    """The launch to explain: `index` (as the report numbers launches), else the first
    kernel launch whose submission rang between marks (the built-in launch), else the
    first kernel launch (decoders/diff.py default_launch); where that one runs no kernel
    the program named (a memset the driver runs as a kernel of its own), the first launch
    of a named kernel."""
    count = len(model.launches)
    if index is None:
        if not count:
            raise ExplainError("no launch decoded in this capture: nothing to explain")
        from decoders.diff import default_launch
        first = default_launch(model)
        if _named(model.launches[first]):
            return first
        return next((n for n, l in enumerate(model.launches) if _named(l)), first)
    if not 0 <= index < count:
        raise ExplainError(f"no launch {index}: the capture has {count} launch(es), "
                           f"numbered from 0 (`trace-decode CAPTURE` lists them)")
    return index


def _named(launch):
    s = _summary(launch)
    return bool(s.get("kernel") and ((s.get("attribution") or {}).get("kernel") or {}).get("name"))


# -- reading the model -------------------------------------------------------------------
_ALLOC = re.compile(r"^RM_ALLOC\S* (\S+) (0x[0-9a-f]+) under (0x[0-9a-f]+)")


class _Reader:
    """Look-ups into the model for one launch; each walks a list once."""

    def __init__(self, model, launch):
        self.model = model
        self.launch = launch
        self.s = _summary(launch)
        self.pid = launch.pid
        self.sub = next((s for s in model.submissions if s["index"] == launch.record_index),
                        None)
        self.tree = model.objects
        self._ioctls = [i for i in model.ioctls if self.pid is None or i["pid"] == self.pid]

    def obj(self, handle):
        return self.tree.objects.get(handle) if self.tree is not None and handle else None

    def alloc_record(self, handle, before=None):
        """The RM_ALLOC ioctl that made `handle` (the last before `before`)."""
        found = None
        for i in self._ioctls:
            if before is not None and i["index"] >= before:
                break
            m = _ALLOC.match(i.get("summary") or "")
            if m and int(m.group(2), 16) == handle and i["ret"] == 0:
                found = i
        return found

    def ioctl_where(self, *words, before=None):
        """The last ioctl (before `before`) whose summary holds every one of `words`."""
        found = None
        for i in self._ioctls:
            if before is not None and i["index"] >= before:
                break
            text = i.get("summary") or ""
            if all(w in text for w in words):
                found = i
        return found

    def mmap_at(self, addr):
        return next((m for m in self.model.mmaps if m.get("addr") == addr and
                     not m.get("munmap") and not m.get("mremap") and
                     (self.pid is None or m["pid"] == self.pid)), None)

    def cpu_object(self, addr):
        """(object, mapping) whose CPU mapping holds `addr`."""
        if self.tree is None:
            return None, None
        for o in self.tree.objects.values():
            if self.pid is not None and o.pid not in (None, self.pid):
                continue
            for m in o.cpu_mappings:
                if m["addr"] <= addr < m["addr"] + (m["length"] or 0):
                    return o, m
        return None, None

    def resolution(self, va):
        return self.tree.resolution(va) if self.tree is not None and va is not None else None

    def api_call(self, index):
        return next((c for c in self.model.api_calls if c["index"] == index), None)

    def api_calls_after(self, index):
        for c in self.model.api_calls:
            if c["index"] > index and (self.pid is None or c["pid"] == self.pid):
                yield c
