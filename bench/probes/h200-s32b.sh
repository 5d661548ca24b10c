#!/bin/bash
# Session 32 device call 2 (nvidia-h200): the default report of the 500-step transformer
# decoded in blocks while the program runs (decoders/session/shard.py: a process follows
# the capture and forks one for each block of 8,192 submissions; this host's 16 CPUs: 14 at
# a time), against the two-process decode (TRACE_LAUNCH_SHARDS=1), natively and
# --no-report, 3 reps interleaved by scripts/record_scaling.py; then bench/shard_wall.py on
# the capture: trace-decode's text report not sharded and in 8, 12 and 14 blocks, each
# byte for byte against the first. STEPS sets the length (500). Small results in $OUT.
. bench/probes/device-setup.sh
N=${STEPS:-500}
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout ${RS_TIMEOUT:-400} python3 scripts/record_scaling.py --out /tmp/rs --steps $N \
    --reps ${REPS:-3} --report --report-variant two:TRACE_LAUNCH_SHARDS=1 \
    --timeout 150 > $OUT/record-$N.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $OUT/record-$N.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/scaling-record-$N.json 2>/dev/null
timeout 150 python3 bench/shard_wall.py /tmp/rs/transformer-$N/capture.tlc \
    --shards 1 8 12 14 --json $OUT/shard-wall-$N.json > $OUT/shard-wall-$N.txt 2>&1
rc=$?; echo "$(date +%T) shard_wall rc=$rc" >> $P
cat $OUT/shard-wall-$N.txt >> $P
echo "$(date +%T) done" >> $P
