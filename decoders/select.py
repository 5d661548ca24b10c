"""Filters on a decoded capture: the part of a `CaptureModel` a question is about.

`select(model, ...)` returns a shallow copy of the model (dataclasses.replace) whose
lists hold only the matching records; the records themselves are shared, never copied
or changed. Each criterion narrows the lists it says something about and leaves the
others whole, and criteria combine with AND:

| criterion | ioctls | mmaps, opens | marks | submissions | launches | processes |
|---|---|---|---|---|---|---|
| `launches` (indices) | - | - | - | those that carried the launches | those launches | - |
| `channel` (token or handle) | - | - | - | token or hChannel equal | token or hChannel equal | - |
| `cls` (class id) | RM allocs of the class | - | - | channel (host) class equal | QMD's class equal | - |
| `ioctl` (substring) | escape, RM control or class name contains it | - | - | - | - | - |
| `pid` | pid equal | pid equal | pid equal | pid equal | pid equal | that pid |

The syncs and copies kept are those of the submissions kept.

Launch indices are positions in `model.launches` of the unfiltered model, as the report
numbers them ("launch 3"). Stats (`model.stats()`) are computed from the lists, so they
count what was selected; `records` stays the number of records read. The copy's
`meta` gains a `filter` key naming the criteria and, when launches were left out,
`launch_indices`: where the kept launches are in the whole capture (docs/json.md).

What else the report counts follows the selection too (issue 27: a `--pid` report showed
the whole capture's notes, doorbells and API calls): `pid` narrows the shim's notes, API
calls (with the failed and unfinished ones) and STATS counters to that process's; a
criterion that narrows the submissions or launches keeps the API calls that rang a
selected submission's doorbell or that a selected launch is attributed to, and counts one
doorbell per selected submission; the kernel launch tally and its outcomes are counted
again over the selected launches.

A pid, channel, class or ioctl name the capture does not hold is an error (SelectError)
that names what it holds: a filter never selects nothing silently.
"""
import dataclasses
from array import array
from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace

from decoders.errors import TraceLaunchError


class SelectError(TraceLaunchError):
    """A criterion that names nothing (an unknown class name)."""


def parse_int(text):
    """An integer written in decimal or with a 0x/0o/0b prefix (bare hex with a-f too)."""
    if isinstance(text, int):
        return text
    s = str(text).strip()
    try:
        return int(s, 0)
    except ValueError:
        try:
            return int(s, 16)          # "c86f": hex digits without the prefix
        except ValueError:
            raise SelectError(f"not a number: {text!r}") from None


def class_id(text, branch="580"):
    """A class given as a number (0xcbc0, 52160) or an NVIDIA name (HOPPER_COMPUTE_A)."""
    if isinstance(text, int):
        return text
    s = str(text).strip()
    if s[:1].isdigit():
        return parse_int(s)
    from decoders.methods import CLASSES as METHOD_CLASSES
    from decoders.rm.classes import ALL_CLASSES, CLASSES
    want = s.upper()
    for table in (CLASSES.get(branch, {}), ALL_CLASSES):
        for value, name in table.items():
            if name.upper() == want:
                return value
    for info in METHOD_CLASSES.values():
        if info.name.upper() == want:
            return info.id
    raise SelectError(f"unknown class name {text!r}")


def _branch(model):
    return (str(model.meta.get("driver", "580")).split(".")[0]) or "580"


def _ioctl_names(entry, branch):
    """(escape, control name or None, class name or None, class id or None) of one ioctl,
    from its facts (decoders/ioctl.py facts, taken when it was decoded)."""
    from decoders.ioctl import NAMES
    f = entry.get("_facts")
    control, cname, cid = f[NAMES] if f is not None else (None, None, None)
    return entry["escape"], control, cname, cid


def ioctl_matches(entry, name, branch="580"):
    """True when `name` (case-insensitive) is part of the ioctl's escape (NV_ESC_RM_CONTROL,
    UVM_MAP_EXTERNAL_ALLOCATION), its RM control name or its allocated class's name."""
    want = name.upper()
    if want in entry["escape"].upper():
        return True
    _, control, cname, _ = _ioctl_names(entry, branch)
    return any(want in x.upper() for x in (control, cname) if x)


LISTED = 40     # values an error message lists of what the capture holds


def _listing(values, fmt=str):
    values = sorted(values)
    text = ", ".join(fmt(v) for v in values[:LISTED])
    return text + (f" and {len(values) - LISTED} more" if len(values) > LISTED else "")


def _absent(what, holds, values, fmt=str):
    raise SelectError(f"{what} is not in the capture; it holds {holds} {_listing(values, fmt)}"
                      if values else f"{what} is not in the capture; it holds no {holds}")


def _class_label(c, branch):
    from decoders.rm.classes import class_name
    name = class_name(c, branch)[0]
    return f"{c:#x} {name}" if name else f"{c:#x}"


class Picked(Sequence):
    """The items of `base` (a list or a SpillList) at the positions `at` (ascending), read
    from `base` when asked for: a selection of a long capture holds a number per item kept,
    never the items (a channel's launches were a list of 157,170 Launch objects, 1.9 GB).
    Iteration and iter_range (tracer/parallel.py) read `base` in order."""

    def __init__(self, base, at):
        self.base = base
        self.at = at if isinstance(at, array) else array("Q", at)

    def __len__(self):
        return len(self.at)

    def __getitem__(self, i):
        if isinstance(i, slice):
            lo, hi, step = i.indices(len(self))
            if step == 1:
                return list(self.iter_range(lo, hi))
            return [self[k] for k in range(lo, hi, step)]
        return self.base[self.at[i]]

    def __iter__(self):
        return self.iter_range(0, len(self))

    def __eq__(self, other):        # (as a list of the same items is)
        if isinstance(other, (str, bytes)) or not isinstance(other, (list, tuple, Sequence)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def iter_range(self, lo, hi):
        """Items lo..hi-1 of the selection: the base's from the first position to the last,
        in one ordered pass, those not picked passed over."""
        at = self.at[lo:hi]
        if not at:
            return
        base = self.base
        if not hasattr(base, "iter_range"):
            for n in at:
                yield base[n]
            return
        want = iter(at)
        nxt = next(want)
        for n, item in enumerate(base.iter_range(at[0], at[-1] + 1), at[0]):
            if n == nxt:
                yield item
                nxt = next(want, None)
                if nxt is None:
                    return

    @property
    def _flush(self):       # (tracer/parallel.py: the base's last batch on disk first)
        return getattr(self.base, "_flush", lambda: None)


def select(model, launches=(), channel=None, cls=None, ioctl=None, pid=None):
    """A filtered shallow copy of `model` (see the module docstring). `launches`: launch
    indices; `channel`: work-submit token or channel handle; `cls`: class id or name;
    `ioctl`: a name substring; `pid`: a process id. None / empty means no criterion.
    Raises SelectError when a criterion names something the capture does not hold."""
    launches = sorted({int(n) for n in launches or ()})
    channel = parse_int(channel) if channel is not None else None
    branch = _branch(model)
    cls = class_id(cls, branch) if cls is not None else None
    pid = int(pid) if pid is not None else None
    changes = {}
    criteria = {}

    def by_pid(rows):
        return [r for r in rows if r["pid"] == pid] if pid is not None else list(rows)

    if launches:
        bad = [n for n in launches if not 0 <= n < len(model.launches)]
        if bad:
            raise SelectError(f"no launch {bad[0]}: the capture has {len(model.launches)} "
                              f"launch(es), numbered from 0")
    # one pass over the submissions: what the capture holds, each one's process, and those
    # the criteria keep (only they are held: a long capture's are spilled to a file)
    held_pids, held_channels, held_classes, sub_pid, subs = set(), set(), set(), {}, None
    kept = set()        # the record indices of the submissions kept
    if (pid, channel, cls) != (None, None, None) or launches:
        carried = {model.launches[n].record_index for n in launches} if launches else None
        subs = array("Q")
        for k, s in enumerate(model.submissions):
            held_pids.add(s["pid"])
            held_channels.add((s["token"], s["channel"]))
            held_classes.add(s["class"])
            if pid is not None:
                sub_pid[s["index"]] = s["pid"]
            if (pid is None or s["pid"] == pid) and \
                    (channel is None or channel in (s["token"], s["channel"])) and \
                    (cls is None or s["class"] == cls) and \
                    (carried is None or s["index"] in carried):
                subs.append(k)
                kept.add(s["index"])
    if pid is not None:
        pids = held_pids | set(model.processes) | {i["pid"] for i in model.ioctls}
        if pid not in pids:
            _absent(f"pid {pid}", "pids", pids)
    if channel is not None:
        held = held_channels | {(c.token, c.handle) for c in (
            model.objects.channels.values() if model.objects is not None else ())}
        if not any(channel in pair for pair in held):
            _absent(f"channel {channel:#x}", "channels (token/handle)",
                    {p for p in held if p[0] is not None}, lambda p: f"{p[0]:#x}/{p[1]:#x}")
    if cls is not None:
        held = set(held_classes)
        if model.objects is not None:
            held |= {o.hclass for o in model.objects.objects.values()}
        if cls not in held:
            held |= {c for c in map(_launch_class, model.launches) if c is not None}
        if cls not in held:
            _absent(f"class {_class_label(cls, branch)}", "classes", held,
                    lambda c: _class_label(c, branch))
    if ioctl is not None and not any(ioctl_matches(i, ioctl, branch) for i in model.ioctls):
        raise SelectError(f"no ioctl of the capture has an escape, RM control or class name "
                          f"containing {ioctl!r}; its escapes are "
                          f"{_listing({i['escape'] for i in model.ioctls}) or 'none'}")

    ioctls = by_pid(model.ioctls)
    if ioctl is not None:
        ioctls = [i for i in ioctls if ioctl_matches(i, ioctl, branch)]
        criteria["ioctl"] = ioctl
    if cls is not None:
        ioctls = [i for i in ioctls if _ioctl_names(i, branch)[3] == cls]
    changes["ioctls"] = ioctls
    changes["mmaps"] = by_pid(model.mmaps)
    changes["opens"] = by_pid(model.opens)
    changes["marks"] = by_pid(model.marks)
    changes["windows"] = by_pid(model.windows)

    # A launch's process is its submission's (launches name the SUBMISSION record they
    # came from; record indices are unique in a capture). The launches kept are positions
    # in model.launches (Picked), found in one pass.
    picked = None
    if launches or pid is not None or channel is not None or cls is not None:
        def keeps(l):
            return (pid is None or sub_pid.get(l.record_index) == pid) and \
                (channel is None or channel in (getattr(l, "channel", None),
                                                getattr(l, "hChannel", None))) and \
                (cls is None or _launch_class(l) == cls)
        if launches:
            picked = array("Q", (n for n in launches if keeps(model.launches[n])))
        else:
            picked = array("Q", (n for n, l in enumerate(model.launches) if keeps(l)))
    if launches:
        criteria["launches"] = launches
    if channel is not None:
        criteria["channel"] = channel
    if cls is not None:
        criteria["class"] = cls
    narrowed = bool(launches) or channel is not None or cls is not None
    if picked is not None:
        changes["launches"] = Picked(model.launches, picked)
        changes["rank_counts"] = None       # counted again from the selection
        _tally_again(changes, changes["launches"])
    if subs is not None:
        changes["submissions"] = Picked(model.submissions, subs)
        changes["channel_counts"] = None
        # the syncs and copies of the submissions kept
        changes["syncs"] = Picked(model.syncs, (k for k, x in enumerate(model.syncs)
                                                if x["record_index"] in kept))
        changes["sync_counts"] = _sync_counts(changes["syncs"])
        changes["copies"] = Picked(model.copies, (k for k, x in enumerate(model.copies)
                                                  if x["record_index"] in kept))
        changes["copy_counts"] = Counter(x["direction"] for x in changes["copies"])

    if pid is not None:
        changes["processes"] = {p: v for p, v in model.processes.items() if p == pid}
        changes["notes"] = by_pid(model.notes)
        changes["shim_stats"] = dict(model.shim_stats_by_pid.get(pid, {}))
        criteria["pid"] = pid
    if pid is not None or narrowed:
        _calls_of_selection(model, changes, pid, narrowed, changes["launches"], kept)
    if narrowed:
        changes["shim_stats"] = {"doorbells": len(changes["submissions"])}
    if criteria:
        if picked is not None and len(picked) < len(model.launches):
            criteria["launch_indices"] = picked.tolist()
        changes["meta"] = dict(model.meta, filter=criteria)
    return dataclasses.replace(model, **changes)


def _sync_counts(syncs):
    """model.sync_counts over a selection's syncs."""
    from decoders.launch.syncs import count_sync
    counts = Counter()
    for x in syncs:
        count_sync(counts, x)
    return counts


def _tally_again(changes, launches):
    """The kernel launch tally and outcomes (decoders/session.py _tally) of the selected
    launches, numbered within the selection."""
    from decoders.session import _VERIFIED, _tally
    tally = SimpleNamespace(kernel_tally={}, mismatched=[], scheduling_qmds=0, launches=[],
                            conditional_bodies=0)
    verified = Counter()
    for l in launches:
        s = _summary(l)
        a = s.get("attribution")
        if s.get("kernel") and a is not None:
            sent = (a.get("graph_node") or {}).get("sent_by")
            verified["graph_prepared" if sent else
                     _VERIFIED.get(a["verified"], "not_checked")] += 1
        _tally(tally, s, a)
        tally.launches.append(None)
    changes.update(kernel_tally=tally.kernel_tally, mismatched=tally.mismatched,
                   scheduling_qmds=tally.scheduling_qmds, verified=verified,
                   conditional_bodies=tally.conditional_bodies)


def _calls_of_selection(model, changes, pid, narrowed, launches, kept):
    """The API calls (with the failed and unfinished ones, and their names counted) of
    the selection: the process's with `pid`; with a criterion on submissions or launches,
    those that rang a selected submission's doorbell or that a selected launch is
    attributed to."""
    keep = None
    if narrowed:
        keep = set()
        subs = kept
        for l in launches:
            call = _summary(l).get("api_call")
            if call is not None:
                keep.add(call["index"])

    def wanted(index, call_pid, call_subs):
        if pid is not None and call_pid != pid:
            return False
        return keep is None or index in keep or any(x in subs for x in call_subs)

    calls = Picked(model.api_calls, (k for k, c in enumerate(model.api_calls)
                                     if wanted(c["index"], c["pid"], c.get("submissions") or ())))
    changes["api_calls"] = calls
    changes["api_call_names"] = Counter(c["name"] for c in calls)
    changes["failed_calls"] = [c for c in model.failed_calls
                               if wanted(c["index"], c["pid"], c.get("submissions") or ())]
    changes["failed_call_count"] = (len(changes["failed_calls"]) if
                                    len(model.failed_calls) == model.failed_call_count else
                                    sum(1 for c in calls if c.get("result")))
    unfinished = [c for c in (model.api.unfinished if model.api is not None else ())
                  if wanted(c.index, c.pid, c.submissions)]
    changes["api"] = SimpleNamespace(unfinished=unfinished)


def _summary(launch):
    """A launch's summary as decoded, to read (decoders/launch.py Launch: the summary
    without every QMD field extracted, which .summary would do)."""
    s = getattr(launch, "_summary", None)
    return s if s is not None else (launch.summary if hasattr(launch, "summary") else launch)


def _launch_class(launch):
    c = _summary(launch).get("class")
    if isinstance(c, str):
        return int(c, 16)
    return c
