#!/bin/bash
# Session 38 device call 4 (nvidia-h200): the live decode's block size against a burst and
# a long job. Call 3: mix3's 100 steps write 88 MB in ~1.5 s; its 3 blocks of 8,192
# submissions left a 3.0 s tail at 60 MB/s where one split decode left 2.0 s (block 1 and 2
# each ~12,500 launches). Here bench/live_sim.py --block 8192, 4096, 2048 and the split
# decode (TRACE_LAUNCH_SHARDS=1), 1 rep each, on a fresh mix3 100-step capture at 60 MB/s
# and a fresh 500-step transformer capture at 48 MB/s (its ~240 MB in ~5 s). Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 60 python3 -m tracer.cli_main trace-launch --no-report -o /tmp/mix3.tlc python3 scripts/corpus/heldout_mix3.py 100 > $L/rec-mix3.log 2>&1
echo "$(date +%T) mix3 recorded rc=$?" >> $P
timeout 60 python3 -m tracer.cli_main trace-launch --no-report -o /tmp/t500.tlc python3 scripts/corpus/train_transformer.py 500 > $L/rec-t500.log 2>&1
echo "$(date +%T) t500 recorded rc=$? $(ls -la /tmp/t500.tlc)" >> $P
for job in "/tmp/mix3.tlc 60" "/tmp/t500.tlc 48"; do
  set -- $job
  for b in 8192 4096 2048 split; do
    if [ $b = split ]; then a=""; e="TRACE_LAUNCH_SHARDS=1"; else a="--block $b"; e=""; fi
    env $e timeout 100 python3 bench/live_sim.py $1 --rate $2 --reps 1 $a > $L/sim.log 2>&1
    echo "$(date +%T) $1 [$b]: $(grep '"rep"' $L/sim.log | cut -c1-330)" >> $P
  done
done
echo "$(date +%T) done" >> $P
