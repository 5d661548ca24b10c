"""A decoded capture as a Chrome / Perfetto trace (the Trace Event Format, JSON).

`timeline(model)` returns `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData":
{...}}` for https://ui.perfetto.dev or chrome://tracing. docs/timeline.md describes the
tracks; in short:

- one track per traced thread (pid, tid as recorded): every ioctl as a complete ("X")
  event named by its escape (plus the RM control or class: `RM_CONTROL
  NV2080_CTRL_CMD_GPU_GET_INFO_V2`), MARK pairs (BEGIN..END) as X events, POINT marks and
  each doorbell the thread rang as instant ("i") events, and API calls
  (`model.api_calls`, when the capture has them) as X events;
- one track per GPU channel, all under one synthetic process "GPU channels"
  (pid CHANNEL_PID, one tid per channel in (pid, token) order): each submission as an
  X event at its doorbell time with its token, channel handle, class, GP_PUT range, GP
  entries, pushbuffer bytes and the launches decoded from it (grid, block, QMD address,
  kernel name where a mark or an API call around the doorbell names it). The capture
  records no GPU completion times, so a submission has duration 0.

Times are microseconds from the capture start (the header's t_start_ns; from the
earliest record instead should one come before it, see otherData.t_origin_ns).
Synthetic pids and tids lie above Linux's PID_MAX_LIMIT (2^22) so they never meet real
ones. X events of one track nest properly: an event that would overlap another without
nesting (which the recorder should never produce) goes to the thread's "(overlapping)"
track instead of breaking the file.
"""
import heapq
import os
from array import array

# a launch's summary read as decoded, without every QMD field extracted (which .summary
# does): the one select.py reads
from decoders.extsort import ExternalSort
from decoders.jsontext import compact_encoder
from decoders.select import _summary

PID_MAX_LIMIT = 1 << 22                  # linux/threads.h: no pid or tid above this
CHANNEL_PID = PID_MAX_LIMIT + 1          # the synthetic "GPU channels" process
OVERLAP_TID = PID_MAX_LIMIT + 1          # tid + this: a thread's overflow track
CHANNEL_TID = 2 * PID_MAX_LIMIT + 2      # + n: a ranked process's n-th channel track

_NAMED_ESCAPES = ("RM_CONTROL", "RM_ALLOC", "RM_ALLOC_MEMORY")


_LEAVES = frozenset((str, int, bool, float, type(None)))   # kept as they are (exact types)


def _clean(obj):
    """Args made JSON-safe: bytes as hex, tuples as lists, other objects as str."""
    if obj.__class__ in _LEAVES:
        return obj
    if isinstance(obj, dict):
        return {str(k): v if v.__class__ in _LEAVES else _clean(v)
                for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, (list, tuple)):
        return [v if v.__class__ in _LEAVES else _clean(v) for v in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).hex()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return str(obj)


def ioctl_event_name(entry):
    """`RM_CONTROL NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION`, `UVM_INITIALIZE`, `CARD_INFO`."""
    words = str(entry.get("summary") or entry.get("escape") or "ioctl").split()
    head = words[0].rstrip(":") if words else "ioctl"
    if head in _NAMED_ESCAPES and len(words) > 1:
        return f"{head} {words[1].rstrip(':')}"
    return head


def _dims(v):
    return "x".join(str(x) for x in v) if v else "?"


class _Builder:
    """The events of a timeline as they are made: X events into a sorter by track and
    start (their nesting is checked track by track once all are made), instants into the
    sorter of the document's order (decoders/extsort.py: a long job's events are never all
    in memory)."""

    def __init__(self, model, progress=None):
        self.model = model
        self.progress = progress
        self.made = 0
        self.x = ExternalSort()         # ((pid, tid, start, -end), (event, name patch))
        self.events = ExternalSort()    # ((ts, -dur, pid, tid), event): the document's order
        self.threads = {}           # (pid, tid) -> name
        self.channel_names = {}     # channel tid -> name
        self.t0 = (model.header or {}).get("t_start_ns")
        self.earliest = None    # the earliest ioctl, submission, mark or API call (seen())
        self.origin = None      # once every event is made (_build): what ts counts from

    def seen(self, t):
        """A time of an ioctl, a submission, a mark or an API call: the origin is the
        header's start, or the earliest of these where one comes before it. The events
        hold ns until they are written (_document_events): no pass of its own for it."""
        if isinstance(t, int) and t > 0 and (self.earliest is None or t < self.earliest):
            self.earliest = t

    def settle_origin(self):
        t0, earliest = self.t0, self.earliest
        self.origin = earliest or 0 if t0 is None or (earliest is not None and earliest < t0) \
            else t0

    def api_calls(self):
        # a long capture's calls are read back from the spill file, a batch at a time
        return getattr(self.model, "api_calls", None) or ()

    def us(self, t_ns):
        return round((t_ns - self.origin) / 1000.0, 3)

    def thread(self, pid, tid):
        key = (pid, tid)
        if key not in self.threads:
            self.threads[key] = "main thread" if pid == tid else f"thread {tid}"
        return key

    def complete(self, pid, tid, name, cat, start, end, args, patch=None, clean=True):
        """An X event; `patch`: (doorbell number, grid, kernel launches) of a submission
        whose name waits for the doorbells' kernel names (timeline). clean=False: `args`
        is _clean's already (made by a view, _each)."""
        end = max(end, start)
        # ts in ns from the capture's clock until written (us() then): the same order
        ev = {"name": name, "cat": cat, "ph": "X", "ts": start,
              "dur": round((end - start) / 1000.0, 3), "pid": pid, "tid": tid,
              "args": _clean(args) if clean else args}
        if pid != CHANNEL_PID:
            self.thread(pid, tid)
        self.x.add((pid, tid, start, -end), (ev, patch))
        self.step()

    def instant(self, pid, tid, name, cat, t, args, scope="t", clean=True):
        if pid != CHANNEL_PID:      # (a channel track is named by metadata(), not as a thread)
            self.thread(pid, tid)
        self._event({"name": name, "cat": cat, "ph": "i", "s": scope, "ts": t,
                     "pid": pid, "tid": tid, "args": _clean(args) if clean else args})

    def _event(self, e):
        self.events.add((e["ts"], -e.get("dur", 0), e["pid"], e["tid"]), e)
        self.step()

    def step(self):
        """An event made, an X event placed in its track, or an event written (the passes
        over a long job's events): progress(steps so far, None) now and then."""
        self.made += 1
        if self.progress is not None and not self.made % PROGRESS_EVENTS:
            self.progress(self.made, None)

    def flush_complete(self, names):
        """Emit X events track by track, moving any that breaks nesting to an overflow track;
        `names(k)`: the kernel name of doorbell k (_KernelNames), for the submissions'."""
        track, stack = None, []
        for (pid, tid, start, neg_end), (ev, patch) in self.x:
            end = -neg_end
            if (pid, tid) != track:
                track, stack = (pid, tid), []
            if patch is not None:
                k, grid, n = patch
                kname = names(k)
                ev["name"] = f"{kname or 'launch'} grid {_dims(grid)}" + (
                    f" (+{n - 1} more)" if n > 1 else "")
                if kname:
                    ev["args"]["kernel_name"] = kname
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                ev["tid"] = OVERLAP_TID + tid
                ev["args"]["moved"] = "overlaps an event of its thread without nesting"
                base = self.threads.get((pid, tid)) or self.channel_names.get(tid, f"track {tid}")
                self.threads[(pid, ev["tid"])] = f"{base} (overlapping)"
            else:
                stack.append(end)
            self._event(ev)

    def metadata(self, channel_names, own_channels=(), ranks=None):
        """`own_channels`: [(pid, tid, name)] of channel tracks kept in their own process;
        `ranks`: {pid: (label, rank)} of the processes named after their rank."""
        m = self.model
        meta = []
        ranks = ranks or {}
        pids = sorted(({p for p, _ in self.threads} | set(m.processes)) - {CHANNEL_PID})
        for pid in pids:
            p = m.processes.get(pid) or {}
            cmd = " ".join(p.get("cmdline") or []) or p.get("exe") or ""
            name = f"{os.path.basename(p.get('exe') or '') or 'process'} {cmd}".strip()[:120]
            if pid in ranks:
                name = ranks[pid][0]
                if ranks[pid][1] is not None:
                    meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                                 "args": {"sort_index": ranks[pid][1]}})
            meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"name": name}})
        for pid, tid, name in own_channels:
            meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"name": name}})
            meta.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"sort_index": tid}})
        own = {(pid, tid) for pid, tid, _ in own_channels}
        for (pid, tid), name in sorted(self.threads.items()):
            if (pid == CHANNEL_PID and tid in dict(channel_names)) or (pid, tid) in own:
                continue
            meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"name": name}})
        if channel_names:
            meta.append({"name": "process_name", "ph": "M", "pid": CHANNEL_PID, "tid": 0,
                         "args": {"name": "GPU channels"}})
            meta.append({"name": "process_sort_index", "ph": "M", "pid": CHANNEL_PID, "tid": 0,
                         "args": {"sort_index": 1 << 30}})
            for tid, name in channel_names:
                meta.append({"name": "thread_name", "ph": "M", "pid": CHANNEL_PID, "tid": tid,
                             "args": {"name": name}})
                meta.append({"name": "thread_sort_index", "ph": "M", "pid": CHANNEL_PID,
                             "tid": tid, "args": {"sort_index": tid}})
        return meta


def _mark_ranges(model):
    """[(pid, tid, label, t_begin, t_end, id)] of BEGIN..END pairs; [mark] left over."""
    opened, pairs, single = {}, [], []
    for m in model.marks:
        key = (m["pid"], m["tid"], m["id"])
        if m["kind"] == "BEGIN":
            if key in opened:
                single.append(opened[key])
            opened[key] = m
        elif m["kind"] == "END" and key in opened:
            b = opened.pop(key)
            pairs.append((m["pid"], m["tid"], b["label"] or m["label"], b["t"], m["t"], m["id"]))
        else:
            single.append(m)
    single.extend(opened.values())
    return pairs, single


class _KernelNames:
    """The name of what was launched at each doorbell, numbered in the order given
    (doorbell()): from the first API call (in api_calls' order, call()) around it on the
    same thread (_call_label: its attributed kernel, else its args' kernel/function/name,
    else the call's name), else from the first mark pair around it (the built-in launch
    marks `cuLaunchKernel vadd`), else None. The calls and doorbells are sorted on disk
    (_Around); what stays is a number per call and per doorbell."""

    def __init__(self, mark_pairs):
        self.labels = _Labels()
        self.calls = _Around()
        self.marks = _Around() if mark_pairs else None
        self.pairs = mark_pairs
        if self.marks is not None:
            for p, th, _, t0, t1, _ in mark_pairs:
                self.marks.span(p, th, t0, t1)
        self.n = 0

    def call(self, pid, tid, start, end, label):
        """An API call (pid and tid as recorded, None where absent), and its _call_label."""
        self.calls.span(pid, tid, start, end)
        self.labels.append(label)

    def doorbell(self, t, pid, tid):
        """Its number (what names() is indexed by)."""
        self.calls.point(t, pid, tid)
        if self.marks is not None:
            self.marks.point(t, pid, tid)
        self.n += 1
        return self.n - 1

    def names(self):
        """name(k) of doorbell k (once every call and doorbell is in)."""
        call = array("i", [-1]) * self.n      # the label of the call around it
        for k, n in self.calls.pairs():
            call[k] = self.labels.ids[n]
        mark = array("i", [-1]) * self.n      # else the mark pair around it
        if self.marks is not None:
            for k, n in self.marks.pairs():
                mark[k] = n
        texts, pairs = self.labels.texts, self.pairs

        def name(k):
            if call[k] >= 0:
                return texts[call[k]]
            return pairs[mark[k]][2] if mark[k] >= 0 else None
        return name


class _Labels:
    """Each API call's label (_call_label) as a number into the distinct labels: a long
    job's calls name the same few hundred kernels (4 bytes a call, not a string each)."""

    def __init__(self):
        self.ids = array("I")
        self.texts = []
        self._index = {}

    def append(self, text):
        n = self._index.get(text)
        if n is None:
            n = self._index[text] = len(self.texts)
            self.texts.append(text)
        self.ids.append(n)

    def __call__(self, n):
        return self.texts[self.ids[n]]


def _call_label(a):
    if isinstance(a.get("kernel"), str):     # the attributed kernel (decoders/cuda)
        return f"{a.get('name')} {a['kernel']}"
    args = a.get("args") or {}
    for key in ("kernel", "function", "func", "name"):
        if isinstance(args.get(key), str):
            return args[key]
    return a.get("name")


def _first_around(points, spans):
    """{k: n} for each point k = (t, pid, tid) that a span n = (pid, tid, start, end) holds
    (start <= t <= end on its thread): the lowest such n (_Around)."""
    around = _Around()
    for pid, tid, start, end in spans:
        around.span(pid, tid, start, end)
    for t, pid, tid in points:
        around.point(t, pid, tid)
    return dict(around.pairs())


def _thread(v):
    """A pid or tid as a sort key (None, where a capture lacks one, sorts apart)."""
    return (v is None, v or 0)


class _Around:
    """Spans and points, each numbered in the order given, sorted on disk by thread and
    time (decoders/extsort.py); pairs() gives (k, n) for each point k that a span n holds
    (start <= t <= end on its thread), n the lowest such. Per thread, points in time order
    meet the spans started by then in a heap by n; a span that ended before one point ended
    before every later one, so it leaves the heap for good when it reaches the top. (Asking
    each call of a long capture at each doorbell was quadratic: 12.5 s for launch-loop-10k's
    10,100 doorbells.)"""

    def __init__(self):
        self._spans = ExternalSort()
        self._points = ExternalSort()
        self._n = self._k = 0

    def span(self, pid, tid, start, end):
        self._spans.add((_thread(pid), _thread(tid), start, self._n), end)
        self._n += 1

    def point(self, t, pid, tid):
        self._points.add((_thread(pid), _thread(tid), t, self._k), None)
        self._k += 1

    def pairs(self):
        spans = iter(self._spans)
        held = next(spans, None)
        track, heap = None, []
        for (pid, tid, t, k), _ in self._points:
            if (pid, tid) != track:
                track, heap = (pid, tid), []
                while held is not None and held[0][:2] < track:
                    held = next(spans, None)
            while held is not None and held[0][:2] == track and held[0][2] <= t:
                heapq.heappush(heap, (held[0][3], held[1]))
                held = next(spans, None)
            while heap and heap[0][1] < t:
                heapq.heappop(heap)
            if heap:
                yield k, heap[0][0]


def _ranks(model):
    """({pid: (process name, rank or None)} of the processes shown by rank: those with a
    rank, or every process that rang a doorbell when more than one did; a function
    (pid, hChannel) -> the GPU of that channel or None), from decoders/ranks.py."""
    from decoders.ranks import processes_meta, rank_label
    gm = getattr(getattr(model, "objects", None), "gpus", None)
    if gm is None or not getattr(model, "processes", None):
        return {}, lambda pid, ch: None
    memo = {}

    def gpu(pid, ch):
        if (pid, ch) not in memo:
            memo[(pid, ch)] = gm.channel_gpu(pid, ch)
        return memo[(pid, ch)]
    procs = processes_meta(model)
    ranked = {p["pid"] for p in procs if p.get("rank") is not None}
    if not ranked:
        ringing = {pid for pid, chans in gm.channels.items() if chans}
        ranked = ringing if len(ringing) > 1 else set()
    return {p["pid"]: (rank_label(p), p.get("rank")) for p in procs if p["pid"] in ranked}, gpu


PROGRESS_EVENTS = 4096      # events between two calls of a progress callback


def timeline(model):
    """The trace-event JSON object of a CaptureModel (or any object with the same lists)."""
    b, other = _build(model)
    return {"traceEvents": list(_document_events(b)), "displayTimeUnit": "ns",
            "otherData": other}


def _each(seq, view):
    """view(item) of each item of seq, in order (write_timeline's `each` by default)."""
    return map(view, seq)


def write_timeline(model, out, progress=None, each=_each):
    """timeline(model) written as json.dump(..., separators=(",", ":")) writes it, an event
    at a time: the events of a long job are sorted on disk (decoders/extsort.py), never
    all held. `progress(done, None)` now and then: the work done on events so far (each
    made, each X event placed in its track, each written: _Builder.step). `each(seq, view)`:
    view(item) of each item of a model's list, in order (tracer/parallel.py map_ranges:
    made by worker processes; a view returns only what marshal takes)."""
    b, other = _build(model, progress, each)
    encode = compact_encoder()      # (orjson where it writes json's text: decoders/jsontext.py)
    out.write('{"traceEvents":[')
    for n, e in enumerate(_document_events(b)):
        out.write(("," if n else "") + encode(e))
        b.step()
    out.write('],"displayTimeUnit":"ns","otherData":' + encode(other) + "}\n")


def _document_events(b):
    yield from b.meta
    us = b.us
    for _, e in b.events:
        e["ts"] = us(e["ts"])
        yield e


# What the timeline takes of each item of a model's long lists (`each`'s views): the
# reading back and the args made JSON-safe, the work per item, done where `each` does it.

def _ioctl_view(i):
    start = i["t_start"]
    end = i["t_end"] if i.get("complete", True) and i["t_end"] >= start else start
    return (i["pid"], i["tid"], ioctl_event_name(i), start, end, _clean({
        "index": i["index"], "fd": i["fd"], "path": i["path"], "escape": i["escape"],
        "request": f"{i['request']:#x}", "ret": i["ret"], "errno": i["errno"],
        "complete": i.get("complete", True), "summary": i.get("summary")}))


def _api_view(a):
    return (a["pid"], a["tid"], str(a.get("name") or "api call"), a["t_start"], a["t_end"],
            _clean(dict(a.get("args") or {})), a.get("pid"), a.get("tid"), _call_label(a))


def _channel_view(s):
    return s["pid"], s["token"], s["class"], s["channel"]


def _submission_view(s):
    """(index, pid, tid, token, t, GP entries, the event's args less its launches, the
    doorbell's args)."""
    from decoders.methods import class_info
    info = class_info(s["class"])
    token = f"{s['token']:#x}"
    channel = f"{s['channel']:#x}"
    args = {"record_index": s["index"], "token": token, "channel": channel,
            "class": f"{s['class']:#06x}", "class_name": info.name if info else None,
            "gp_put": f"{s['gp_put_prev']} -> {s['gp_put']} (ring of {s['gp_entries']})",
            "entries": len(s["entries"]), "bytes": sum(g["size"] for g in s["segments"]),
            "lost": s["lost"], "doorbell_thread": f"pid {s['pid']} tid {s['tid']}"}
    return (s["index"], s["pid"], s["tid"], s["token"], s["t"], len(s["entries"]),
            _clean(args), _clean({"record_index": s["index"], "token": token,
                                  "channel": channel, "gp_put": s["gp_put"]}))


def _launch_view(launch):
    """(record index, what the submission's event shows of the launch), or None for a
    launch with no record index (it belongs to no submission's event)."""
    rec = getattr(launch, "record_index", None)
    ls = _summary(launch)
    if rec is None:
        rec = ls.get("record_index")
    if not isinstance(rec, int):
        return None
    return rec, _clean({
        "kernel": ls.get("kernel"), "grid": ls.get("grid"), "block": ls.get("block"),
        "cluster": ls.get("cluster"), "qmd_address": f"{ls.get('qmd_address') or 0:#x}",
        "qmd_version": ls.get("qmd_version"), "source": ls.get("source")})


def _build(model, progress=None, each=_each):
    """A _Builder holding every event of the timeline (b.meta, then b.events in the
    document's order), and the document's otherData. `progress`: _Builder.step's; `each`:
    write_timeline's."""
    from decoders.methods import class_info
    b = _Builder(model, progress)
    for pid, tid, name, start, end, args in each(model.ioctls, _ioctl_view):
        b.seen(start)
        b.complete(pid, tid, name, "ioctl", start, end, args, clean=False)
    pairs, single = _mark_ranges(model)
    for m in model.marks:
        b.seen(m["t"])
    kernel_names = _KernelNames(pairs)      # each call's span and label, for the doorbells
    for pid, tid, name, start, end, args, call_pid, call_tid, label in \
            each(b.api_calls(), _api_view):
        b.seen(start)
        b.complete(pid, tid, name, "api", start, end, args, clean=False)
        kernel_names.call(call_pid, call_tid, start, end, label)
    # every traced process shows, also one that only started a helper program (ptxas, a
    # compile worker) and made no ioctl: its start and exit as instants on its first thread
    for pid, p in sorted((getattr(model, "processes", None) or {}).items()):
        tid = p.get("tid", pid)
        if p.get("t_start") is not None:
            b.instant(pid, tid, f"process start {p.get('exe') or ''}".rstrip(), "process",
                      p["t_start"], {"ppid": p.get("ppid"), "how": p.get("how"),
                                     "cmdline": p.get("cmdline")})
        if p.get("t_exit") is not None:
            b.instant(pid, tid, "process exit", "process", p["t_exit"], {"status": p.get("exit")})
    for pid, tid, label, t0, t1, mid in pairs:
        b.complete(pid, tid, label or f"mark {mid}", "mark", t0, t1, {"id": mid})
    for m in single:
        b.instant(m["pid"], m["tid"], m["label"] or f"mark {m['id']}", "mark", m["t"],
                  {"id": m["id"], "kind": m["kind"]})

    # Ranks (issue 26): a process with a rank, or each process when several rang doorbells,
    # is named after its rank and GPU and holds its own channel tracks; otherwise the
    # channels share the synthetic "GPU channels" process. A channel's track is numbered in
    # (pid, token) order and named from its first submission.
    ranks, gpus = _ranks(model)
    first = {}
    for pid, token, klass, channel in each(model.submissions, _channel_view):
        if (pid, token) not in first:
            first[(pid, token)] = (klass, channel)
    channel_tid = {}            # (pid, token) -> (track pid, tid)
    channel_names = []          # [(tid, name)] under CHANNEL_PID
    own_channels = []           # [(pid, tid, name)] in their own process
    for key in sorted(first):
        pid, token = key
        klass, channel = first[key]
        info = class_info(klass)
        cname = info.name if info else f"class {klass:#06x}"
        g = gpus(pid, channel)
        where = f", GPU {g['index']}" if g and g.get("index") is not None else ""
        if pid in ranks:
            tid = CHANNEL_TID + sum(1 for p, _ in channel_tid if p == pid) + 1
            channel_tid[key] = (pid, tid)
            own_channels.append((pid, tid, f"channel token {token:#x} (hChannel "
                                           f"{channel:#x}, {cname}{where})"))
        else:
            tid = sum(1 for p, _ in channel_tid.values() if p == CHANNEL_PID) + 1
            channel_tid[key] = (CHANNEL_PID, tid)
            channel_names.append((tid, f"channel token {token:#x} (hChannel "
                                       f"{channel:#x}, {cname}, pid {pid}{where})"))
    # the doorbell times of the submissions that hold a wait (read in the pass below, not in
    # another pass over a long capture's spilled submissions)
    syncs = getattr(model, "syncs", None) or ()
    times = {w["record_index"]: 0 for w in syncs if w.get("waits")}
    launches = _launches_by_record(model.launches, each)
    held = next(launches, None)     # (every launch read, before the submissions are)
    for index, pid, thread, token, t, entries, args, bell in \
            each(model.submissions, _submission_view):
        b.seen(t)
        if index in times:
            times[index] = t
        track_pid, tid = channel_tid[(pid, token)]
        # (submissions come in record order, the launches sorted by it: a merge)
        while held is not None and held[0] < index:
            held = next(launches, None)
        ls = held[1] if held is not None and held[0] == index else []
        kernels = [l for l in ls if l["kernel"]]
        # named once every doorbell is known (_KernelNames): flush_complete names it
        name = None if kernels else f"submission ({entries} GP entries)"
        if ls:
            args["launches"] = ls
        patch = (kernel_names.doorbell(t, pid, thread), kernels[0]["grid"],
                 len(kernels)) if kernels else None
        b.complete(track_pid, tid, name, "submission", t, t, args, patch, clean=False)
        b.instant(pid, thread, f"doorbell token {token:#x}", "doorbell", t, bell, clean=False)
    # each semaphore wait on its channel's track, at its doorbell, naming the release it
    # waits for (docs/json.md syncs[])
    for w in syncs:
        if not w.get("waits") or (w["pid"], w["channel"]) not in channel_tid:
            continue
        track_pid, tid = channel_tid[(w["pid"], w["channel"])]
        by = w.get("released_by")
        name = "semaphore wait" + (f" for channel {by['channel']:#x}" if by and by.get("channel")
                                   is not None else "")
        args = {"record_index": w["record_index"], "operation": w.get("operation"),
                "address": f"{w['address']:#x}", "payload": w["payload"], "gpu": w.get("gpu"),
                "memory": (w.get("resolved") or {}).get("class_name")}
        if by:
            args["released_by"] = {"record_index": by["record_index"],
                                   "channel": f"{by['channel']:#x}" if by.get("channel")
                                   is not None else None, "gpu": by.get("gpu"),
                                   "source": by["source"], "payload": by["payload"]}
        b.instant(track_pid, tid, name, "sync", times.get(w["record_index"], 0), args)
    b.channel_names = dict(channel_names)
    b.channel_names.update({tid: name for _, tid, name in own_channels})
    b.flush_complete(kernel_names.names())
    b.meta = b.metadata(channel_names, own_channels, ranks)
    b.settle_origin()
    header = getattr(model, "header", None) or {}
    meta = getattr(model, "meta", None) or {}
    return b, _clean({"capture": getattr(model, "path", None), "gpu": meta.get("gpu"),
                      "driver": meta.get("driver"), "t_start_ns": header.get("t_start_ns"),
                      "t_origin_ns": b.origin, "channel_pid": CHANNEL_PID})


def _launches_by_record(launches, each=_each):
    """(record index, [what each submission's event shows of its launches]) in record
    order, the launches of a record in the order decoded; made as they are read and sorted
    on disk: a long capture's launches come back from the spill file and are not all held
    at once. (A launch with no record index belongs to no submission's event.)"""
    by = ExternalSort()
    for v in each(launches, _launch_view):
        if v is not None:
            by.add(*v)
    rec, group = None, []
    for key, item in by:
        if key != rec:
            if group:
                yield rec, group
            rec, group = key, []
        group.append(item)
    if group:
        yield rec, group
