#!/bin/bash
# Session 32 device call 5 (nvidia-h200): jobs whose blocks miss history (a capture the
# decode in blocks gives up on, and decodes again as before): the CUDA-graph training job
# (scripts/corpus/train_graphed.py) at 1000 steps and the JAX one (train_jax.py) at 300,
# each natively, --no-report, with the default report (in blocks, where it gives up while
# the program runs) and with the two-process decode (TRACE_LAUNCH_SHARDS=1); one rep each
# (scripts/record_scaling.py). Results in $OUT/logs.tgz.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
for job in graphed:train_graphed.py:1000 jax:train_jax.py:300; do
  IFS=: read name prog steps <<< "$job"
  timeout 200 python3 scripts/record_scaling.py --out /tmp/rs-$name --steps $steps --reps 1 \
      --program scripts/corpus/$prog --name $name --report \
      --report-variant two:TRACE_LAUNCH_SHARDS=1 --timeout 90 > $L/record-$name.log 2>&1
  rc=$?; echo "$(date +%T) record_scaling $name rc=$rc $(tail -1 $L/record-$name.log)" >> $P
  grep "rep=" $L/record-$name.log >> $P
  cp /tmp/rs-$name/scaling-record.json $L/scaling-record-$name.json 2>/dev/null
  rm -rf /tmp/rs-$name
done
echo "$(date +%T) done" >> $P
