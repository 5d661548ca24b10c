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

Launch indices are positions in `model.launches` of the unfiltered model, as the report
numbers them ("launch 3"). Stats (`model.stats()`) are computed from the lists, so they
count what was selected; `records` stays the number of records read. The copy's
`meta` gains a `filter` key naming the criteria and, when launches were left out,
`launch_indices`: where the kept launches are in the whole capture (docs/json.md).
"""
import dataclasses

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
    """(escape, control name or None, class name or None, class id or None) of one ioctl."""
    from decoders.ioctl import decode_ioctl
    esc = entry["escape"]
    control = cname = cid = None
    body = entry.get("_body")
    if body is not None and esc.startswith("NV_ESC_RM_"):
        try:
            node = decode_ioctl(body, branch)
        except TraceLaunchError:
            node = None
        if node is not None:
            c = node.find("ioctl.control")
            if c is not None:
                control = c.display
            k = node.find("ioctl.class")
            if k is not None:
                cname, cid = k.display, k.raw
    return esc, control, cname, cid


def ioctl_matches(entry, name, branch="580"):
    """True when `name` (case-insensitive) is part of the ioctl's escape (NV_ESC_RM_CONTROL,
    UVM_MAP_EXTERNAL_ALLOCATION), its RM control name or its allocated class's name."""
    want = name.upper()
    if want in entry["escape"].upper():
        return True
    _, control, cname, _ = _ioctl_names(entry, branch)
    return any(want in x.upper() for x in (control, cname) if x)


def select(model, launches=(), channel=None, cls=None, ioctl=None, pid=None):
    """A filtered shallow copy of `model` (see the module docstring). `launches`: launch
    indices; `channel`: work-submit token or channel handle; `cls`: class id or name;
    `ioctl`: a name substring; `pid`: a process id. None / empty means no criterion."""
    launches = sorted({int(n) for n in launches or ()})
    channel = parse_int(channel) if channel is not None else None
    branch = _branch(model)
    cls = class_id(cls, branch) if cls is not None else None
    pid = int(pid) if pid is not None else None
    changes = {}
    criteria = {}

    def by_pid(rows):
        return [r for r in rows if r["pid"] == pid] if pid is not None else list(rows)

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
    # came from; record indices are unique in a capture).
    sub_pid = {s["index"]: s["pid"] for s in model.submissions}
    picked = list(enumerate(model.launches))
    if launches:
        bad = [n for n in launches if not 0 <= n < len(model.launches)]
        if bad:
            raise SelectError(f"no launch {bad[0]}: the capture has {len(model.launches)} "
                              f"launch(es), numbered from 0")
        picked = [(n, model.launches[n]) for n in launches]
        criteria["launches"] = launches
    if pid is not None:
        picked = [(n, l) for n, l in picked if sub_pid.get(l.record_index) == pid]
    if channel is not None:
        picked = [(n, l) for n, l in picked if channel in (getattr(l, "channel", None),
                                                             getattr(l, "hChannel", None))]
        criteria["channel"] = channel
    if cls is not None:
        picked = [(n, l) for n, l in picked if _launch_class(l) == cls]
        criteria["class"] = cls
    changes["launches"] = [l for _, l in picked]

    subs = by_pid(model.submissions)
    if launches:
        carried = {l.record_index for _, l in picked}
        subs = [s for s in subs if s["index"] in carried]
    if channel is not None:
        subs = [s for s in subs if channel in (s["token"], s["channel"])]
    if cls is not None:
        subs = [s for s in subs if s["class"] == cls]
    changes["submissions"] = subs

    if pid is not None:
        changes["processes"] = {p: v for p, v in model.processes.items() if p == pid}
        criteria["pid"] = pid
    if criteria:
        if len(picked) < len(model.launches):
            criteria["launch_indices"] = [n for n, _ in picked]
        changes["meta"] = dict(model.meta, filter=criteria)
    return dataclasses.replace(model, **changes)


def _launch_class(launch):
    s = launch.summary if hasattr(launch, "summary") else launch
    c = s.get("class")
    if isinstance(c, str):
        return int(c, 16)
    return c
