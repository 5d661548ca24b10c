"""The model a decode fills: the data the report and the JSON render (docs/json.md), and
the views over it that walk its lists once (submissions per channel, marked launches).
How launches, API calls and ioctls are written to and read back from a SpillList's file."""
import bisect
from collections import Counter
from dataclasses import dataclass, field

from decoders.spill import SpillList

# Submissions and launches kept as objects before a SpillList writes the rest to its file:
# a short capture never touches the disk; a long one costs ~40 MiB however long it is
# (bench/decode_rss.py on captures/launch-loop-10k: keep 0 -> 42 MiB peak, 4096 -> 99 MiB,
# all in memory -> 310 MiB).
DEFAULT_KEEP = 256




def _launch_dump(launch):
    s = launch._summary
    if s["qmd_fields"] is not None:     # every field is rebuilt from the QMD bytes on load
        s = dict(s)
        s["qmd_fields"] = None
    # cbank0_driver, when not made yet, goes as its bytes (Launch._driver) and is made on load
    return (s, launch.qmd_bytes, launch.version, launch.record_index, launch.submission_index,
            launch.channel, launch.pid, launch.hChannel, launch._driver)


def _api_call_load(t):
    """A spilled API call: ApiCall.compact() parsed again, to_json() and its kernel name."""
    from decoders.cuda.calls import ApiCall
    compact, kernel = t
    if compact is None:             # a call whose records' bytes were not at hand: its dict
        return kernel
    d = ApiCall.restore(compact).to_json()
    if kernel:
        d["kernel"] = kernel[0]
    return d


class IoctlList(SpillList):
    """model.ioctls of a decode: a SpillList that counts its entries as they come, by device
    file and escape, and the failed ones: the report's counts, without reading back what
    went to the file or what a brief decode dropped. A job without a caching allocator makes
    RM ioctls every step (PyTorch with PYTORCH_NO_CUDA_MEMORY_CACHING=1: ~440 a step,
    measured), so they are not all kept in memory."""

    def __init__(self, keep, drop=False):
        super().__init__(keep, _ioctl_dump, _ioctl_load, drop=drop)
        self.by_device, self.by_escape, self.failed = Counter(), Counter(), 0

    def next_kind(self):
        """What becomes of the next entry: "kept" (in memory), "spilled" (to the file) or
        "dropped" (a brief decode: counted, never read)."""
        if len(self) < self.keep:
            return "kept"
        return "dropped" if self.drop else "spilled"

    def append(self, e):
        self._count(e["path"], e["escape"], e["ret"])
        super().append(e)

    def count_dropped(self, rec, path):
        """An ioctl a brief decode drops, counted without making its entry."""
        from decoders import ioctl as I
        b = rec.body
        self._count(path, I.escape_name(b.request, path), b.ret)
        self._dropped += 1

    def _count(self, path, escape, ret):
        self.by_device[path] += 1
        self.by_escape[escape] += 1
        if ret != 0:
            self.failed += 1


def _ioctl_dump(e):
    """A spilled ioctl entry: its dict less the parsed body (its facts stay: decoders/ioctl.py
    facts)."""
    return {k: v for k, v in e.items() if k != "_body"}


def _ioctl_load(d):
    d["_body"] = None
    return d


def ioctl_counts(ioctls):
    """(Counter by device file, Counter by escape, failed calls) of model.ioctls: counted
    as they came (IoctlList), or walked (a plain list: a selection, a decode keep=None)."""
    if hasattr(ioctls, "by_device"):
        return ioctls.by_device, ioctls.by_escape, ioctls.failed
    return (Counter(i["path"] for i in ioctls), Counter(i["escape"] for i in ioctls),
            sum(1 for i in ioctls if i["ret"] != 0))


def _launch_load(t):
    from decoders.launch import Launch
    s, qmd, version, ri, si, channel, pid, hch, driver = t
    launch = Launch(s, qmd, None, version, driver=driver)
    launch.record_index, launch.submission_index, launch.channel = ri, si, channel
    launch.pid, launch.hChannel = pid, hch
    return launch


@dataclass
class CaptureModel:
    path: str
    meta: dict
    header: dict
    processes: dict = field(default_factory=dict)       # pid -> {exe, cmdline, ppid, how, exit}
    ioctls: list = field(default_factory=list)
    mmaps: list = field(default_factory=list)
    opens: list = field(default_factory=list)
    marks: list = field(default_factory=list)
    notes: list = field(default_factory=list)     # the shim's NOTE records, one line each
    submissions: list = field(default_factory=list)
    launches: list = field(default_factory=list)
    shim_stats: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)         # CaptureError / TraceLaunchError
    end: dict = None
    objects: object = None                               # decoders.rm.objects.ObjectTree
    records: int = 0
    unfinished: list = field(default_factory=list)
    api_calls: list = field(default_factory=list)        # ApiCall.to_json() dicts, in order
    api_call_names: Counter = field(default_factory=Counter)     # api_calls' names, counted
    api: object = None                                    # decoders.cuda.calls.ApiCalls
    attribution: object = None                            # decoders.cuda.attribute.Attribution
    verified: Counter = field(default_factory=Counter)   # kernel launches: verified/mismatch/...
    # kernel QMDs of conditional bodies: sent with every replay, run or not (docs/graphs.md)
    conditional_bodies: int = 0
    images_elided: int = 0      # distinct module images that lost other GPUs' fatbin entries
    # kernel launches by (kernel name or None, grid, block) -> Counter of outcomes, and the
    # indices of mismatched launches: what a report that shows a few launches sums up
    kernel_tally: dict = field(default_factory=dict)
    mismatched: list = field(default_factory=list)
    scheduling_qmds: int = 0    # the driver's GRID_NULL QMDs (no kernel)
    # a split decode (decoders/session/split.py): "front", or why it went on in one process
    split: str = None
    # a decode stopped by decode_capture's `until`: the records it read (None: read to the end)
    until_record: int = None
    # semaphore methods no launch holds: waits, and releases on a channel with no launch
    # (decoders/session/launches.py LaunchSink.sync), and their counts
    syncs: list = field(default_factory=list)
    sync_counts: Counter = field(default_factory=Counter)
    # copy engine transfers (LaunchSink.copy), and their counts by direction
    copies: list = field(default_factory=list)
    copy_counts: Counter = field(default_factory=Counter)
    # API calls that returned a CUresult other than CUDA_SUCCESS (to_json() dicts, the first
    # FAILED_KEPT of them), and how many there were: what the report's header lists first
    failed_calls: list = field(default_factory=list)
    failed_call_count: int = 0
    shim_stats_by_pid: dict = field(default_factory=dict)   # pid -> its STATS counters
    # capture windows, one per process (decoders/window.py Windows.finish); [] without one
    windows: list = field(default_factory=list)
    # Counted as the records are fed, so that a report never reads a long list back to
    # count it: submissions per (pid, work-submit token) (channels()), and kernel launches
    # per process (tracer/report.py render_ranks). None (counted from the list then) in a
    # model a decode did not fill, or where a selection (decoders/select.py) replaced it.
    channel_counts: dict = None
    rank_counts: dict = None
    # A brief decode (decode_capture(brief=N)): the launch, API call, sync and copy lists
    # keep their first N items and count the rest (decoders/spill.py drop=True); what the
    # text report shows beyond them is kept apart: the mismatched launches (pinned), and
    # per failed API call the number of the launch before it (failed_before).
    brief: int = None
    failed_before: dict = field(default_factory=dict)

    def attribute(self, launch):
        """The launch's API call, kernel, arguments and verification (summary["attribution"])."""
        s = launch.summary if hasattr(launch, "summary") else launch
        return s.get("attribution")

    @property
    def cut_short(self):
        return self.end is None

    def stats(self):
        by_dev, by_esc, _ = ioctl_counts(self.ioctls)
        cc = self.channel_counts
        lost = sum(c["lost"] for c in cc.values()) if cc is not None else \
            sum(s["lost"] for s in self.submissions)
        out = {
            "records": self.records,
            "ioctls": len(self.ioctls), "mmaps": len(self.mmaps),
            "ioctls_by_device": dict(sorted(by_dev.items())),
            "ioctls_by_escape": dict(sorted(by_esc.items(), key=lambda kv: (-kv[1], kv[0]))),
            "submissions": len(self.submissions), "submissions_lost": lost,
            "doorbells": self.shim_stats.get("doorbells"),
            "launches": len(self.launches),
            "processes": len(self.processes),
            "shim": dict(self.shim_stats),
            "problems": len(self.problems),
            "cut_short": self.cut_short,
            "api_calls": len(self.api_calls),
            "api_calls_unfinished": len(self.api.unfinished) if self.api is not None else 0,
            "kernel_launches": dict(self.verified),
            "conditional_body_launches": self.conditional_bodies,
            "syncs": dict(sorted(self.sync_counts.items())),
            "copies": dict(sorted(self.copy_counts.items())),
            "module_images_entries_elided": self.images_elided,
        }
        return out



def capture_header(hdr):
    """The model's `header` dict of a capture's file header (reader.header)."""
    return {"version": hdr.version, "t_start_ns": hdr.t_start_ns, "wall_ns": hdr.wall_ns,
            "tracer_pid": hdr.tracer_pid, "cursor": hdr.cursor}



def mark_pairs(marks, limit=None):
    """[(record of the BEGIN, the END mark)] of a thread's BEGIN and END marks of one id, in
    the order they end; the first `limit` pairs (all when None)."""
    pairs = []
    opened = {}
    for m in marks:
        key = (m["pid"], m["tid"], m["id"])
        if m["kind"] == "BEGIN":
            opened[key] = m["index"]
        elif m["kind"] == "END" and key in opened:
            pairs.append((opened.pop(key), m))
            if limit is not None and len(pairs) >= limit:
                break
    return pairs


class MarkedRecords:
    """Whether a record of a thread lies between one of its BEGIN and END mark pairs
    (mark_pairs): what marked_submissions finds, asked one record at a time."""

    def __init__(self, marks):
        spans = {}
        for lo, m in mark_pairs(marks):
            spans.setdefault((m["pid"], m["tid"]), []).append((lo, m["index"]))
        self._starts, self._reach = {}, {}
        for key, got in spans.items():
            got.sort()
            reach, far = [], -1
            for _, hi in got:           # the farthest END of the pairs begun so far
                far = max(far, hi)
                reach.append(far)
            self._starts[key] = [lo for lo, _ in got]
            self._reach[key] = reach

    def __bool__(self):
        return bool(self._starts)

    def __contains__(self, where):
        """`where`: (pid, tid, record index)."""
        pid, tid, index = where
        starts = self._starts.get((pid, tid))
        if not starts:
            return False
        k = bisect.bisect_left(starts, index)      # the pairs begun before the record
        return k > 0 and self._reach[(pid, tid)][k - 1] > index


def marked_submissions(model, limit=None):
    """Submissions whose doorbell rang between a BEGIN and END mark of the same thread: the
    first `limit` mark pairs (all when None). The submissions are in record order, so each
    pair finds its range by bisection: a capture of many marks and many submissions is not
    read once per mark (it was, from the spill file)."""
    pairs = mark_pairs(model.marks, limit)
    if not pairs:
        return []
    indices = [s["index"] for s in model.submissions]       # one pass, in record order
    out = []
    for lo, m in pairs:
        a = bisect.bisect_right(indices, lo)
        b = bisect.bisect_left(indices, m["index"])
        subs = [s for s in (model.submissions[k] for k in range(a, b))
                if s["pid"] == m["pid"] and s["tid"] == m["tid"]]
        out.append((m, subs))
    return out


def channels(model):
    """Per channel: class, token, submissions, GP entries (as counted while decoding, or
    from the submissions of a selection)."""
    ch = model.channel_counts
    if ch is None:
        ch = {}
        for s in model.submissions:
            count_submission(ch, s["pid"], s["token"], s["channel"], s["class"],
                             len(s["entries"]), sum(g["size"] for g in s["segments"]), s["lost"])
    return [dict(ch[k]) for k in sorted(ch)]


def submission_head(b):
    """(token, hClient, hChannel, hClass, GP entries, segment bytes, lost) of a parsed
    SUBMISSION body: what the channel counts and a split decode's groups need of it."""
    return (b["token"], b["hClient"], b["hChannel"], b["hClass"], len(b["entries"]),
            sum(g["size"] for g in b["segments"]), b["lost"])


def count_submission(counts, pid, token, channel, cls, entries, nbytes, lost):
    """One submission into channel counts (model.channel_counts): the channel handle and
    class its last submission gave."""
    c = counts.get((pid, token))
    if c is None:
        c = counts[(pid, token)] = {"submissions": 0, "entries": 0, "bytes": 0, "lost": 0}
    c.update(pid=pid, token=token, channel=channel, cls=cls)
    c["submissions"] += 1
    c["entries"] += entries
    c["bytes"] += nbytes
    c["lost"] += lost


def count_rank_launch(counts, s):
    """A kernel launch (its summary) into per-process counts (model.rank_counts): pid ->
    (Counter of kernel names, {NCCL work key: [works, bytes]})."""
    if not s.get("kernel"):
        return
    a = s.get("attribution") or {}
    name = (a.get("kernel") or {}).get("name") or "(kernel not named)"
    pid = s.get("pid")
    got = counts.get(pid)
    if got is None:
        got = counts[pid] = (Counter(), {})
    got[0][name] += 1
    for work in (a.get("nccl") or {}).get("works") or ():
        f = work.get("func") or {}
        key = " ".join(x for x in (f.get("coll"), f.get("redop"), f.get("type"),
                                   f.get("algo"), f.get("proto")) if x) or "?"
        t = got[1].setdefault(key, [0, 0])
        t[0] += 1
        t[1] += work.get("bytes") or 0

