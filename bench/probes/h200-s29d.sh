#!/bin/bash
# Session 29 device call 6 (nvidia-h200): the 500-step job natively, under --no-report and
# with the default report, interleaved, 3 reps (scripts/record_scaling.py --report), after
# one native run thrown away: the first run on a fresh machine pays for its caches (call 1:
# 15.3 s at 100 steps against 12.5 s at 500).
. bench/probes/device-setup.sh
timeout 60 python3 scripts/corpus/train_transformer.py 500 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout 400 python3 scripts/record_scaling.py --out /tmp/r500 --steps 500 --reps 3 --report \
    --timeout 100 > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $OUT/record.log)" >> $P
cp /tmp/r500/scaling-record.json $OUT/ 2>/dev/null
