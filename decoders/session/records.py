"""The table from record kind to its handler (as Wireshark's dissector table and strace's
per-syscall decoders): each handler reads one record and updates the model, the object
tree, the API calls, or hands it to the launch stage. A handler returns False when the
decode must stop there (a budget ran out); anything else goes on."""
from decoders.capture import format as F
from decoders.cuda.api import LAUNCH_KINDS
from decoders.errors import CaptureError, TraceLaunchError
from decoders.ioctl import facts as ioctl_facts
from decoders.session.budget import KEPT_BYTES, KEPT_OPEN_CALLS, _KEPT_TYPES
from decoders.session.entries import (_SUBMISSION_BODY, _append_call, _at_record,
                                      _failed_call, _ioctl_entry, _ioctl_path, _opaque,
                                      _submission_entry,
                                      _submission_raw)
from decoders.session.model import IoctlList, count_submission, submission_head
from decoders.spill import SpillList


class RecordHandlers:
    """`table`: record kind -> handler(rec). Kinds whose records each leave an entry in
    memory (_KEPT_TYPES) are counted against the budget first."""

    def __init__(self, model, budget, branch, launches=None, windows=None):
        self.model = model
        self.budget = budget
        self.branch = branch
        self.api = model.api
        self.attr = model.attribution
        self.launches = launches            # LaunchStage, or None (launches not decoded)
        self.windows = windows              # decoders/window.py Windows, or None
        self.text = budget.text
        self._fds = {}              # pid -> the device fds it holds (OPEN and CLOSE records)
        self._submitted = set()     # pids that made a SUBMISSION
        self._all_closed = {}       # pid -> record of the CLOSE that left it none, after work
        self._said = set()          # pids _after_all_closed reported
        subs = model.submissions
        lazy = isinstance(subs, SpillList) and _SUBMISSION_BODY is not None
        self._append_submission = subs.append_dumped if lazy else None
        self._spill_bytes = 0 if isinstance(subs, SpillList) else None
        table = {
            "SUBMISSION": self.submission, "API_ENTER": self.api_enter,
            "API_EXIT": self.api_exit, "IOCTL": self.ioctl, "MMAP": self.mmap,
            "MUNMAP": self.munmap, "MREMAP": self.mremap, "OPEN": self.open_close,
            "CLOSE": self.open_close, "MARK": self.mark, "NOTE": self.note,
            "PROCESS_START": self.process_start, "PROCESS_EXIT": self.process_exit,
            "PROCESS_ENV": self.process_env,
            "STATS": self.stats, "END": self.end, "UNFINISHED": self.unfinished,
            "WINDOW": self.window}
        counted = _KEPT_TYPES
        if isinstance(model.ioctls, IoctlList):     # not in memory: written or dropped
            counted = counted - {"IOCTL"}
            if not model.ioctls.drop:
                table["IOCTL"] = self._counted(table["IOCTL"], budget.spilled_ioctl)
        for kind in counted:
            table[kind] = self._counted(table[kind])
        self.table = table

    def _counted(self, handler, entry=None):
        entry = entry or self.budget.entry

        def counted(rec):
            if not entry(rec):
                return False
            handler(rec)
        return counted

    # -- GPU work -----------------------------------------------------------------------
    def submission(self, rec):
        model = self.model
        subs = model.submissions
        self._submitted.add(rec.pid)
        if self._all_closed and rec.pid in self._all_closed:
            self._after_all_closed(rec)
        if self._spill_bytes is not None and len(subs._items) < subs.keep:
            # the first `keep` are held in memory: by bytes too (KEPT_BYTES)
            self._spill_bytes += rec.length
            if self._spill_bytes > KEPT_BYTES:
                subs.keep = len(subs._items)
        if self._append_submission is not None:
            self._append_submission(_submission_raw(rec))
        else:
            subs.append(_submission_entry(rec))
        counts = model.channel_counts
        # read unparsed (a split decode): its parts from the front, which checks the record
        head = self.launches.head(rec) if rec.body is None else \
            submission_head(rec.body) if counts is not None else None
        if counts is not None:
            token, _, channel, cls, entries, nbytes, lost = head
            count_submission(counts, rec.pid, token, channel, cls, entries, nbytes, lost)
        call = self.api.current(rec.pid, rec.tid)
        if call is not None:
            call.submissions.append(rec.index)
        wins = self.windows
        if wins is not None and wins.active:
            wins.submission(rec, self._subdec())
        if self.launches is not None:
            self.launches.feed(rec, call)

    def _subdec(self):
        return self.launches.decoder if self.launches is not None else None

    # -- API calls ----------------------------------------------------------------------
    def api_enter(self, rec):
        model, api = self.model, self.api
        try:
            c = api.enter(rec)
        except TraceLaunchError as exc:
            model.problems.append(_at_record(exc, rec.index, rec.offset))
            return
        if self.launches is not None:
            if c.kind in LAUNCH_KINDS:
                self.launches.sink.entered(c)
            if model.brief is not None:
                # the launch a failure of this call would name (tracer/outcome.py
                # launch_before)
                c.before = self.launches.sink.before(c.pid)
        img = c.sections.get("IMAGE")
        if img is not None and "IMAGE_REF" not in c.sections and \
                "ENTRIES_ELIDED" in img["flags"]:
            model.images_elided += 1
        kept = self.budget.image(img["data"], rec) if img is not None else None
        if img is not None and kept is None:
            img["data"] = b""
            img["flags"] = img["flags"] + ["NOT_KEPT"]
        elif img is not None:
            img["data"] = kept      # an identical image kept before: its bytes
        if len(api._open) > KEPT_OPEN_CALLS:
            self.budget.stop(rec, f"more than {KEPT_OPEN_CALLS} API calls entered and "
                                  f"not returned")
            return False

    def api_exit(self, rec):
        call = self.api.exit(rec)
        if call is None:
            return
        self.attr.observe(call)
        kernel = ()
        if call.launch_config is not None:
            k = self.attr.kernel(call.launch_config["function"], pid=call.pid)
            kernel = (k["name"] if k else None,)
        _append_call(self.model.api_calls, call, kernel)
        self.model.api_call_names[call.name] += 1
        if call.result:     # not CUDA_SUCCESS
            _failed_call(self.model, call, kernel)
            before = getattr(call, "before", None)
            if before is not None:
                self.launches.sink.keep_before(call, before)

    # -- the driver's files -------------------------------------------------------------
    def _settle(self):
        """Before the object tree changes: launches a brief decode has not resolved yet."""
        if self.launches is not None:
            self.launches.sink.settle()

    def ioctl(self, rec):
        model, b = self.model, rec.body
        self._settle()
        ioctls = model.ioctls
        kind = ioctls.next_kind() if isinstance(ioctls, IoctlList) else "kept"
        if kind == "dropped":       # a brief decode past its first few: counted alone
            ioctls.count_dropped(rec, _ioctl_path(b))
        else:
            e = _ioctl_entry(rec, self.branch)
            _opaque(e, b, self.branch, model.objects.view(rec.pid))    # handles are per process
            # what the views read of the body: the body itself stays only with the entries
            # kept in memory, within KEPT_BYTES (a spilled entry is read back without it)
            e["_facts"] = ioctl_facts(b, self.branch)
            if kind == "spilled" or not self.budget.keep(rec.length, rec):
                e["_body"] = None
            ioctls.append(e)
        try:
            model.objects.feed_ioctl(b, pid=rec.pid)
        except TraceLaunchError as exc:
            model.problems.append(_at_record(exc, rec.index, rec.offset))

    def mmap(self, rec):
        model, b = self.model, rec.body
        p = self.text(b.path, rec)
        m = {"index": rec.index, "pid": rec.pid, "addr": b.addr, "length": b.length,
             "prot": b.prot, "flags": b.flags, "fd": b.fd, "offset": b.offset, "path": p,
             "errno": b.err, "object": None}
        model.mmaps.append(m)
        if not b.err:   # the RM memory object an RM_MAP_MEMORY on this fd prepared
            self._settle()
            obj = model.objects.feed_mmap(b.addr, b.length, b.fd, p, b.offset, pid=rec.pid)
            if obj is not None:
                m["object"] = obj.handle
                # named now: a handle freed later may be reused for another object (driver
                # 580 frees the HOPPER_USERMODE_A it mapped and reallocates its handle)
                m["_object_what"] = model.objects.describe_object(obj.handle, pid=rec.pid)

    def munmap(self, rec):
        model, b = self.model, rec.body
        model.mmaps.append({"index": rec.index, "pid": rec.pid, "munmap": True,
                            "addr": b.addr, "length": b.length, "ret": b.ret})
        if b.ret == 0:
            self._settle()
            model.objects.feed_munmap(b.addr, b.length, pid=rec.pid)

    def mremap(self, rec):
        b = rec.body
        self.model.mmaps.append({"index": rec.index, "pid": rec.pid, "mremap": True,
                                 "old_addr": b.old_addr, "old_length": b.old_length,
                                 "addr": b.new_addr, "length": b.new_length})

    def open_close(self, rec):
        t, b = rec.type, rec.body
        self.model.opens.append({"index": rec.index, "pid": rec.pid, "type": t, "fd": b.fd,
                                 "path": self.text(b.path, rec) if t == "OPEN" else None})
        held = self._fds.setdefault(rec.pid, set())
        if t == "OPEN":
            held.add(b.fd)
        elif b.fd in held:
            held.discard(b.fd)
            if not held and rec.pid in self._submitted and rec.pid not in self._said:
                self._all_closed[rec.pid] = rec.index

    def _after_all_closed(self, rec):
        """A process submits work after the capture says it closed every device fd it held
        (the RM client goes with the last one, so its channels do too): the capture lost
        that process's later OPEN, IOCTL and MMAP records. A shim before the vfork fix
        (shim/tracelaunch.c I22) recorded the closes of Python's subprocess children under
        the parent's pid and stopped recording the parent's ioctls; objects made after that
        are missing from the object tree. Said once per process."""
        closed = self._all_closed.pop(rec.pid)
        self._said.add(rec.pid)
        self.model.problems.append(CaptureError(
            f"pid {rec.pid} submits work at record {rec.index} after every NVIDIA device fd "
            f"it held was recorded closed (record {closed}): its ioctls and mmaps after that "
            f"are not in the capture, nor the objects they made (a shim before the vfork fix "
            f"recorded a subprocess child's closes as its parent's)", offset=rec.offset))

    # -- the program and the shim -------------------------------------------------------
    def mark(self, rec):
        b = rec.body
        self.model.marks.append({"index": rec.index, "pid": rec.pid, "tid": rec.tid,
                                 "kind": F.TL_MARK_KIND.get(b.kind, b.kind), "id": b.id,
                                 "label": self.text(b.label, rec), "t": rec.t_start,
                                 **({"label_length": b.label_len}
                                    if b.label_len > len(b.label) else {})})

    def note(self, rec):
        b = rec.body
        note = {"index": rec.index, "pid": rec.pid, "tid": rec.tid,
                "level": b.level, "text": self.text(b.text, rec), "t": rec.t_start}
        if b.text_len > len(b.text):    # cut by the reader (format.py TL_TEXT_MAX)
            note["text_length"] = b.text_len
        self.model.notes.append(note)

    def process_start(self, rec):
        b, text = rec.body, self.text
        cmd = [text(x, rec) for x in bytes(b.cmdline).split(b"\0") if x]
        self.model.processes[rec.pid] = {"pid": rec.pid, "ppid": b.ppid,
                                         "how": F.TL_START.get(b.how, b.how),
                                         "exe": text(b.exe, rec), "cmdline": cmd,
                                         "exit": None, "t_start": rec.t_start, "tid": rec.tid}

    def process_env(self, rec):
        """The launcher's rank variables (decoders/ranks.py)."""
        from decoders.ranks import parse_env
        self.model.processes.setdefault(rec.pid, {"pid": rec.pid})["env"] = \
            parse_env(rec.body.env)

    def process_exit(self, rec):
        # incomplete: written by the shim's destructor, which cannot know the status
        # (the program returned from main, so libc called exit internally)
        p = self.model.processes.setdefault(rec.pid, {"pid": rec.pid})
        p["exit"] = rec.body.status if rec.complete else None
        p["exit_record"] = True
        p["t_exit"] = rec.t_start

    def stats(self, rec):
        stats = self.model.shim_stats
        own = self.model.shim_stats_by_pid.setdefault(rec.pid, {})
        for name, v in zip(F.TL_STATS_NAMES, rec.body.counters):
            stats[name] = stats.get(name, 0) + v
            own[name] = own.get(name, 0) + v
        if self.windows is not None:
            self.windows.stats_record(rec)

    def window(self, rec):
        """A capture window's edge (decoders/window.py): a BEGIN resyncs the streams."""
        if self.windows is not None:
            self.windows.edge(rec, self._subdec())

    def end(self, rec):
        b = rec.body
        self.model.end = {"exit_status": b.exit_status, "cursor": b.cursor}

    def unfinished(self, rec):
        self.model.unfinished.append({"index": rec.index, "pid": rec.pid, "offset": rec.offset})
