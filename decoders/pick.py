"""Which launch a view of one launch is about (`trace-decode explain`, `trace-decode diff`),
and how far its decode must read to tell it whole (decode_capture's `until`).

The default launch is the first kernel launch whose submission rang between a BEGIN and
END mark of its thread (the built-in launch marks its cuLaunchKernel), else the first
kernel launch (not the driver's GRID_NULL scheduling QMD), else launch 0; explain then
prefers a kernel the program named (a memset the driver runs as a kernel of its own is
passed over for the first launch of a named kernel).

Choice takes the launches one at a time, in the model's order, and knows the launch as
soon as no later one can change it. LaunchUntil asks it while the capture is decoded and
stops the decode once the launch is told whole: it has come, a later launch of its
channel has come (a channel's last launch takes the semaphores of the submissions after
it), its API call has returned, and so has a later call of its process. On a long job
the first kernel launch's story is then a decode of its first records, not of the job.
The marks come from a skim of the whole capture (decoders/session capture_marks), since
a decode stopped early does not reach them all."""
from decoders.errors import TraceLaunchError


class PickError(TraceLaunchError):
    """No such launch: an index that is not in the capture, or a capture without one."""


def choose(model, index=None, named=False):
    """The launch of a decoded model (the module docstring); `named`: explain's rule."""
    from decoders.session import MarkedRecords
    if index is not None:
        return Choice(index).final(len(model.launches))
    choice = Choice(None, MarkedRecords(model.marks), named)
    launches = model.launches
    for n, launch in enumerate(launches):
        choice.feed(model, n, launch)
        if choice.index is not None:
            break
    return choice.final(len(launches))


class Choice:
    """choose() with the launches given one at a time: `index` is the launch once no
    later launch can change it (None before). `marked`: decoders.session.MarkedRecords
    of the whole capture's marks."""

    def __init__(self, wanted=None, marked=None, named=False):
        self.wanted = wanted
        self.marked = marked
        self.prefer_named = named
        self.count = 0
        self.first = None           # the first kernel launch, marked where the capture marks
        self.first_named = False
        self.kernel = None          # the first kernel launch (where none is marked)
        self.kernel_named = False
        self.named = None           # the first launch of a named kernel

    def feed(self, model, n, launch):
        self.count = n + 1
        if self.wanted is not None:
            return
        named = _named(launch)
        if named and self.named is None:
            self.named = n
        if self.first is None and full_summary(launch).get("kernel"):
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
        if not self.prefer_named or self.first_named:
            return self.first
        return self.named

    def final(self, count):
        """The launch, the model's `count` launches all given."""
        if self.wanted is not None:
            if not 0 <= self.wanted < count:
                raise PickError(f"no launch {self.wanted}: the capture has {count} launch(es), "
                                f"numbered from 0 (`trace-decode CAPTURE` lists them)")
            return self.wanted
        if not count:
            raise PickError("no launch decoded in this capture: no launch to tell or compare")
        if self.index is not None:
            return self.index
        first, named = (self.first, self.first_named) if self.first is not None else \
            (self.kernel, self.kernel_named) if self.kernel is not None else \
            (0, self.named == 0)
        if not self.prefer_named or named or self.named is None:
            return first
        return self.named


class LaunchUntil:
    """decode_capture's `until` for one launch told whole (the module docstring). Each
    call reads only the launches and calls added since the one before."""

    def __init__(self, choice):
        self.choice = choice
        self.launches = 0       # model.launches read so far
        self.calls = 0          # model.api_calls read so far
        self.target = None      # the launch's (pid, channel), its call, where "after" is
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

    def index(self, model):
        """The launch, once the decode has ended (stopped here or not)."""
        n = self.catch_up(model)
        return n if n is not None else self.choice.final(len(model.launches))

    def __call__(self, model):
        n = self.catch_up(model)
        if n is None:
            return False
        if self.target is None:
            launch = _item(model.launches, n)
            s = full_summary(launch)
            call = (s.get("api_call") or {}).get("index")
            self.target = ((launch.pid, s.get("channel")), call,
                           call if call is not None else launch.record_index)
            self.call_back = call is None
            self.launches = max(self.launches, n + 1)
        key, call, after = self.target
        if not self.channel_again:
            for launch in _following(model.launches, self.launches):
                self.launches += 1
                if (launch.pid, full_summary(launch).get("channel")) == key:
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


def until_launch(path, index=None, named=False):
    """A LaunchUntil for launch `index` of the capture at `path` (None: the default launch,
    its marks skimmed from the capture first)."""
    from decoders.session import MarkedRecords, capture_marks
    marked = None if index is not None else MarkedRecords(capture_marks(path))
    return LaunchUntil(Choice(index, marked, named))


def full_summary(launch):
    """A launch's summary with every QMD field (Launch.summary), or the dict given."""
    return launch.summary if hasattr(launch, "summary") else launch


def _named(launch):
    s = full_summary(launch)
    return bool(s.get("kernel") and ((s.get("attribution") or {}).get("kernel") or {}).get("name"))


def _following(lst, lo):
    """Items lo.. of a model list that may still grow (a SpillList's open batch unsealed)."""
    return lst.following(lo) if hasattr(lst, "following") else iter(lst[lo:])


def _item(lst, i):
    return next(_following(lst, i), None)


def _marked(model, launch, marked):
    """Whether the launch's submission rang between marks of its thread."""
    subs, at = model.submissions, launch.submission_index
    sub = _item(subs, at) if at is not None and 0 <= at < len(subs) else None
    if sub is None or sub["index"] != launch.record_index:
        sub = next((s for s in subs if s["index"] == launch.record_index), None)
    return sub is not None and (sub["pid"], sub["tid"], launch.record_index) in marked
