"""Run a command and print one JSON line: its exit status, when its `steps=` line came (the
end of scripts/corpus/train_transformer.py, which prints it last) and when it exited, and
trace-launch's summary lines from its stderr (submissions lost, capture written).

    python3 bench/probes/timed_run.py LABEL COMMAND [ARGS...]
"""
import json
import subprocess
import sys
import threading
import time


def main():
    label, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    got = {}

    def pump(stream, name):
        lines = []
        for line in stream:
            if line.startswith("steps=") and "end" not in got:
                got["end"] = round(time.monotonic() - t0, 2)
            lines.append(line)
        got[name] = lines
    threads = [threading.Thread(target=pump, args=(p.stdout, "out")),
               threading.Thread(target=pump, args=(p.stderr, "err"))]
    for t in threads:
        t.start()
    rc = p.wait()
    for t in threads:
        t.join()
    total = round(time.monotonic() - t0, 2)
    err = [line.strip() for line in got["err"]
           if "trace-launch" in line or "kernel launches" in line or "submissions" in line][-6:]
    print(json.dumps({"label": label, "rc": rc, "job_end_s": got.get("end"), "total_s": total,
                      "stdout": "".join(got["out"]).strip()[-200:], "err": err}), flush=True)


if __name__ == "__main__":
    main()
