#!/bin/bash
# Real jobs natively (stdout only) and under trace-launch with its default report (time
# against native, stdout the same), then how each capture's text report (brief 10) and JSON
# (brief None) decode offline: model.split (in blocks, how many decoded again, or why not)
# and their wall time. JOBS="name:program:steps ..." (scripts/corpus/; a name only tells
# two runs of one job apart); default: the two-GPU jobs at 1,000 steps (nvidia-h200-x2).
# Session 41 ran it six times as its code changed (bench/results-h200-s41.txt says how).
# Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
for spec in ${JOBS:-jaxdp:train_jax_dp.py:1000 ddp:train_ddp.py:1000}; do
  IFS=: read -r name prog steps <<< "$spec"; d=/tmp/$name; mkdir -p $d
  t=$(date +%s%N); timeout 150 python3 scripts/corpus/$prog $steps > $d/native.out 2> $d/native.err; nrc=$?
  tn=$(( ($(date +%s%N) - t) / 1000000 ))
  t=$(date +%s%N); timeout 200 $TL trace-launch -o $d/c.tlc python3 scripts/corpus/$prog $steps > $d/traced.out 2> $d/report.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced.out && echo same || echo DIFFERENT)
  echo "$(date +%T) $name $steps native rc=$nrc ${tn}ms traced+report rc=$trc ${tt}ms stdout $same; $(grep -m1 'kernel launches:' $d/report.txt | sed 's/^ *//'); $(grep -m1 -i 'decoded in\|blocks' $d/report.txt | sed 's/^ *//')" >> $P
  timeout 120 python3 -c "
import sys, time
from decoders.session import decode_capture
for brief, full in ((10, False), (None, True)):
    t = time.monotonic(); m = decode_capture(sys.argv[1], brief=brief, full_blocks=full)
    print('brief', brief, round(time.monotonic() - t, 2), 's', m.split)
" $d/c.tlc >> $P 2>&1
done
echo "$(date +%T) done" >> $P
