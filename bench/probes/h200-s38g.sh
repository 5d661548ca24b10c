#!/bin/bash
# Session 38 device call 7 (nvidia-h200): call 6 found the held-out mix3's live decode
# decoded again after the program because "the capture has problems": its module images
# passed the 128 MiB budget on cubins for other GPU generations, which the exit step then
# leaves out. The budget now counts what the exit step keeps. Here mix3 at 100 steps with
# its default report (bench/probes/report_timeline.py), blocks of 4,096 and 8,192
# alternated, 2 reps: how the live decode went and the time after the program. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 30 python3 scripts/corpus/heldout_mix3.py 2 > /dev/null 2>&1     # (warm the caches)
for rep in 1 2; do
  for b in 4096 8192; do
    TRACE_LAUNCH_BLOCK=$b timeout 60 python3 bench/probes/report_timeline.py -o /tmp/r.tlc python3 scripts/corpus/heldout_mix3.py 100 > /dev/null 2> $L/tl.log
    echo "$(date +%T) rep $rep [$b] rc=$? $(grep '\[timeline' $L/tl.log | tr '\n' ' ') $(grep -c 'module images pass' $L/tl.log) over-budget lines" >> $P
  done
done
echo "$(date +%T) done" >> $P
