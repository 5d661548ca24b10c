#!/bin/bash
# Session 28 device call 1, the first on the H200 (nvidia-h200, Firecracker): the machine's
# facts, the GPU tests, and the 500-step transformer job natively, under --no-report and with
# the default report, interleaved (scripts/record_scaling.py --report).
# Results: bench/results-h200-gpu-s28.txt, bench/results-h200-scaling-record-s28.json.
. bench/probes/device-setup.sh
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  grep -m1 'model name' /proc/cpuinfo; nproc; uname -r; } > $OUT/machine.txt 2>&1
echo "$(date +%T) machine: $(tr '\n' ' ' < $OUT/machine.txt)" >> $P
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $OUT/gputests.log)" >> $P
timeout 330 python3 scripts/record_scaling.py --out /tmp/r500 --steps 500 --reps 3 --report \
    --timeout 100 > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $OUT/record.log)" >> $P
cp /tmp/r500/scaling-record.json $OUT/ 2>/dev/null
echo "$(date +%T) done" >> $P
