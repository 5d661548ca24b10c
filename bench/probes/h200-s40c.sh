#!/bin/bash
# Session 40 device call 4 (nvidia-h200-x2): issue 24's third target again after s40's
# changes (the 500-step transformer under trace-launch with its default report against
# native, side by side, stdout the same, submissions lost), and a second rep of the
# 1,000-step DDP job's report against native (s40a: 1.11x). Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
for spec in transformer:train_transformer.py:500 ddp:train_ddp.py:1000; do
  IFS=: read -r name prog steps <<< "$spec"; d=/tmp/$name; mkdir -p $d
  t=$(date +%s%N); timeout 200 python3 scripts/corpus/$prog $steps > $d/native.out 2> $d/native.err; nrc=$?
  tn=$(( ($(date +%s%N) - t) / 1000000 ))
  t=$(date +%s%N); timeout 250 $TL trace-launch -o $d/c.tlc python3 scripts/corpus/$prog $steps > $d/traced.out 2> $d/report.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced.out && echo same || echo DIFFERENT)
  echo "$(date +%T) $name $steps native rc=$nrc ${tn}ms traced+report rc=$trc ${tt}ms ratio $(python3 -c "print(round($tt/$tn, 3))") stdout $same; $(grep -m1 'kernel launches:' $d/report.txt | sed 's/^ *//'); $(grep -m1 'lost' $d/report.txt | sed 's/^ *//')" >> $P
done
echo "$(date +%T) done" >> $P
