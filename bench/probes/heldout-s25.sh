#!/bin/bash
# Session 25 device call 2 (run then as .s25/heldout.sh): held-out real jobs of kinds the corpus
# lacks, each at two lengths with CUPTI of the short one (scripts/record_longjobs.sh), then
# CUPTI coverage (bench/cupti_coverage.py) and decode scaling (bench/scaling.py) on this machine;
# the short captures and every result come back as $OUT/heldout.tar.part-*. The call also ran
# "numba:20:1000" (a numba-cuda program since removed: it did not run there). Results:
# bench/results-h100-heldout-s25.json.
set -u
REAL=$OUT; export OUT=/tmp/o1; mkdir -p $OUT
LONGJOBS="tma:20:1000 cupygraph:20:1000 cudnn:20:200" NOCAPTURES=1 T_JOB=110 T_CUPTI=70 \
  timeout 390 bash scripts/record_longjobs.sh
cp $OUT/progress.txt $REAL/progress.txt
export PYTHONPATH=/tmp/site:$PWD
W=/tmp/longjobs
for j in tma cupygraph cudnn; do
  timeout 30 python3 bench/cupti_coverage.py $W/$j-20 >> $W/coverage.jsonl 2>> $W/coverage.err
  long=$(ls -d $W/$j-* | grep -v -- "-20$" | head -1)
  timeout 45 python3 bench/scaling.py $W/$j-20/capture.tlc $long/capture.tlc --views text json --no-baseline --out $W/scaling-$j.json > $W/scaling-$j.log 2>&1
  echo "$(date +%T) $j analysed" >> $REAL/progress.txt
done
cd /tmp && tar cf - longjobs/*-20 longjobs/*.json longjobs/*.log longjobs/*.jsonl longjobs/*.err $(ls -d longjobs/*-1000 longjobs/*-200 2>/dev/null | sed 's|$|/manifest.json|') 2>/dev/null | split -b 15M - $REAL/heldout.tar.part-
echo "$(date +%T) packed $(ls -la $REAL)" >> $REAL/progress.txt
