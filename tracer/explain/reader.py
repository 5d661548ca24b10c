"""Which launch to explain (pick_launch), and the look-ups into the decoded model that the
story's sections make for it (_Reader)."""
import bisect
import math
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
    from decoders.session import MarkedRecords
    if index is not None:
        return Choice(index).final(len(model.launches))
    choice = Choice(None, MarkedRecords(model.marks))
    launches = model.launches
    for n in range(len(launches)):
        if choice.index is not None:
            break
        choice.feed(model, n, launches[n])
    return choice.final(len(launches))


class Choice:
    """pick_launch with the launches given one at a time, in the model's order: `index` is
    the launch once no later launch can change it (None before), so that a decode can stop
    there (tracer/explain explain). `marked`: decoders.session.MarkedRecords of the whole
    capture's marks (a decode stopped early has not read them all)."""

    def __init__(self, wanted=None, marked=None):
        self.wanted = wanted
        self.marked = marked
        self.count = 0
        self.first = None           # the first kernel launch, marked where the capture marks
        self.first_named = False
        self.kernel = None          # the first kernel launch (the fallback where none is marked)
        self.kernel_named = False
        self.named = None           # the first launch of a named kernel

    def feed(self, model, n, launch):
        self.count = n + 1
        if self.wanted is not None:
            return
        named = _named(launch)
        if named and self.named is None:
            self.named = n
        if self.first is None and _summary(launch).get("kernel"):
            if self.kernel is None:
                self.kernel, self.kernel_named = n, named
            if not self.marked or _marked(model, launch, self.marked):
                self.first, self.first_named = n, named

    @property
    def index(self):
        if self.wanted is not None:
            return self.wanted if 0 <= self.wanted < self.count else None
        if self.first is None:
            return None
        return self.first if self.first_named else self.named

    def final(self, count):
        """The launch, the model's `count` launches all given."""
        if self.wanted is not None:
            if not 0 <= self.wanted < count:
                raise ExplainError(f"no launch {self.wanted}: the capture has {count} "
                                   f"launch(es), numbered from 0 (`trace-decode CAPTURE` "
                                   f"lists them)")
            return self.wanted
        if not count:
            raise ExplainError("no launch decoded in this capture: nothing to explain")
        if self.index is not None:
            return self.index
        first, named = (self.first, self.first_named) if self.first is not None else \
            (self.kernel, self.kernel_named) if self.kernel is not None else \
            (0, self.named == 0)
        return first if named or self.named is None else self.named


class StoryUntil:
    """decode_capture's `until` for one launch's story: true once the launch is chosen
    (Choice), a later launch of its channel has come (a channel's last launch takes the
    semaphores of the submissions after it), its API call has returned, and so has a
    later call of its process (the story's next call). Each call reads only the launches
    and calls added since the one before."""

    def __init__(self, choice):
        self.choice = choice
        self.launches = 0       # model.launches read so far
        self.calls = 0          # model.api_calls read so far
        self.target = None      # the chosen launch's (pid, channel), its call, where "after" is
        self.channel_again = self.call_back = self.next_back = False

    def catch_up(self, model):
        """Give the choice the launches it has not seen; its index, or None."""
        choice = self.choice
        if choice.index is None:
            for launch in _following(model.launches, self.launches):
                choice.feed(model, self.launches, launch)
                self.launches += 1
                if choice.index is not None:
                    break
        return choice.index

    def __call__(self, model):
        n = self.catch_up(model)
        if n is None:
            return False
        if self.target is None:
            launch = _item(model.launches, n)
            s = _summary(launch)
            call = (s.get("api_call") or {}).get("index")
            self.target = ((launch.pid, s.get("channel")), call,
                           call if call is not None else launch.record_index)
            self.call_back = call is None
            self.launches = max(self.launches, n + 1)
        key, call, after = self.target
        if not self.channel_again:
            for launch in _following(model.launches, self.launches):
                self.launches += 1
                if (launch.pid, _summary(launch).get("channel")) == key:
                    self.channel_again = True
                    break
        if not (self.call_back and self.next_back):
            for c in _following(model.api_calls, self.calls):
                self.calls += 1
                self.call_back = self.call_back or c["index"] == call
                self.next_back = self.next_back or (c["pid"] == key[0] and c["index"] > after)
                if self.call_back and self.next_back:
                    break
        return self.channel_again and self.call_back and self.next_back


def _following(lst, lo):
    """Items lo.. of a model list that may still grow (a SpillList's open batch unsealed)."""
    return lst.following(lo) if hasattr(lst, "following") else iter(lst[lo:])


def _item(lst, i):
    return next(_following(lst, i), None)


def _marked(model, launch, marked):
    sub, _ = _submission(model, launch, _item)
    return sub is not None and (sub["pid"], sub["tid"], launch.record_index) in marked


def _named(launch):
    s = _summary(launch)
    return bool(s.get("kernel") and ((s.get("attribution") or {}).get("kernel") or {}).get("name"))


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


def _submission(model, launch, item=None):
    """(the submission that carried `launch`, its place in model.submissions): the place is
    launch.submission_index (decode_capture feeds each SUBMISSION record to the launch
    decoder as it appends it), checked by record index; else a walk. `item(list, i)`: how
    the place is read (_item: while the decode goes on)."""
    subs = model.submissions
    at = launch.submission_index
    if at is not None and 0 <= at < len(subs):
        s = subs[at] if item is None else item(subs, at)
        if s["index"] == launch.record_index:
            return s, at
    return next(((s, k) for k, s in enumerate(subs) if s["index"] == launch.record_index),
                (None, None))


def _returned(call):
    """The record index of the call's API_EXIT (after every record for a call that never
    returned)."""
    return call["exit_index"] if call.get("exit_index") is not None else math.inf
