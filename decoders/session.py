"""A whole capture decoded into one model: the data the report and the JSON render.

capture file -> decoders.capture.reader (framing) -> per-record decoders (ioctl, object
tree, pushbuffer and launch) -> `CaptureModel`. Nothing here prints or formats text for
people; tracer/report.py does. The JSON view (`to_json`) is documented in docs/json.md.
"""
import bisect
import gc
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from decoders.capture import format as F
from decoders.capture.reader import CaptureReader, cstr, open_capture
from decoders.capture.reader import _FAST as _FAST_BODIES
from decoders.errors import CaptureError, TraceLaunchError
from decoders.gpfifo import segment_brief
from decoders.spill import SpillList

MARK_BEGIN, MARK_END = 1, 2


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
    images_elided: int = 0      # distinct module images that lost other GPUs' fatbin entries
    # kernel launches by (kernel name or None, grid, block) -> Counter of outcomes, and the
    # indices of mismatched launches: what a report that shows a few launches sums up
    kernel_tally: dict = field(default_factory=dict)
    mismatched: list = field(default_factory=list)
    scheduling_qmds: int = 0    # the driver's GRID_NULL QMDs (no kernel)
    # API calls that returned a CUresult other than CUDA_SUCCESS (to_json() dicts, the first
    # FAILED_KEPT of them), and how many there were: what the report's header lists first
    failed_calls: list = field(default_factory=list)
    failed_call_count: int = 0
    shim_stats_by_pid: dict = field(default_factory=dict)   # pid -> its STATS counters

    def attribute(self, launch):
        """The launch's API call, kernel, arguments and verification (summary["attribution"])."""
        s = launch.summary if hasattr(launch, "summary") else launch
        return s.get("attribution")

    @property
    def cut_short(self):
        return self.end is None

    def stats(self):
        by_dev = Counter(i["path"] for i in self.ioctls)
        by_esc = Counter(i["escape"] for i in self.ioctls)
        lost = sum(s["lost"] for s in self.submissions)
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
            "module_images_entries_elided": self.images_elided,
        }
        return out


def _ioctl_entry(rec, branch):
    from decoders import ioctl as I
    b = rec.body
    path = cstr(b.path)
    entry = {
        "index": rec.index, "pid": rec.pid, "tid": rec.tid, "fd": b.fd, "path": path,
        "request": b.request, "escape": I.escape_name(b.request, path),
        "ret": b.ret, "errno": b.err, "t_start": rec.t_start, "t_end": rec.t_end,
        "complete": rec.complete,
    }
    try:
        entry["summary"] = I.summarize(b, branch)
    except TraceLaunchError as exc:
        entry["summary"] = f"{entry['escape']} (not decoded: {exc})"
    entry["_body"] = b
    return entry


def _opaque(entry, body, branch, tree):
    """A control no public header defines: its size and the words that match the object
    tree, marked as guesses (decoders/rm/opaque.py), in entry["opaque"] and the summary."""
    from decoders import ioctl as I
    from decoders.rm.opaque import opaque_entry
    try:
        info = I._decode(body, branch)[1].info
        op = opaque_entry(info, body, tree)
    except TraceLaunchError:        # a damaged record: its summary already says so
        return
    if op is None:
        return
    entry["opaque"] = op
    hits = ", ".join(f"+{g['offset']:#x} {g['guess']}" for g in op["guesses"][:4])
    entry["summary"] += f" [opaque {op['size']} B" + (f"; guess: {hits}" if hits else "") + "]"


_GP_KEYS = ("kind", "address", "length_bytes", "level", "sync", "opcode", "operand")
_GP_ENTRY = {}      # raw GP entry -> its JSON keys (decode_entry is a pure function of it)


def _gp_entry(raw):
    seg = segment_brief(raw)
    if seg is not None:     # the usual entry: no full decode (same keys, same values)
        kind, address, length, level, sync = seg
        return {"raw": raw, "kind": kind, "address": address, "length_bytes": length,
                "level": level, "sync": sync}
    e = _GP_ENTRY.get(raw)
    if e is None:
        from decoders.gpfifo import decode_entry
        try:
            d = decode_entry(raw)
        except TraceLaunchError:
            d = {}
        e = tuple((k, v) for k, v in d.items() if k in _GP_KEYS)
        if len(_GP_ENTRY) >= 4096:
            _GP_ENTRY.clear()
        _GP_ENTRY[raw] = e
    out = {"raw": raw}
    out.update(e)
    return out


def _submission_entry(rec):
    return _submission_dict(rec.index, rec.pid, rec.tid, rec.t_start, rec.body)


# A spilled submission is its record's body bytes, parsed again when read: the same dict
# (the parse is the one the reader made), and nothing to build or marshal item by item.
_SUBMISSION_BODY = _FAST_BODIES.get("SUBMISSION")


def _submission_raw(rec):
    return (rec.index, rec.pid, rec.tid, rec.t_start, rec.raw)


def _submission_load(t):
    index, pid, tid, t_start, raw = t
    return _submission_dict(index, pid, tid, t_start, _SUBMISSION_BODY(raw)[0])


def _submission_dict(index, pid, tid, t_start, b):
    # "hex" holds the bytes; the JSON view renders bytes as hex (tracer/report.py _clean).
    return {
        "index": index, "pid": pid, "tid": tid, "t": t_start,
        "token": b["token"], "hClient": b["hClient"], "channel": b["hChannel"],
        "class": b["hClass"], "gp_put_prev": b["gp_put_prev"], "gp_put": b["gp_put"],
        "gp_entries": b["gp_entries"], "flags": b["flags"], "gpfifo_va": b["gpfifo_va"],
        "doorbell_addr": b["doorbell_addr"], "rip": b["rip"], "lost": b["lost"],
        "entries": [_gp_entry(raw) for raw in b["entries"]],
        "segments": [{"va": s["va"], "size": s["size"], "flags": s["flags"],
                      "hex": bytes(s["data"])} for s in b["segments"]],
    }


# Submissions and launches kept as objects before a SpillList writes the rest to its file:
# a short capture never touches the disk; a long one costs ~40 MiB however long it is
# (bench/decode_rss.py on captures/launch-loop-10k: keep 0 -> 42 MiB peak, 4096 -> 99 MiB,
# all in memory -> 310 MiB).
DEFAULT_KEEP = 256


def capture_header(hdr):
    """The model's `header` dict of a capture's file header (reader.header)."""
    return {"version": hdr.version, "t_start_ns": hdr.t_start_ns, "wall_ns": hdr.wall_ns,
            "tracer_pid": hdr.tracer_pid, "cursor": hdr.cursor}


def decode_capture(path, branch=None, launches=True, keep=DEFAULT_KEEP, stream=None):
    """Read and decode a whole capture. Problems are collected, never raised, except for a
    file that is not a capture at all (CaptureError) or cannot be opened (OSError).

    Streams: each SUBMISSION is fed to the launch decoder as it is read, and
    `model.submissions` / `model.launches` are SpillLists that keep their first `keep`
    items in memory and the rest in a temporary file, so memory stays flat whatever the
    capture's length (keep=None keeps everything in memory). The model is the same
    either way; an item read back from the file is a fresh copy.
    `stream`: read this instead of opening `path` (decoders/capture/live.py LiveCapture)."""
    gc_was = gc.isenabled()
    gc.disable()   # decoding makes many small acyclic objects: collect young ones by hand
    try:
        return _decode_capture(path, branch, launches, keep, stream)
    finally:
        if gc_was:
            gc.enable()


def _decode_capture(path, branch, launches, keep, stream=None):
    from decoders.rm.objects import ObjectTree
    stream = open_capture(path) if stream is None else stream
    try:
        reader = CaptureReader(stream, name=str(path))
        meta = reader.meta
        if branch is None:
            branch = (str(meta.get("driver", "580")).split(".")[0]) or "580"
        model = CaptureModel(path=str(path), meta=meta, header=capture_header(reader.header))
        model.objects = ObjectTree(branch)
        lazy_submissions = keep is not None and _SUBMISSION_BODY is not None
        if keep is not None:
            # items go in through append_dumped (_submission_raw) when lazy_submissions
            model.submissions = SpillList(keep, load=_submission_load) \
                if lazy_submissions else SpillList(keep)
            model.launches = SpillList(keep, _launch_dump, _launch_load)
            # items go in through append_dumped: (ApiCall.compact(), (kernel name,) or ())
            model.api_calls = SpillList(keep, load=_api_call_load)
        from decoders.cuda.attribute import Attribution
        from decoders.cuda.calls import ApiCalls
        api = model.api = ApiCalls()
        attr = model.attribution = Attribution(model.objects, sm=_sm(meta))
        launch_call = {}     # id(pending launch) -> the API call its doorbell rang in
        feeding = [None, None]   # the SUBMISSION record being fed, and its call
        record_offsets = {}
        subdec = None
        if launches:
            from decoders import launch as L
            tree, keep_launch = model.objects, model.launches.append

            def sink(launch):
                s = launch._summary
                r = s.get("resolved")
                if r is None or len(r["semaphores"]) < len(s["semaphores"]):
                    _resolve_launch(tree, s)
                call = launch_call.pop(id(launch), None)
                if call is None and launch.record_index == feeding[0]:
                    # handed over inside feed() (a GRID_NULL QMD before its kernel's, say):
                    # the call the submission being fed rang its doorbell in
                    call = feeding[1]
                a = None
                if attr.any_calls or call is not None:
                    a = attr.for_launch(launch, call)
                    if launch._own and a["api_call"] is not None:   # summary already read
                        from decoders.cuda.calls import own_launch_config
                        a["api_call"] = dict(a["api_call"],
                                             launch=own_launch_config(a["api_call"]["launch"]))
                    s["api_call"] = a["api_call"]
                    s["verified"] = a["verified"]
                    s["attribution"] = a
                    if s["kernel"]:
                        # a graph's QMD sent by cuGraphUpload (instantiate, exec update)
                        # is scheduled there and runs at a later cuGraphLaunch: counted apart
                        sent = (a.get("graph_node") or {}).get("sent_by")
                        model.verified["graph_prepared" if sent else
                                       _VERIFIED.get(a["verified"], "not_checked")] += 1
                _tally(model, s, a)
                keep_launch(launch)
            subdec = L.SubmissionDecoder(gpu=_gpu_family(meta), sink=sink)
        nrecords = 0
        append_submission = model.submissions.append_dumped if lazy_submissions else None
        budget = _Budget(model)
        submissions = model.submissions
        spill_bytes = 0 if isinstance(submissions, SpillList) else None
        text = budget.text
        kept_types = _KEPT_TYPES
        stopped = False
        for rec in reader.records():
            nrecords += 1
            if not nrecords % 1024:
                gc.collect(0)   # the reader's parse contexts are small cycles
            t = rec.type
            b = rec.body
            if t in kept_types and not budget.entry(rec):
                stopped = True
                break
            if t == "SUBMISSION":
                if spill_bytes is not None and len(submissions._items) < submissions.keep:
                    # the first `keep` are held in memory: by bytes too (KEPT_BYTES)
                    spill_bytes += rec.length
                    if spill_bytes > KEPT_BYTES:
                        submissions.keep = len(submissions._items)
                if append_submission is not None:
                    append_submission(_submission_raw(rec))
                else:
                    model.submissions.append(_submission_entry(rec))
                call = api.current(rec.pid, rec.tid)
                if call is not None:
                    call.submissions.append(rec.index)
                if subdec is not None:
                    nproblems = len(subdec.problems)
                    feeding[0] = rec.index
                    feeding[1] = call
                    try:
                        subdec.feed(rec.index, b)
                    finally:
                        feeding[0] = None
                    if len(subdec.problems) != nproblems:
                        record_offsets[rec.index] = rec.offset
                    for launch, _ in subdec._pending:
                        ls = launch._summary
                        lr = ls.get("resolved")
                        if lr is None or len(lr["semaphores"]) < len(ls["semaphores"]):
                            _resolve_launch(tree, ls)
                        if call is not None and launch.record_index == rec.index:
                            launch_call[id(launch)] = call
            elif t == "API_ENTER":
                try:
                    c = api.enter(rec)
                except TraceLaunchError as exc:
                    model.problems.append(_at_record(exc, rec.index, rec.offset))
                else:
                    img = c.sections.get("IMAGE")
                    if img is not None and "IMAGE_REF" not in c.sections and \
                            "ENTRIES_ELIDED" in img["flags"]:
                        model.images_elided += 1
                    if img is not None and not budget.image(len(img["data"]), rec):
                        img["data"] = b""
                        img["flags"] = img["flags"] + ["NOT_KEPT"]
                    if len(api._open) > KEPT_OPEN_CALLS:
                        budget.stop(rec, f"more than {KEPT_OPEN_CALLS} API calls entered and "
                                         f"not returned")
                        stopped = True
                        break
            elif t == "API_EXIT":
                call = api.exit(rec)
                if call is not None:
                    attr.observe(call)
                    kernel = ()
                    if call.launch_config is not None:
                        k = attr.kernel(call.launch_config["function"])
                        kernel = (k["name"] if k else None,)
                    _append_call(model.api_calls, call, kernel)
                    model.api_call_names[call.name] += 1
                    if call.result:     # not CUDA_SUCCESS
                        _failed_call(model, call, kernel)
            elif t == "IOCTL":
                e = _ioctl_entry(rec, branch)
                _opaque(e, b, branch, model.objects)
                if not budget.keep(rec.length, rec):
                    e["_body"] = None
                model.ioctls.append(e)
                try:
                    model.objects.feed_ioctl(b, pid=rec.pid)
                except TraceLaunchError as exc:
                    model.problems.append(_at_record(exc, rec.index, rec.offset))
            elif t == "MMAP":
                p = text(b.path, rec)
                m = {"index": rec.index, "pid": rec.pid, "addr": b.addr, "length": b.length,
                     "prot": b.prot, "flags": b.flags, "fd": b.fd, "offset": b.offset, "path": p,
                     "errno": b.err, "object": None}
                model.mmaps.append(m)
                if not b.err:   # the RM memory object an RM_MAP_MEMORY on this fd prepared
                    obj = model.objects.feed_mmap(b.addr, b.length, b.fd, p, b.offset, pid=rec.pid)
                    if obj is not None:
                        m["object"] = obj.handle
            elif t == "MUNMAP":
                model.mmaps.append({"index": rec.index, "pid": rec.pid, "munmap": True,
                                    "addr": b.addr, "length": b.length, "ret": b.ret})
                if b.ret == 0:
                    model.objects.feed_munmap(b.addr, b.length, pid=rec.pid)
            elif t == "MREMAP":
                model.mmaps.append({"index": rec.index, "pid": rec.pid, "mremap": True,
                                    "old_addr": b.old_addr, "old_length": b.old_length,
                                    "addr": b.new_addr, "length": b.new_length})
            elif t in ("OPEN", "CLOSE"):
                model.opens.append({"index": rec.index, "pid": rec.pid, "type": t, "fd": b.fd,
                                    "path": text(b.path, rec) if t == "OPEN" else None})
            elif t == "MARK":
                model.marks.append({"index": rec.index, "pid": rec.pid, "tid": rec.tid,
                                    "kind": F.TL_MARK_KIND.get(b.kind, b.kind), "id": b.id,
                                    "label": text(b.label, rec), "t": rec.t_start,
                                    **({"label_length": b.label_len}
                                       if b.label_len > len(b.label) else {})})
            elif t == "NOTE":
                note = {"index": rec.index, "pid": rec.pid, "tid": rec.tid,
                        "level": b.level, "text": text(b.text, rec), "t": rec.t_start}
                if b.text_len > len(b.text):    # cut by the reader (format.py TL_TEXT_MAX)
                    note["text_length"] = b.text_len
                model.notes.append(note)
            elif t == "PROCESS_START":
                cmd = [text(x, rec) for x in bytes(b.cmdline).split(b"\0") if x]
                model.processes[rec.pid] = {"pid": rec.pid, "ppid": b.ppid,
                                            "how": F.TL_START.get(b.how, b.how),
                                            "exe": text(b.exe, rec), "cmdline": cmd,
                                            "exit": None, "t_start": rec.t_start, "tid": rec.tid}
            elif t == "PROCESS_EXIT":
                # incomplete: written by the shim's destructor, which cannot know the status
                # (the program returned from main, so libc called exit internally)
                p = model.processes.setdefault(rec.pid, {"pid": rec.pid})
                p["exit"] = b.status if rec.complete else None
                p["exit_record"] = True
                p["t_exit"] = rec.t_start
            elif t == "STATS":
                own = model.shim_stats_by_pid.setdefault(rec.pid, {})
                for name, v in zip(F.TL_STATS_NAMES, b.counters):
                    model.shim_stats[name] = model.shim_stats.get(name, 0) + v
                    own[name] = own.get(name, 0) + v
            elif t == "END":
                model.end = {"exit_status": b.exit_status, "cursor": b.cursor}
            elif t == "UNFINISHED":
                model.unfinished.append({"index": rec.index, "pid": rec.pid, "offset": rec.offset})
        model.records = nrecords
        model.problems[:0] = reader.problems
        model.problems.extend(attr.problems)    # module images that did not decode
        if model.end is None and not stopped and not reader.stopped:
            last = f"after record {model.records - 1}" if model.records else "before any record"
            model.problems.append(CaptureError(
                f"capture cut short: no END record {last}", offset=reader.offset))
        if subdec is not None:
            _launch_problems(model, subdec.finish(), record_offsets)
        for call in api.unfinished:     # never returned: the process died inside it
            _append_call(model.api_calls, call, ())
            model.api_call_names[call.name] += 1
        return model
    finally:
        stream.close()


_VERIFIED = {True: "verified", False: "mismatch"}     # attribution "verified" -> its count
TALLY_KEYS = 4096       # distinct (kernel, grid, block) kept apart; the rest as one row
MISMATCHED_KEPT = 1000  # indices of mismatched launches remembered for the report


def _tally(model, s, a):
    """Count a launch into model.kernel_tally (before it is appended: its index is the
    number of launches kept so far)."""
    if not s["kernel"]:
        model.scheduling_qmds += 1
        return
    k = a["kernel"] if a is not None else None
    key = (k["name"] if k else None, tuple(s["grid"] or ()), tuple(s["block"] or ()))
    tally = model.kernel_tally
    t = tally.get(key)
    if t is None:
        if len(tally) >= TALLY_KEYS:
            key = ("(other kernels and shapes)", (), ())
            t = tally.get(key)
        if t is None:
            t = tally[key] = Counter()
    if a is not None and a.get("graph_node") and a["graph_node"].get("sent_by"):
        t["graph_prepared"] += 1
        return
    verified = a["verified"] if a is not None else None
    t[_VERIFIED.get(verified, "not_checked")] += 1
    if verified is False and len(model.mismatched) < MISMATCHED_KEPT:
        model.mismatched.append(len(model.launches))

# What a decode keeps in memory of an untrusted capture (issue 20: 512 MiB peak RSS for
# any input). Submissions, launches and API calls spill to a file past `keep`; the other
# records each leave an entry in memory (an ioctl ~1.6 KB with its body, a NOTE ~0.5 KB),
# so a capture of identical records gzips ~1000:1 and a 1 MB file could hold millions.
# Measured (trace-decode, one core): 300,000 ioctl records 500 MB and 21 s; 600 ioctls with
# 1 MiB argument copies 1.27 GB. The real recordings stay far below: launch-loop-10k keeps
# 572 such entries, torch-small a few thousand.
KEPT_ENTRIES = 200_000    # ioctl/mmap/open/mark/note/process records: then decoding stops
KEPT_OPEN_CALLS = 100_000  # API_ENTER records without their API_EXIT yet: likewise
KEPT_IMAGES = 128 << 20   # module image bytes kept (for kernel names, cubins): then not kept
KEPT_BYTES = 128 << 20    # ioctl bodies and capture strings kept: then bodies are dropped
STRING_CUT = 256          # and each later string is cut to this many bytes
_KEPT_TYPES = frozenset(("IOCTL", "MMAP", "MUNMAP", "MREMAP", "OPEN", "CLOSE", "MARK", "NOTE",
                         "PROCESS_START", "UNFINISHED"))


class _Budget:
    """Counts what the model keeps of the capture; reports once when a limit is reached."""

    def __init__(self, model):
        self.model = model
        self.entries = 0
        self.bytes = 0
        self.over = False
        self.images = 0
        self.images_over = False

    def entry(self, rec):
        """False when this record is one entry past KEPT_ENTRIES (decoding then stops)."""
        self.entries += 1
        if self.entries <= KEPT_ENTRIES:
            return True
        self.stop(rec, f"the capture has more than {KEPT_ENTRIES} ioctl, mmap, open, mark "
                       f"and note records, whose entries the decoder keeps in memory")
        return False

    def stop(self, rec, why):
        self.model.problems.append(CaptureError(
            f"decoding stopped at record {rec.index}: {why} (the report covers the records "
            f"before it)", offset=rec.offset))

    def image(self, n, rec):
        """Whether a module image of n bytes may be kept (KEPT_IMAGES in all)."""
        self.images += n
        if self.images <= KEPT_IMAGES:
            return True
        if not self.images_over:
            self.images_over = True
            self.model.problems.append(CaptureError(
                f"record {rec.index}: module images pass {KEPT_IMAGES // (1 << 20)} MiB in all; this "
                f"and later images are not kept (their kernels keep the names the calls give, "
                f"without a cubin)", offset=rec.offset))
        return False

    def keep(self, n, rec):
        """Whether n more bytes of a body or string may be kept."""
        self.bytes += n
        if self.bytes <= KEPT_BYTES:
            return True
        if not self.over:
            self.over = True
            self.model.problems.append(CaptureError(
                f"record {rec.index}: ioctl bodies and strings of the capture pass "
                f"{KEPT_BYTES // (1 << 20)} MiB; from here ioctls keep their summary only (no "
                f"--ioctl filter by name, no naming coverage) and strings are cut to "
                f"{STRING_CUT} bytes", offset=rec.offset))
        return False

    def text(self, raw, rec):
        """cstr(raw), cut to STRING_CUT bytes once KEPT_BYTES is spent."""
        if self.keep(len(raw), rec) or len(raw) <= STRING_CUT:
            return cstr(raw)
        return cstr(bytes(raw)[:STRING_CUT])


FAILED_KEPT = 1000      # failed API calls kept for the report (all are counted)


def _failed_call(model, call, kernel):
    model.failed_call_count += 1
    if len(model.failed_calls) < FAILED_KEPT:
        d = call.to_json()
        if kernel:
            d["kernel"] = kernel[0]
        model.failed_calls.append(d)


def _append_call(calls, call, kernel):
    """calls.append(call.to_json() + its "kernel" when kernel is (name,)); a SpillList gets
    the compact form and makes the dict only when the item is read."""
    compact = call.compact() if isinstance(calls, SpillList) else None
    if compact is not None:
        calls.append_dumped((compact, kernel))
        return
    d = call.to_json()
    if kernel:
        d["kernel"] = kernel[0]
    if isinstance(calls, SpillList):
        calls.append_dumped((None, d))
    else:
        calls.append(d)


def _resolve_launch(tree, s):
    """summary["resolved"]: each GPU VA of a launch (QMD, program, constant banks,
    semaphores) resolved through the object tree as it stands when the launch's
    submission is decoded (a semaphore set by a later method: when that one is).
    Lists follow constant_buffers and semaphores index for index."""
    r = s.get("resolved")
    res = tree.resolution
    if r is None:
        # A launch loop's QMDs sit in a ring of slots and share their program and constant
        # banks (one remembered list per cbanks part): resolved once per tree state
        # (ObjectTree.launch_memo); the constant bank list is shared until the summary is
        # read (Launch.summary gives it its own copy).
        va, prog, cbs = s["qmd_address"], s.get("program_address"), s["constant_buffers"]
        memo = tree.launch_memo
        key = (va, prog, id(cbs))
        seen = memo.get(key)
        if seen is None or seen[0] is not cbs:      # (the entry keeps cbs, so its id)
            seen = (cbs, res(va), res(prog) if prog else None,
                    [res(cb["address"]) if cb["address"] else None for cb in cbs]
                    if cbs else [])
            if len(memo) >= 4096:
                memo.clear()
            memo[key] = seen
        r = s["resolved"] = {"qmd_address": seen[1], "program_address": seen[2],
                             "constant_buffers": seen[3], "semaphores": []}
    sems, done = s["semaphores"], r["semaphores"]
    if len(done) < len(sems):
        for sem in sems[len(done):]:
            done.append(res(sem["address"]) if sem.get("address") else None)


def _at_record(exc, index, offset):
    """A decoder's problem that names no file offset, tied to its record's (the CLI's one
    line per problem always says where in the capture to look, STYLE 15)."""
    if getattr(exc, "offset", None) is not None or offset is None:
        return exc
    err = CaptureError(f"record {index} at offset {offset:#x}: {exc}")
    err.offset, err.record = offset, index
    return err


_RECORD_REF = re.compile(r"\brecord (\d+)\b")


def _launch_problems(model, result, record_offsets=None):
    for p in result.problems:
        # launch problems say "record N (channel ...)"; their offsets are pushbuffer offsets
        m = _RECORD_REF.search(str(p))
        off = (record_offsets or {}).get(int(m.group(1))) if m else None
        if off is not None and getattr(p, "offset", None) is None:
            err = CaptureError(f"{p} (record at offset {off:#x})")
            err.offset, err.record = off, int(m.group(1))
            p = err
        model.problems.append(p)


def _sm(meta):
    """90 for compute capability "9.0": which cubin of a fatbin the GPU ran."""
    try:
        major, minor = str(meta.get("compute_capability", "9.0")).split(".")[:2]
        return int(major) * 10 + int(minor)
    except ValueError:
        return 90


def _gpu_family(meta):
    from decoders.launch import family_of_sm
    return family_of_sm(_sm(meta))


def marked_submissions(model, limit=None):
    """Submissions whose doorbell rang between a BEGIN and END mark of the same thread: the
    first `limit` mark pairs (all when None). The submissions are in record order, so each
    pair finds its range by bisection: a capture of many marks and many submissions is not
    read once per mark (it was, from the spill file)."""
    pairs = []
    opened = {}
    for m in model.marks:
        key = (m["pid"], m["tid"], m["id"])
        if m["kind"] == "BEGIN":
            opened[key] = m["index"]
        elif m["kind"] == "END" and key in opened:
            pairs.append((opened.pop(key), m))
            if limit is not None and len(pairs) >= limit:
                break
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
    """Per channel: class, token, submissions, GP entries."""
    ch = defaultdict(lambda: {"submissions": 0, "entries": 0, "bytes": 0, "lost": 0})
    for s in model.submissions:
        c = ch[(s["pid"], s["token"])]
        c.update(pid=s["pid"], token=s["token"], channel=s["channel"], cls=s["class"])
        c["submissions"] += 1
        c["entries"] += len(s["entries"])
        c["bytes"] += sum(g["size"] for g in s["segments"])
        c["lost"] += s["lost"]
    return [ch[k] for k in sorted(ch)]
