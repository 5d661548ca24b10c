#!/bin/bash
# Session 35 device call 4 (nvidia-h200): scripts/corpus/copies_2d.py recorded
# (scripts/record.py real --only copies-2d) and decoded there (bench/corpus_kernels.py).
# The capture comes back in $OUT/rec/.
. bench/probes/device-setup.sh
timeout 120 python3 scripts/record.py --out $OUT/rec real --only copies-2d > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(grep '^==' $OUT/record.log | tail -2 | cut -c1-600)" >> $P
timeout 60 python3 bench/corpus_kernels.py $OUT/rec/copies-2d >> $P 2>&1
rm -f $OUT/rec/copies-2d/native.truth.json
