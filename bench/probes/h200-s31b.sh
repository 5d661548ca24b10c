#!/bin/bash
# Session 31 device call 2 (nvidia-h200): the GPU tests on this tree; a fresh 500-step
# transformer capture (scripts/record_scaling.py, one rep), its text decode as trace-decode
# makes it now (two processes), and bench/shard_decode.py on it as the session left it
# (blocks compared on launches, syncs and copies; each block's misses of history checked
# against what a decode of everything held at its start), 8 and 12 blocks side by side on
# this host's 16 CPUs. Small results in $OUT/logs.tgz.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests \
    > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gpu tests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 1 \
    --timeout 90 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $L/ 2>/dev/null
C=/tmp/rs/transformer-500/capture.tlc
/usr/bin/time -f "%e s wall %M KB" timeout 90 python3 -m tracer.cli_main trace-decode $C \
    > /dev/null 2> $L/decode500.err
rc=$?; echo "$(date +%T) decode500 rc=$rc: $(tail -1 $L/decode500.err)" >> $P
timeout 200 python3 bench/shard_decode.py $C --shards 8 12 --warmup 16 \
    --json $L/shard-decode-500.json > $L/shard-decode-500.txt 2>&1
rc=$?; echo "$(date +%T) shard_decode rc=$rc" >> $P
grep -v '^    ' $L/shard-decode-500.txt | cut -c1-400 >> $P
echo "$(date +%T) done" >> $P
