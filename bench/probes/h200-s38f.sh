#!/bin/bash
# Session 38 device call 6 (nvidia-h200): what trace-launch's time after the program is made
# of, on the held-out mix3 at 100 steps (call 5: 1.65x native with its report, 1.07x
# without) and the transformer at 500 steps (bench/probes/report_timeline.py: when the
# program exited, when the live decode ended and how, when the exit step ended, when the
# report was printed), blocks of 4,096 and of 8,192. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 30 python3 scripts/corpus/heldout_mix3.py 2 > /dev/null 2>&1     # (warm the caches)
for job in "scripts/corpus/heldout_mix3.py 100" "scripts/corpus/train_transformer.py 500"; do
  for b in 4096 8192; do
    TRACE_LAUNCH_BLOCK=$b timeout 80 python3 bench/probes/report_timeline.py -o /tmp/r.tlc python3 $job > /dev/null 2> $L/tl.log
    echo "$(date +%T) $job [$b] rc=$? $(grep '\[timeline' $L/tl.log | tr '\n' ' ')" >> $P
  done
done
echo "$(date +%T) done" >> $P
