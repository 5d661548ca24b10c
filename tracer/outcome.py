"""How a traced run ended, for the first lines of the report and the JSON: each process's
exit status as a shell shows it, the CUDA API calls that failed or never returned (with
the launch that came before each), and the capture's problems.

Read from the model only (decoders/session.py): the END record's status is what the
tracer's wait() gave for the program it started (meta "pid"; negative: killed by that
signal), a PROCESS_EXIT record's the status a process passed to exit (none when it returned
from main: the shim's destructor cannot see it).
"""
import bisect
import signal

from decoders.session.launches import WALK_BACK

FAILED_SHOWN = 20       # failed API calls listed one by one in the text (JSON: all kept)


def shell_status(raw):
    """(status as a shell shows it, signal number or None) of a wait() status as Python's
    subprocess gives it: a negative number is the signal that killed the process."""
    if raw is None:
        return None, None
    if raw < 0:
        return 128 - raw, -raw
    return raw, None


def signal_name(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def exit_of_run(model):
    """The program's exit as trace-launch returned it ({status, raw, signal, signal_name}),
    or None when the capture has no END record."""
    if model.end is None:
        return None
    raw = model.end.get("exit_status")
    status, sig = shell_status(raw)
    return {"status": status, "raw": raw, "signal": sig,
            "signal_name": signal_name(sig) if sig is not None else None}


def exit_text(e):
    """'137 (killed by signal 9, SIGKILL)' or '0' of exit_of_run()'s dict."""
    if e["signal"] is not None:
        return f"{e['status']} (killed by signal {e['signal']}, {e['signal_name']})"
    return str(e["status"])


def process_exit(model, p):
    """({exit_status, exit_from}, words for the text) of one process: its PROCESS_EXIT
    status, else the END record's for the program trace-launch started, else unknown."""
    run = exit_of_run(model)
    root = model.meta.get("pid")
    if p.get("exit") is not None:
        return {"exit_status": p["exit"], "exit_from": "PROCESS_EXIT"}, str(p["exit"])
    if run is not None and p.get("pid") == root and run["status"] is not None:
        why = ["from trace-launch's wait"]
        if run["signal"] is not None:
            why.insert(0, f"killed by signal {run['signal']}, {run['signal_name']}")
        if not p.get("exit_record"):
            why.append("its records stop where it was cut")
        else:       # the shim's destructor wrote it, without the status
            why.append("it returned from main")
        return ({"exit_status": run["status"], "exit_from": "END"},
                f"{run['status']} ({'; '.join(why)})")
    if p.get("exit_record"):
        why = "its exit record has no status: it returned from main, where the shim cannot see it"
    elif model.end is None:
        why = "no exit record: the capture was cut short"
    else:
        why = ("no exit record: it was killed, or exec'd a program the shim is not loaded "
               "into, such as a static one")
    return {"exit_status": None, "exit_from": None}, f"unknown ({why})"


def _launch_pid(model, launch):
    """The process of a launch: its own, else its SUBMISSION record's (by bisection)."""
    pid = getattr(launch, "pid", None)
    if pid is not None:
        return pid
    subs = model.submissions
    n = len(subs)
    lo, hi = 0, n
    ri = launch.record_index
    while lo < hi:
        mid = (lo + hi) // 2
        if subs[mid]["index"] < ri:
            lo = mid + 1
        else:
            hi = mid
    return subs[lo]["pid"] if lo < n and subs[lo]["index"] == ri else None


class _RecordIndices:
    """model.launches' record indices as a sequence bisect can search (launches come in
    record order: each is numbered by the SUBMISSION record that carried it)."""

    def __init__(self, launches):
        self.launches = launches

    def __len__(self):
        return len(self.launches)

    def __getitem__(self, n):
        return self.launches[n].record_index


def launch_before(model, record_index, pid):
    """{launch, kernel, grid, block, api_call, api_call_index, record_index} of the last
    kernel launch of process `pid` decoded from a submission before record `record_index`
    (one of the WALK_BACK launches before it), or None. `launch` is its number in the
    report. A brief decode noted it for each failed call while it decoded (it keeps no
    other launches to look through: decoders/session/launches.py LaunchSink.keep_before)."""
    launches = model.launches
    if getattr(model, "brief", None) is not None:
        n = model.failed_before.get((record_index, pid))
        return _before(n, launches[n]) if n is not None else None
    if not launches or getattr(launches[0], "record_index", None) is None:
        return None
    n = bisect.bisect_left(_RecordIndices(launches), record_index) - 1
    stop = max(-1, n - WALK_BACK)
    while n > stop:
        launch = launches[n]
        s = launch._summary if hasattr(launch, "_summary") else launch
        if launch.record_index < record_index and s.get("kernel") and \
                _launch_pid(model, launch) == pid:
            return _before(n, launch)
        n -= 1
    return None


def _before(n, launch):
    s = launch._summary if hasattr(launch, "_summary") else launch
    a = s.get("attribution") or {}
    call = a.get("api_call") or {}
    kernel = (a.get("kernel") or {}).get("name")
    return {"launch": n, "kernel": kernel, "grid": s.get("grid"), "block": s.get("block"),
            "api_call": call.get("name"), "api_call_index": call.get("index"),
            "record_index": launch.record_index}


def failed_calls(model):
    """The failed API calls the model kept (decoders/session.py FAILED_KEPT), each with
    `seconds` since the capture began and `launch_before` (see launch_before)."""
    t0 = (model.header or {}).get("t_start_ns")
    out = []
    for c in model.failed_calls:
        d = {k: c.get(k) for k in ("index", "pid", "tid", "name", "result", "result_name",
                                    "t_start")}
        d["seconds"] = round((c["t_start"] - t0) / 1e9, 6) if t0 and c.get("t_start") else None
        d["launch_before"] = launch_before(model, c["index"], c["pid"])
        out.append(d)
    return out


def run_json(model):
    """The JSON's "exit" and "failed_calls" keys (docs/json.md)."""
    return {"exit": exit_of_run(model),
            "failed_calls": failed_calls(model),
            "failed_call_count": model.failed_call_count}
