#!/bin/bash
# Session 30 device call 1 (nvidia-h200): how the default report's tail grows with the job.
# The transformer at 2000 steps (natively, --no-report, default report: one rep each,
# interleaved by scripts/record_scaling.py) and at 500 steps (2 reps), after one native run
# thrown away (a fresh machine's first run pays for its caches). Captures stay on the device.
. bench/probes/device-setup.sh
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout 330 python3 scripts/record_scaling.py --out /tmp/r2000 --steps 2000 --reps 1 --report \
    --timeout 300 > $OUT/record-2000.log 2>&1
rc=$?; echo "$(date +%T) record_scaling 2000 rc=$rc $(tail -1 $OUT/record-2000.log)" >> $P
cp /tmp/r2000/scaling-record.json $OUT/scaling-record-2000.json 2>/dev/null
rm -rf /tmp/r2000
timeout 200 python3 scripts/record_scaling.py --out /tmp/r500 --steps 500 --reps 2 --report \
    --timeout 90 > $OUT/record-500.log 2>&1
rc=$?; echo "$(date +%T) record_scaling 500 rc=$rc $(tail -1 $OUT/record-500.log)" >> $P
cp /tmp/r500/scaling-record.json $OUT/scaling-record-500.json 2>/dev/null
