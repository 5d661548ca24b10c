#!/bin/bash
# Session 39 device call 1 (nvidia-h200): the default report after session 38's image-budget
# fix (budget._Budget.image counts what the exit step keeps). The held-out mix3 at 20 and 100
# steps, natively, --no-report and with its report, 3 reps (record_scaling.py --report); the
# time line of its exit steps (report_timeline.py: did the live decode merge in blocks?),
# twice; the transformer at 500 steps, 2 reps. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 30 python3 scripts/corpus/heldout_mix3.py 2 > /dev/null 2>&1     # (warm the caches)
for i in 1 2; do
  timeout 80 python3 bench/probes/report_timeline.py -o /tmp/r.tlc python3 scripts/corpus/heldout_mix3.py 100 > /dev/null 2> $L/tl$i.log
  echo "$(date +%T) timeline mix3-100 rc=$? $(grep '\[timeline' $L/tl$i.log | tr '\n' ' ')" >> $P
done
timeout 280 python3 scripts/record_scaling.py --out /tmp/mx --program scripts/corpus/heldout_mix3.py \
    --name mix3 --steps 20 100 --reps 3 --report --timeout 60 > $L/record-mix3.log 2>&1
rc=$?; echo "$(date +%T) mix3 rc=$rc $(tail -3 $L/record-mix3.log | tr '\n' ' ')" >> $P
cp /tmp/mx/scaling-record.json $OUT/scaling-record-mix3.json 2>/dev/null
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 2 --report \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) transformer rc=$rc $(tail -3 $L/record.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
echo "$(date +%T) done" >> $P
