#!/bin/bash
# On the H100 (device tool): where libcuda rings the doorbell, and the code around it.
#   scripts/probe_doorbell.sh      writes $OUT/sites.json, $OUT/site-*.dis, $OUT/branches.txt
set -u
OUT=${OUT:-/tmp/probe-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
python3 setup.py -q build_ext --inplace >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
python3 -c "
from tracer.run import run_traced; import sys
import os
sys.exit(run_traced([sys.executable, 'scripts/probe_doorbell.py', '$OUT/sites.json'], '/tmp/probe.tlc',
                    env=dict(os.environ, TRACE_LAUNCH_PROBE='ring')))" \
  > "$OUT/probe.log" 2>&1; echo "probe rc=$?"
tail -5 "$OUT/probe.log"
grep -m1 'model name' /proc/cpuinfo; grep -m1 -o 'constant_tsc\|tsc_known_freq' /proc/cpuinfo | sort -u
dmesg 2>/dev/null | grep -i 'tsc' | head -5
python3 - "$OUT" <<'PY'
import json, subprocess, sys
out = sys.argv[1]
sites = json.load(open(f"{out}/sites.json"))
want = []
for s in sites:
    if "file_offset" not in s: continue
    lib, foff = s["module"], int(s["file_offset"], 16)
    # objdump wants the virtual address: map the file offset through the LOAD segments
    from elftools.elf.elffile import ELFFile
    with open(lib, "rb") as f:
        for seg in ELFFile(f).iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_offset"] <= foff < seg["p_offset"] + seg["p_filesz"]:
                off = foff - seg["p_offset"] + seg["p_vaddr"]
    s["vaddr"] = hex(off); print("site", s["kind"], s["rip"], "file", hex(foff), "vaddr", hex(off), s.get("doorbells"), s.get("note", "")[:90])
    want.append(off)
    d = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={off-2048:#x}",
                        f"--stop-address={off+1024:#x}", lib], capture_output=True, text=True).stdout
    open(f"{out}/site-{off:x}.dis", "w").write(d)
    d2 = subprocess.run(["objdump", "-d", f"--start-address={off-64:#x}", f"--stop-address={off+64:#x}", lib],
                        capture_output=True, text=True).stdout
    print(d2[-2500:])
json.dump(sites, open(f"{out}/sites.json", "w"), indent=1)
if want:
    lib = sites[0]["module"]
    # every direct branch or call whose target lies within 32 bytes of a site
    p = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", lib], stdout=subprocess.PIPE, text=True)
    hits = []
    for line in p.stdout:
        parts = line.split("\t")
        if len(parts) < 2: continue
        ins = parts[-1].split()
        if len(ins) >= 2 and (ins[0].startswith("j") or ins[0].startswith("call")):
            try: tgt = int(ins[1], 16)
            except ValueError: continue
            if any(abs(tgt - w) <= 32 for w in want): hits.append(line.rstrip())
    open(f"{out}/branches.txt", "w").write("\n".join(hits))
    print("branches into site windows:", len(hits)); print("\n".join(hits[:60]))
PY
