#!/bin/bash
# Session 33 device call 6 (nvidia-h200): call 5's default report took 1.46-1.49x native
# against 1.06-1.24x in calls 1 and 3: the 500-step job natively and with the default
# report, 3 reps interleaved (scripts/record_scaling.py), then the live decode's progress
# and how it was decoded (blocks, or why not: bench/live_progress.py) for the default
# report and for --json. Results in $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 3 \
    --report --timeout 100 > $L/record-500.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record-500.log)" >> $P
grep "rep=" $L/record-500.log >> $P
for v in default json; do
  f=""; [ $v = json ] && f="--json"
  LIVELOG=$L/live-$v.json timeout 90 python3 bench/live_progress.py $f -o /tmp/lp.tlc -- \
      python3 scripts/corpus/train_transformer.py 500 > /dev/null 2> /dev/null
  rc=$?; echo "$(date +%T) live_progress $v rc=$rc" >> $P
  python3 -c "
import json; d=json.load(open('$L/live-$v.json'))
print([x for x in d if isinstance(x[1], str)])" >> $P
done
echo "$(date +%T) done" >> $P
