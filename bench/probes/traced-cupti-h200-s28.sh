#!/bin/bash
# Session 28 device call 5, on nvidia-h200-x2: dynshapes and jaxdp (call 4 found 24 and 1 of
# CUPTI's kernel configurations of a native run not decoded) with CUPTI in the traced process
# too: bench/cupti_coverage.py then checks what both runs' CUPTI saw, and lists what the
# traced run's CUPTI saw that the decode lacks (traced_only_not_decoded).
# Results: bench/results-h200-traced-cupti-s28.json.
. bench/probes/device-setup.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export TORCHINDUCTOR_COMPILE_THREADS=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
declare -A PROG=([dynshapes]=train_dynshapes.py [jaxdp]=train_jax_dp.py)
for j in dynshapes jaxdp; do
  D=/tmp/tc/$j; mkdir -p $D
  TL_CUPTI_TRUTH=$D/native.json timeout 80 python3 scripts/corpus/${PROG[$j]} 20 > $D/native.out 2> $D/native.err
  rc=$?; echo "$(date +%T) $j native rc=$rc" >> $P
  TL_CUPTI_TRUTH=$D/traced.json timeout 100 python3 -m tracer.cli_main trace-launch --no-report \
      -o $D/capture.tlc python3 scripts/corpus/${PROG[$j]} 20 > $D/traced.out 2> $D/traced.err
  rc=$?; echo "$(date +%T) $j traced rc=$rc stdout same: $(cmp -s $D/native.out $D/traced.out && echo yes || echo no)" >> $P
  python3 - $D <<'PY'
import json, sys
d = sys.argv[1]
gt = {"traced_cupti": json.load(open(d + "/traced.json")), "native_cupti": json.load(open(d + "/native.json"))}
json.dump({"ground_truth": gt}, open(d + "/manifest.json", "w"))
PY
  timeout 60 python3 bench/cupti_coverage.py $D >> $OUT/coverage.jsonl 2>> $P
  rc=$?; echo "$(date +%T) $j coverage rc=$rc" >> $P
done
