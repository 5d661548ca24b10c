#!/bin/bash
# Session 28 device call 2: the real-workload corpus (scripts/record.py real) recorded on the
# H200 (Firecracker) with this tree, each program natively and traced; then every recording
# decoded there: its kernel launches verified / mismatched / not checked / unnamed
# (bench/corpus_kernels.py) and CUPTI's kernels found in the decode (bench/cupti_coverage.py).
# Results: bench/results-h200-corpus-s28.json.
. bench/probes/device-setup.sh
JOBS=${JOBS:-torch-eager,torch-graph,torch-compile,triton-add,cupy-kernels,jax-jit,jax-train,torch-libs,cupy-fft,torch-fp8,launch-paths,pdl,cond-nodes,graph-copies,jax-cmdbuf,cupy-linalg}
export TORCHINDUCTOR_COMPILE_THREADS=1
timeout ${T_REAL:-380} python3 scripts/record.py --out /tmp/h200 real --only $JOBS > $OUT/real.log 2>&1
rc=$?; echo "$(date +%T) real rc=$rc $(grep -c '^== ' $OUT/real.log) recorded" >> $P
timeout 120 python3 bench/corpus_kernels.py --json $OUT/census.json /tmp/h200/*/ > $OUT/census.txt 2>&1
rc=$?; echo "$(date +%T) census rc=$rc" >> $P
timeout 40 python3 bench/cupti_coverage.py /tmp/h200/*/ > $OUT/cupti.txt 2>&1
rc=$?; echo "$(date +%T) cupti rc=$rc" >> $P
python3 - > $OUT/manifests.json <<'PY'
import json, glob, os
out = {}
for m in sorted(glob.glob("/tmp/h200/*/manifest.json")):
    d = json.load(open(m)); gt = d.get("ground_truth", {})
    cap = [p for p in glob.glob(os.path.dirname(m) + "/capture.tlc*")]
    out[os.path.basename(os.path.dirname(m))] = {
        "gpu": d.get("gpu"), "driver": d.get("driver"), "exit_status": d.get("exit_status"),
        "output_unchanged": gt.get("output_unchanged"), "wall_s": d.get("wall_s"),
        "native_wall_s": gt.get("native_wall_s"),
        "shim": {k: d["summary"]["shim_stats"].get(k) for k in ("submissions", "submissions_lost",
                 "records_dropped", "fallbacks", "gp_entry_shadow_mismatch", "gp_put_shadow_mismatch")},
        "capture_bytes": os.path.getsize(cap[0]) if cap else None}
print(json.dumps(out, indent=1, sort_keys=True))
PY
echo "$(date +%T) done" >> $P
