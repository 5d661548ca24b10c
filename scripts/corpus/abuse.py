"""Programs that make tracing hard, each launching a kernel and checking its result.

    python3 scripts/corpus/abuse.py MODE      MODE: threads8 | forkexec | closefds | faulthandler

threads8: 8 threads launching at once; forkexec: fork, the child execs a fresh Python that
launches; closefds: close every fd >= 3 before CUDA starts; faulthandler: Python's
faulthandler (its own SIGSEGV handler) enabled before CUDA starts.
Prints one deterministic line and exits 0 when every launch computed the right result.
"""
import ctypes
import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))


def launch_and_check(tag, n=4096):
    from tracer.cudaapi import check, open_module
    driver, mod, _ = open_module("vadd.cu")
    fn = check(driver.cuModuleGetFunction(mod, b"vadd"), "fn")
    host = (ctypes.c_float * n)(*([1.0] * n))
    out = (ctypes.c_float * n)()
    bufs = [check(driver.cuMemAlloc(4 * n), "alloc") for _ in range(3)]
    for b in bufs[:2]:
        check(driver.cuMemcpyHtoD(b, ctypes.addressof(host), 4 * n), "h2d")
    vals = [ctypes.c_uint64(int(b)) for b in bufs] + [ctypes.c_int32(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    stream = check(driver.cuStreamCreate(0), "stream")
    check(driver.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, stream, ctypes.addressof(params), 0), "launch")
    check(driver.cuStreamSynchronize(stream), "sync")
    check(driver.cuMemcpyDtoH(ctypes.addressof(out), bufs[2], 4 * n), "d2h")
    return all(v == 2.0 for v in out)


def main(mode):
    if mode == "threads8":
        results = [None] * 8
        def run(i):
            results[i] = launch_and_check(i)
        ts = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ok = all(results)
    elif mode == "forkexec":
        pid = os.fork()
        if pid == 0:
            os.execv(sys.executable, [sys.executable, __file__, "plain"])
        _, status = os.waitpid(pid, 0)
        ok = launch_and_check("parent") and os.waitstatus_to_exitcode(status) == 0
    elif mode == "closefds":
        os.closerange(3, 65536)
        ok = launch_and_check("closefds")
    elif mode == "faulthandler":
        import faulthandler
        faulthandler.enable()
        ok = launch_and_check("faulthandler")
    elif mode == "plain":
        ok = launch_and_check("plain")
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 2
    print(f"abuse {mode}: {'ok' if ok else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
