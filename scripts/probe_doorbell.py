"""Where libcuda rings the doorbell: run under the shim (trace-launch python3 THIS OUT.json),
launch the built-in vadd in this process, then read this process's own capture for the
instruction address of every doorbell store (SUBMISSION.rip) and map each one to its
module and file offset through /proc/self/maps, with the code bytes around it.
Under TRACE_LAUNCH_PROBE=ring the shim also names (NOTE records) every instruction that
stores to a channel's USERD or GPFIFO ring pages: those sites are mapped the same way.

Used to design the fault-free doorbell hook (shim/patch.c): what the store sites look
like on this driver, and whether they are one site or several.
"""
import ctypes
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def maps():
    out = []
    for line in open("/proc/self/maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        out.append((lo, hi, f[1], int(f[2], 16), f[5] if len(f) > 5 else ""))
    return out


def main():
    from tracer import builtin
    from decoders.capture.reader import read_capture
    builtin.main(["--grid", "64", "--repeat", "3"])
    _, recs = read_capture(os.environ["TRACE_LAUNCH_CAPTURE"])
    rips = {}
    for r in recs:
        if r.pid != os.getpid() or r.body is None:
            continue
        if r.type == "SUBMISSION":
            rips.setdefault(r.body.rip, {"kind": "doorbell", "doorbells": 0, "insn_len": r.body.insn_len})
            rips[r.body.rip]["doorbells"] += 1
        elif r.type == "NOTE":
            text = bytes(r.body.text).decode(errors="replace")
            if text.startswith(("ring store site 0x", "doorbell store site 0x")):
                rip = int(text.split("site ")[1].split()[0].rstrip(":"), 16)
                rips.setdefault(rip, {"kind": text.split()[0]})["note"] = text
    sites = []
    for rip, info in sorted(rips.items()):
        site = {"rip": hex(rip), **info}
        for lo, hi, perm, off, path in maps():
            if lo <= rip < hi:
                site.update(module=path, perm=perm, file_offset=hex(rip - lo + off))
                a, b = max(lo, rip - 96), min(hi, rip + 96)
                site["code_from"] = hex(rip - a)
                site["code"] = ctypes.string_at(a, b - a).hex()
        sites.append(site)
    Path(sys.argv[1]).write_text(json.dumps(sites, indent=1))
    print(json.dumps(sites, indent=1))


if __name__ == "__main__":
    main()
