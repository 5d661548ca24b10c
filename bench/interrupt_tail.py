"""A Ctrl-C during trace-launch's report, after the program has exited (GPU machine): the
program runs under `trace-launch -o CAPTURE` in a session of its own, and once its last
stdout line has come (--lines), SIGINT goes to the whole session (as a terminal's Ctrl-C would) after
--after seconds. Says trace-launch's exit status (the program's: 0), the last lines of its
stderr, how long it took after the signal, and what `trace-decode` of the capture finds
(records, launches, submissions lost, problems), and which of the decode's own processes
were still there half a second after trace-launch exited (none should be). JSON to stdout.

    python3 bench/interrupt_tail.py [--after 1.0] -- python3 scripts/corpus/train_transformer.py 500
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after", type=float, default=1.0)
    ap.add_argument("--lines", type=int, default=1,
                    help="stdout lines the program prints in all (train_transformer.py: one, "
                         "at its end); trace-launch's own stdout is the same pipe, so its end "
                         "is not the program's")
    ap.add_argument("program", nargs="+")
    args = ap.parse_args()
    cap = os.path.join(tempfile.mkdtemp(prefix="tl-int-"), "capture.tlc")
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "tracer.cli_main", "trace-launch", "-o", cap,
                          "--"] + args.program, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=ROOT, start_new_session=True)
    err = []
    threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
    out = []
    for line in p.stdout:
        out.append(line)
        if len(out) >= args.lines:
            break
    t_out = time.monotonic() - t0        # the program's last line: it is exiting
    time.sleep(args.after)
    sent = time.monotonic()
    still = p.poll() is None
    if still:
        os.killpg(p.pid, signal.SIGINT)
    out.extend(p.stdout)
    rc = p.wait(timeout=300)
    t_end = time.monotonic()
    time.sleep(0.5)
    left = _decoders_left()     # the decode's processes that outlived trace-launch
    dec = subprocess.run([sys.executable, "-m", "tracer.cli_main", "trace-decode", cap],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    stats = {}
    for line in dec.stdout.splitlines():
        w = line.split()
        # the stats section's lines: "  launches           157170"
        if len(w) == 2 and w[0] in ("records", "launches", "submissions", "submissions_lost") \
                and w[1].isdigit():
            stats[w[0]] = int(w[1])
    with open(cap, "rb") as f:
        magic = f.read(4).hex()
    print(json.dumps({"program": args.program, "stdout_lines": len(out),
                      "program_done_s": round(t_out, 3), "sigint_sent": still,
                      "sigint_at_s": round(sent - t0, 3), "rc": rc,
                      "decode_processes_left_0_5s": left,
                      "ended_after_sigint_s": round(t_end - sent, 3),
                      "stderr_tail": "".join(err)[-600:], "capture_magic": magic,
                      "decode_rc": dec.returncode, "decode_stats": stats,
                      "decode_problems_line": [l for l in dec.stdout.splitlines()
                                               if l.strip().startswith("problems")][:1]},
                     indent=1))


def _decoders_left():
    """Processes running a decode's children (the follower of a decode in blocks, its
    blocks, the front of a split decode): none should outlive trace-launch."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "decoders.session.shard" in cmd or "decoders.session.front" in cmd:
            left.append(int(pid))
    return left


if __name__ == "__main__":
    main()
