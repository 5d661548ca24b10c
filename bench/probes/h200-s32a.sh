#!/bin/bash
# Session 32 device call 1 (nvidia-h200): the sharded decode (decoders/session/shard.py) on
# a 500-step transformer. scripts/record_scaling.py with --report --report-after: natively,
# --no-report, the default report (decoded while the program runs, in two processes), and
# the default report decoded after the program (TRACE_LAUNCH_LIVE=0: sharded, 14 blocks on
# this host's 16 CPUs); then bench/shard_wall.py on the capture: trace-decode's text report
# not sharded (twice) and in 8, 12 and 14 blocks, each byte for byte against the first.
# STEPS sets the length (500). Small results in $OUT.
. bench/probes/device-setup.sh
N=${STEPS:-500}
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout 330 python3 scripts/record_scaling.py --out /tmp/rs --steps $N --reps 2 --report \
    --report-after --timeout 120 > $OUT/record-$N.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $OUT/record-$N.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/scaling-record-$N.json 2>/dev/null
timeout 200 python3 bench/shard_wall.py /tmp/rs/transformer-$N/capture.tlc \
    --shards 1 1 8 12 14 --json $OUT/shard-wall-$N.json > $OUT/shard-wall-$N.txt 2>&1
rc=$?; echo "$(date +%T) shard_wall rc=$rc" >> $P
cat $OUT/shard-wall-$N.txt >> $P
echo "$(date +%T) done" >> $P
