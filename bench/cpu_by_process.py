"""CPU seconds per process while a command runs (GPU machine or any Linux): every process's
utime + stime sampled from /proc/PID/stat every 0.25 s until SIGTERM, written as JSON to
argv[1]: the processes that used more than 0.3 s, with their command lines, and a timeline
of CPU seconds per class of process (the traced program, the tracer's decoding process,
the split decode's front, the exit step). Where the time of a traced job goes when the
processes overlap (session 20: bench/results-h100-cpu-by-process-s20.json).

    python3 bench/cpu_by_process.py out.json & S=$!; trace-launch ... ; kill $S; wait $S

A process that ends between two samples loses at most its last 0.25 s.
"""
import json
import os
import signal
import sys
import time

CLASSES = (("front", "decoders.session.front"), ("exit", "compact_capture"),
           ("tracer", "trace-launch"), ("tracer", "live_progress"), ("tracer", "trace-decode"),
           ("program", "train_transformer"))
PERIOD = 0.25


def klass(cmdline):
    for name, word in CLASSES:
        if word in cmdline:
            return name
    return "other"


def main(path):
    tick = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    cmd, cpu, series, stop = {}, {}, [], []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(True))
    t0 = time.monotonic()
    while not stop:
        now = {}
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == me:
                continue
            try:
                with open(f"/proc/{p}/stat") as f:
                    st = f.read()
                fields = st[st.rfind(")") + 2:].split()
                key = f"{p}:{fields[19]}"           # pid and start time: a reused pid differs
                if key not in cmd:
                    with open(f"/proc/{p}/cmdline", "rb") as f:
                        cmd[key] = f.read().replace(b"\0", b" ").decode(errors="replace")[:300]
            except (OSError, IndexError):
                continue
            t = (int(fields[11]) + int(fields[12])) / tick
            cpu[key] = max(cpu.get(key, 0), t)
            now[key] = t
        by = {}
        for key, t in now.items():
            k = klass(cmd[key])
            by[k] = round(by.get(k, 0) + t, 2)
        series.append((round(time.monotonic() - t0, 2), by))
        time.sleep(PERIOD)
    totals = sorted(((round(t, 2), cmd[k]) for k, t in cpu.items() if t > 0.3), reverse=True)
    with open(path, "w") as f:
        json.dump({"totals": totals[:40], "series": series}, f)


if __name__ == "__main__":
    main(sys.argv[1])
