#!/bin/bash
# Session 38 device call 5 (nvidia-h200): the live decode's blocks of 4,096 submissions
# (the new default, shard.BLOCK) against 8,192 (TRACE_LAUNCH_BLOCK=8192, the old), as a user
# runs trace-launch with its default report: the held-out mix3 at 100 steps and the
# transformer at 500 steps, natively, --no-report, the report and the report with 8,192,
# 2 reps each (record_scaling.py --report --report-variant). Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 30 python3 scripts/corpus/heldout_mix3.py 2 > /dev/null 2>&1     # (warm the caches)
timeout 150 python3 scripts/record_scaling.py --out /tmp/mx --program scripts/corpus/heldout_mix3.py \
    --name mix3 --steps 100 --reps 2 --report --report-variant b8192:TRACE_LAUNCH_BLOCK=8192 \
    --timeout 60 > $L/record-mix3.log 2>&1
rc=$?; echo "$(date +%T) mix3 rc=$rc $(tail -3 $L/record-mix3.log | tr '\n' ' ')" >> $P
cp /tmp/mx/scaling-record.json $OUT/scaling-record-mix3.json 2>/dev/null
timeout 250 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 2 --report \
    --report-variant b8192:TRACE_LAUNCH_BLOCK=8192 --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) transformer rc=$rc $(tail -3 $L/record.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
echo "$(date +%T) done" >> $P
