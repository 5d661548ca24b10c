"""Capture windows (trace-launch --capture-range / --launch-range; docs/capture-format.md
"Capture windows"): a decode stage fed the WINDOW, SUBMISSION and STATS records of a capture.

The shim opens one window per process (a WINDOW record, edge BEGIN) and closes it (edge
END); outside it, it records the ioctls, mmaps and bookkeeping calls, and the submissions
that write graph QMDs, and counts what it left out. This stage

- makes each window start a resync point of every channel's pushbuffer stream, and any
  submission after a hole in a channel's GP_PUT sequence (the submissions not recorded),
  so that a method sequence cut by the window is neither carried on nor reported;
- tells which submissions and launches lie outside the window (`outside`, `launch`);
- sums it up per process for the report and the JSON (`finish`: docs/json.md "windows").

State is per process and per channel; work per record is constant (STYLE 13b).
"""
from collections import deque

from decoders.capture import format as F


class Windows:
    def __init__(self, meta):
        req = meta.get("capture_range") if isinstance(meta, dict) else None
        self.requested = req if isinstance(req, dict) else None
        self.by_pid = {}        # pid -> the window's dict (finish() returns them)
        self.inside = {}        # pid -> True while its window is open
        self.stats = {}         # pid -> its STATS counters named window_*
        self.last_put = {}      # (pid, hClient, hChannel, token) -> GP_PUT of its last submission
        # (record index, pid, outside its window?) of the submissions fed and not yet passed
        # by a launch handed to launch(): launches come in record order, a few behind
        self.recent = deque()

    @property
    def active(self):
        """Whether the capture asked for a window or holds one (else nothing here runs)."""
        return self.requested is not None or bool(self.by_pid)

    def _window(self, pid):
        w = self.by_pid.get(pid)
        if w is None:
            w = self.by_pid[pid] = {"pid": pid, "trigger": None, "name": None, "begin": None,
                                    "end": None, "launches_outside": 0, "launches_inside": 0}
        return w

    def edge(self, rec, subdec):
        """A WINDOW record: open or close its process's window; a BEGIN resyncs the streams."""
        b = rec.body
        edge = F.TL_WINDOW_EDGE.get(b.edge, b.edge)
        w = self._window(rec.pid)
        w["trigger"] = F.TL_WINDOW_TRIGGER.get(b.trigger, b.trigger)
        w["name"] = bytes(b.name).decode("utf-8", "replace")
        info = {"record": rec.index, "t": rec.t_start, "ordinal": b.ordinal, "call": b.call,
                "launches": b.launches, "submissions_skipped": b.submissions_skipped,
                "api_calls_skipped": b.api_calls_skipped}
        if edge == "BEGIN":
            w["begin"] = info
            self.inside[rec.pid] = True
            if subdec is not None:
                subdec.resync()
        elif edge == "END":
            w["end"] = info
            self.inside[rec.pid] = False

    def outside(self, pid):
        """Whether a record of process pid now lies outside its window (a process of a
        windowed capture whose window is not open)."""
        return not self.inside.get(pid, False)

    def submission(self, rec, subdec):
        """Before a SUBMISSION is fed: note whether it lies outside the window, and resync its
        channel when GP entries before it were not recorded (a hole the window left).
        subdec.resync(body, pid) names the channel as the session feeds it."""
        b = rec.body
        pid = rec.pid
        self.recent.append((rec.index, pid, self.outside(pid)))
        key = (pid, b["hClient"], b["hChannel"], b["token"])
        last = self.last_put.get(key)
        self.last_put[key] = b["gp_put"]
        if last is not None and last != b["gp_put_prev"] and subdec is not None:
            subdec.resync(b, pid)

    def launch(self, launch, summary):
        """A decoded launch: summary["window"] is "inside" or "outside" its process's window."""
        recent, index = self.recent, launch.record_index
        while recent and recent[0][0] < index:
            recent.popleft()
        if not recent or recent[0][0] != index:
            return
        _, pid, outside = recent[0]
        where = "outside" if outside else "inside"
        summary["window"] = where
        self._window(pid)["launches_" + where] += 1

    def stats_record(self, rec):
        c = self.stats.setdefault(rec.pid, {})
        for name, v in zip(F.TL_STATS_NAMES, rec.body.counters):
            if name.startswith("window_"):
                c[name[len("window_"):]] = c.get(name[len("window_"):], 0) + v

    def finish(self, model):
        """The windows, per process, for the report: with what was asked (the header's
        capture_range), what the shim left out (its STATS) and the launches decoded."""
        pids = set(self.by_pid)
        if self.requested is not None:
            # a process that recorded submissions or API calls but wrote no WINDOW record:
            # its window never opened
            pids |= {p for p, s in self.stats.items() if s}
        out = []
        for pid in sorted(pids, key=lambda p: (p is None, p)):
            w = dict(self._window(pid))
            w["requested"] = self.requested
            w["skipped"] = self.stats.get(pid, {})
            w["opened"] = w["begin"] is not None
            w["closed"] = w["end"] is not None
            out.append(w)
        return out
