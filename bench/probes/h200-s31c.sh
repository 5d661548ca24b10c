#!/bin/bash
# Session 31 device call 3 (nvidia-h200): the speed of a decode sharded by time, as the
# committed probe times it (bench/shard_decode.py --light: the blocks' decodes without the
# detectors' wrappers or the facts' digests, which slow the blocks of call 2). A fresh
# 500-step transformer capture, its text decode as trace-decode makes it now (two
# processes, twice), then 4, 8, 12 and 16 blocks side by side on this host's 16 CPUs.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 1 \
    --timeout 90 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $L/ 2>/dev/null
C=/tmp/rs/transformer-500/capture.tlc
for rep in 1 2; do
  /usr/bin/time -f "%e s wall %M KB" timeout 90 python3 -m tracer.cli_main trace-decode $C \
      > /dev/null 2> $L/decode500-$rep.err
  rc=$?; echo "$(date +%T) decode500 rep $rep rc=$rc: $(tail -1 $L/decode500-$rep.err)" >> $P
done
timeout 300 python3 bench/shard_decode.py $C --shards 4 8 12 16 --warmup 16 --light \
    --json $L/shard-decode-500.json > $L/shard-decode-500.txt 2>&1
rc=$?; echo "$(date +%T) shard_decode rc=$rc" >> $P
grep -v '^    ' $L/shard-decode-500.txt | cut -c1-400 >> $P
echo "$(date +%T) done" >> $P
