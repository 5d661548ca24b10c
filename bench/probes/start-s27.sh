#!/bin/bash
# Session 27 device call 1: trace-launch's fixed start and exit cost, with the tracer's cuInit
# moved beside the program's start (bench/start_cost.py), and the 500-step transformer job
# natively, under --no-report and with the default report, interleaved
# (scripts/record_scaling.py --report). Results: bench/results-h100-start-s27.json,
# bench/results-h100-scaling-record-s27.json.
. bench/probes/device-setup.sh
timeout 200 python3 bench/start_cost.py --reps 5 > $OUT/start.json 2>> $P
rc=$?; echo "$(date +%T) start_cost rc=$rc" >> $P
timeout 400 python3 scripts/record_scaling.py --out /tmp/r500 --steps 500 --reps 3 --report \
    --timeout 120 > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $OUT/record.log)" >> $P
cp /tmp/r500/scaling-record.json $OUT/ 2>/dev/null
echo "$(date +%T) done" >> $P
