#!/bin/bash
# Session 25 device call 4: the 500-step transformer job natively, under trace-launch
# --no-report and under its default report, interleaved, 4 reps (scripts/record_scaling.py
# --report) on another fresh host: the decoder is session 24's, so this is one more host's
# reading of issue 24's 1.5x target (session 24: medians 1.80x on host B, 1.48x on host C).
# Result: bench/results-h100-scaling-record-s25.json.
. bench/probes/device-setup.sh
timeout 540 python3 scripts/record_scaling.py --out /tmp/w4 --steps 500 --reps 4 --report \
    --timeout 120 > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $OUT/record.log | tr '\n' ' ')" >> $P
cp /tmp/w4/scaling-record.json $OUT/ 2>/dev/null
nproc >> $P
