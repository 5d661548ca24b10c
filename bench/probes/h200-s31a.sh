#!/bin/bash
# Session 31 device call 1 (nvidia-h200): would the whole decode shard by time? A fresh
# 500-step transformer capture (scripts/record_scaling.py, one rep), its text decode as
# trace-decode makes it now (two processes: the front and the decoding one), then
# bench/shard_decode.py on it with 4, 8 and 12 blocks decoded side by side: whether their
# launches, syncs and copies laid end to end are those of one decode in one process, and
# the wall time on this host's 16 CPUs. Call 1 ran the probe's first form, which compared a
# few fields of each launch and had no detectors (--light is that form now, and compares
# the syncs and copies too). SHARDS picks the block counts (call 3: "4 8 12 16", the
# progress lines then without the 300-column cut), STEPS the job's length (call 4: 2000).
# Small results in $OUT/logs.tgz.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps ${STEPS:-500} --reps 1 \
    --timeout 90 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $L/ 2>/dev/null
N=${STEPS:-500}; C=/tmp/rs/transformer-$N/capture.tlc
for rep in 1 2; do
  /usr/bin/time -f "%e s wall %M KB" timeout 90 python3 -m tracer.cli_main trace-decode $C \
      > /dev/null 2> $L/decode$N-$rep.err
  rc=$?; echo "$(date +%T) decode$N rep $rep rc=$rc: $(tail -1 $L/decode$N-$rep.err)" >> $P
done
timeout 300 python3 bench/shard_decode.py $C --shards ${SHARDS:-4 8 12} --warmup 16 --light \
    --json $L/shard-decode-$N.json > $L/shard-decode-$N.txt 2>&1
rc=$?; echo "$(date +%T) shard_decode rc=$rc" >> $P
if [ -n "${SHARDS:-}" ]; then grep -v '^    ' $L/shard-decode-$N.txt | cut -c1-400 >> $P
else cut -c1-300 $L/shard-decode-$N.txt >> $P; fi
echo "$(date +%T) done" >> $P
