"""Run a Python program and, at its exit (atexit, before CUDA's own teardown), write every
open fd of the process and its target, to compare with a capture's OPEN records: an NVIDIA
device fd the shim never saw opened was made by a call it does not wrap (the dup and fcntl
F_DUPFD copies were found so). Under trace-launch:
    trace-launch -o run.tlc python3 scripts/fd_probe.py fds.json PROGRAM.py ARGS..."""
import atexit
import json
import os
import runpy
import sys

out, prog = sys.argv[1], sys.argv[2]


def dump():
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    with open(out, "w") as f:
        json.dump(fds, f)


atexit.register(dump)
sys.argv = [prog] + sys.argv[3:]
runpy.run_path(prog, run_name="__main__")
