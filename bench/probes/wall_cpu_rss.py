"""Run a command with its stdout to a file and print one line: its exit status, wall
seconds, CPU seconds (it and the processes it waited for) and the largest process's peak
RSS. The probes' timing of one decode.

    python3 bench/probes/wall_cpu_rss.py OUTFILE COMMAND [ARGS...]
"""
import resource
import subprocess
import sys
import time


def main():
    t = time.monotonic()
    with open(sys.argv[1], "wb") as out:
        rc = subprocess.call(sys.argv[2:], stdout=out)
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"rc={rc} {time.monotonic() - t:.2f} s {r.ru_utime + r.ru_stime:.2f} cpu "
          f"{r.ru_maxrss} KiB")


if __name__ == "__main__":
    main()
