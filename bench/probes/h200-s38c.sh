#!/bin/bash
# Session 38 device call 3 (nvidia-h200): where the held-out mix3's report time goes. Its
# 100-step capture (recorded here first, as call 2's was) holds 23,452
# submissions and 88 MB of records written in ~1.5 s after a 6 s start: the live decode
# meets a burst. bench/live_sim.py replays it at 60 and 15 MB/s (the decode while it is
# written, then offline), in blocks (the default here) and in one split decode
# (TRACE_LAUNCH_SHARDS=1): how the decode went (split) and its tail. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
C=/tmp/mix3-100.tlc
timeout 60 python3 -m tracer.cli_main trace-launch --no-report -o $C python3 scripts/corpus/heldout_mix3.py 100 > $L/rec.log 2>&1
echo "$(date +%T) recorded rc=$? $(ls -la $C)" >> $P
for e in "" "TRACE_LAUNCH_SHARDS=1"; do
  for rate in 60 15; do
    env $e timeout 120 python3 bench/live_sim.py $C --rate $rate --reps 1 > $L/sim.log 2>&1
    echo "$(date +%T) [$e] rate $rate: $(grep '"rep"' $L/sim.log | cut -c1-420)" >> $P
  done
done
echo "$(date +%T) done" >> $P
