#!/bin/bash
# Session 40 device call 2 (nvidia-h200-x2): what the 1,000-step JAX data-parallel job's
# block 2 misses (s40a: "384 bytes at ... read, 0 known", not a dependent pointer): the
# capture recorded with --no-report, its brief decode in blocks for the miss, then one decode
# in one process for every launch from that VA and every dependent pointer to it, and the
# API calls around the miss. Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/jaxdp; mkdir -p $d
timeout 150 $TL trace-launch --no-report -o $d/c.tlc python3 scripts/corpus/train_jax_dp.py 1000 > $d/traced.out 2> $d/err.txt
echo "$(date +%T) recorded rc=$? $(stat -c %s $d/c.tlc) B" >> $P
timeout 300 python3 - $d/c.tlc >> $P 2>&1 <<'PY'
import os, re, sys, time
from decoders.session import decode_capture
path = sys.argv[1]
t = time.monotonic(); m = decode_capture(path, brief=10)
print("blocks:", round(time.monotonic() - t, 2), "s", m.split, flush=True)
g = re.search(r"record (\d+): (\d+) bytes at (0x[0-9a-f]+)", m.split or "")
if not g:
    sys.exit()
rec, va = int(g.group(1)), int(g.group(3), 16)
os.environ["TRACE_LAUNCH_SHARDS"] = "0"; os.environ["TRACE_LAUNCH_SPLIT"] = "0"
m = decode_capture(path, full_blocks=True)
n = 0
for k, l in enumerate(m.launches):
    s = l.summary
    deps = [d for d in s["dependents"] if d["pointer"] == va]
    if s["qmd_address"] == va or deps:
        n += 1
        if n <= 40 or abs(l.record_index - rec) < 3000:
            call = s.get("api_call") or {}
            print("launch", k, "record", l.record_index, "at", hex(s["qmd_address"]),
                  s["source"], s["qmd_type"], "parent", s["parent_qmd"] and hex(s["parent_qmd"]),
                  "deps", deps, "call", call.get("name"), call.get("index"))
print("launches at or to it:", n)
for c in m.api_calls:
    if rec - 40 <= c["index"] <= rec + 5:
        print("call", c["index"], c["name"], c.get("submissions"))
for x in m.copies:
    if x.get("dst") is not None and x["dst"] <= va < x["dst"] + x["bytes"]:
        print("copy to it", x["record_index"], x["direction"], x.get("why"))
PY
echo "$(date +%T) done" >> $P
