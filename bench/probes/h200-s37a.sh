#!/bin/bash
# Session 37 device call 1 (nvidia-h200): fresh transformer captures at 100 and 500 steps
# (scripts/record_scaling.py, natively and under trace-launch --no-report, 1 rep) brought
# back for this session's decode work on the 2-CPU machine (issue 24's target 2), and the
# target itself measured here: the 100-step capture's --json decode against
# captures/launch-loop-10k's, per kernel launch, 3 reps alternated.
# Carry .whl. Progress and results in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
cp /tmp/rs/transformer-100/capture.tlc $OUT/t100.tlc
cp /tmp/rs/transformer-100/manifest.json $OUT/t100.manifest.json
cp /tmp/rs/transformer-500/manifest.json $OUT/t500.manifest.json
split -b 15M /tmp/rs/transformer-500/capture.tlc $OUT/t500.tlc.part-
ls -la /tmp/rs/*/ >> $P
for rep in 1 2 3; do
  for c in captures/launch-loop-10k/capture.tlc.gz /tmp/rs/transformer-100/capture.tlc; do
    echo "rep $rep $c $(timeout 100 python3 bench/probes/wall_cpu_rss.py /dev/null python3 -m tracer.cli_main trace-decode $c --json 2>> $L/stderr.log)" >> $P
  done
done
echo "$(date +%T) done" >> $P
