#!/bin/bash
# Session 32 device call 3 (nvidia-h200): the sharded decode while the program runs, at
# 2000 steps (scripts/record_scaling.py: natively, --no-report, the default report, and
# the default report with the two-process decode, TRACE_LAUNCH_SHARDS=1; one rep), and at
# 500 steps: the default report of one traced run (stderr kept) against trace-decode's
# text report of the same capture in one process (TRACE_LAUNCH_SHARDS=1, TRACE_LAUNCH_SPLIT
# =0), and bench/live_sim.py on that capture (how the decode during the run ended: its
# blocks, or why not, and its wait after the writer). Small results in $OUT.
. bench/probes/device-setup.sh
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout 240 python3 scripts/record_scaling.py --out /tmp/rs --steps 2000 --reps 1 --report \
    --report-variant two:TRACE_LAUNCH_SHARDS=1 --timeout 200 > $OUT/record-2000.log 2>&1
rc=$?; echo "$(date +%T) record_scaling 2000 rc=$rc $(tail -1 $OUT/record-2000.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/scaling-record-2000.json 2>/dev/null
rm -rf /tmp/rs
timeout 90 python3 -m tracer.cli_main trace-launch -o /tmp/r500.tlc -- \
    python3 scripts/corpus/train_transformer.py 500 > $OUT/live-500.stdout 2> $OUT/live-500.stderr
rc=$?; echo "$(date +%T) trace-launch 500 rc=$rc" >> $P
TRACE_LAUNCH_SHARDS=1 TRACE_LAUNCH_SPLIT=0 timeout 120 python3 -m tracer.cli_main trace-decode \
    /tmp/r500.tlc > $OUT/offline-500.txt 2> $OUT/offline-500.err
rc=$?; echo "$(date +%T) trace-decode one process rc=$rc" >> $P
grep -v '^trace-launch: ' $OUT/live-500.stderr \
    > /tmp/live-report.txt
diff /tmp/live-report.txt $OUT/offline-500.txt > $OUT/report-diff-500.txt
rc=$?; echo "$(date +%T) live report vs one process: diff rc=$rc lines $(wc -l < $OUT/report-diff-500.txt)" >> $P
head -20 $OUT/report-diff-500.txt >> $P
timeout 150 python3 bench/live_sim.py /tmp/r500.tlc --rate 45 --reps 1 --out $OUT/live-sim-500.json \
    > $OUT/live-sim-500.txt 2>&1
rc=$?; echo "$(date +%T) live_sim rc=$rc" >> $P
tail -5 $OUT/live-sim-500.txt >> $P
echo "$(date +%T) done" >> $P
