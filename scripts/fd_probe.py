"""Run a program (python3 scripts/fd_probe.py OUT.json PROGRAM.py ARGS..., under trace-launch) and, at exit (atexit, before CUDA's own teardown), write every open fd
of this process and its target: an NVIDIA device fd the shim never saw opened was made by a
call it does not wrap (dup, fcntl F_DUPFD)."""
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
