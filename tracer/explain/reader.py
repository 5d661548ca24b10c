"""Which launch to explain (pick_launch), and the look-ups into the decoded model that the
story's sections make for it (_Reader)."""
import bisect
import math
import re

from decoders.errors import TraceLaunchError
from decoders.pick import PickError, full_summary as _summary


class ExplainError(TraceLaunchError):
    """No launch to explain: an index that is not in the capture."""


# -- which launch ------------------------------------------------------------------------
def pick_launch(model, index=None):
    """The launch to explain: `index` (as the report numbers launches), else the first
    kernel launch whose submission rang between marks (the built-in launch), else the
    first kernel launch; where that one runs no kernel the program named (a memset the
    driver runs as a kernel of its own), the first launch of a named kernel
    (decoders/pick.py)."""
    from decoders.pick import choose
    try:
        return choose(model, index, named=True)
    except PickError as exc:
        raise ExplainError(str(exc)) from None


# -- reading the model -------------------------------------------------------------------
_ALLOC = re.compile(r"^RM_ALLOC\S* (\S+) (0x[0-9a-f]+) under (0x[0-9a-f]+)")


class _Reader:
    """Look-ups into the model for launch `index`; each walks a list once at most.

    model.submissions and model.launches may be SpillLists (decoders/spill.py): reading an
    item there loads it again, so the launch's submission and its neighbours are read at
    their places, not found by walking the lists from the start."""

    def __init__(self, model, launch, index):
        self.model = model
        self.launch = launch
        self.index = index
        self.s = _summary(launch)
        self.pid = launch.pid
        self.sub, self._sub_at = _submission(model, launch)
        # the launching process's objects: RM handles and VAs are per process (ddp-2rank)
        self.tree = model.objects.view(self.pid) if model.objects is not None else None
        self._ioctls = [i for i in model.ioctls if self.pid is None or i["pid"] == self.pid]
        self._neighbours = None

    def channel_before(self):
        """The earlier submissions of the launch's channel (same pid and token), in order."""
        sub, at = self.sub, self._sub_at
        subs = self.model.submissions
        earlier = subs.iter_range(0, at) if hasattr(subs, "iter_range") else subs[:at]
        for s in earlier:
            if s["pid"] == sub["pid"] and s["token"] == sub["token"]:
                yield s

    def same_submission(self):
        """[(n, launch)] of the other launches the launch's submission carried, in order.
        decode_capture keeps a submission's launches together, in decode order, so they
        are the launch's neighbours in model.launches."""
        if self._neighbours is None:
            launches, record = self.model.launches, self.launch.record_index
            lo = self.index
            while lo > 0 and launches[lo - 1].record_index == record:
                lo -= 1
            hi = self.index + 1
            while hi < len(launches) and launches[hi].record_index == record:
                hi += 1
            self._neighbours = [(n, launches[n]) for n in range(lo, hi) if n != self.index]
        return self._neighbours

    # how far back launch_at_qmd looks past the launch's own submission: QMD memory is a
    # ring the driver reuses, so the nearest earlier launch at an address is the one meant
    QMD_LOOKBACK = 4096

    def launch_at_qmd(self, va):
        """The index of the launch whose QMD sits at `va`: one of the launch's own submission
        first, else the nearest earlier one (QMD addresses are reused), else None."""
        if va is None:
            return None
        for n, other in self.same_submission():
            if _summary(other).get("qmd_address") == va:
                return n
        launches = self.model.launches
        for n in range(self.index - 1, max(-1, self.index - 1 - self.QMD_LOOKBACK), -1):
            if _summary(launches[n]).get("qmd_address") == va:
                return n
        return None

    def obj(self, handle):
        return self.tree.objects.get(handle) if self.tree is not None and handle else None

    def alloc_record(self, handle, before=None):
        """The RM_ALLOC ioctl that made `handle` (the last before `before`, by default the
        launch: RM frees handles and makes them again, and the decode may have read past)."""
        before = self.launch.record_index if before is None else before
        found = None
        for i in self._ioctls:
            if before is not None and i["index"] >= before:
                break
            m = _ALLOC.match(i.get("summary") or "")
            if m and int(m.group(2), 16) == handle and i["ret"] == 0:
                found = i
        return found

    def ioctl_where(self, *words, before=None):
        """The last ioctl before `before` (by default the launch) whose summary holds every
        one of `words`."""
        before = self.launch.record_index if before is None else before
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
        """The API call entered at record `index` (one call per record: where the walk
        starts changes nothing but its length)."""
        if index is None:
            return None
        return next((c for c in self._calls_returned_after(index) if c["index"] == index),
                    None)

    def api_calls_after(self, index):
        """The calls entered after record `index`, in model.api_calls order."""
        for c in self._calls_returned_after(index):
            if c["index"] > index and (self.pid is None or c["pid"] == self.pid):
                yield c

    def _calls_returned_after(self, index):
        """model.api_calls from the first call that returned after record `index`. The
        list is in the order the calls returned (decode_capture appends each at its
        API_EXIT record, and the calls that never returned last), so each call before
        that place returned, and so was entered, before record `index`."""
        calls = self.model.api_calls
        lo = bisect.bisect_right(calls, index, key=_returned)
        return calls.iter_range(lo, len(calls)) if hasattr(calls, "iter_range") else \
            calls[lo:]


def _submission(model, launch):
    """(the submission that carried `launch`, its place in model.submissions): the place is
    launch.submission_index (decode_capture feeds each SUBMISSION record to the launch
    decoder as it appends it), checked by record index; else a walk."""
    subs = model.submissions
    at = launch.submission_index
    if at is not None and 0 <= at < len(subs):
        s = subs[at]
        if s["index"] == launch.record_index:
            return s, at
    return next(((s, k) for k, s in enumerate(subs) if s["index"] == launch.record_index),
                (None, None))


def _returned(call):
    """The record index of the call's API_EXIT (after every record for a call that never
    returned)."""
    return call["exit_index"] if call.get("exit_index") is not None else math.inf
