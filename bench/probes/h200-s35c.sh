#!/bin/bash
# Session 35 device call 3 (nvidia-h200): captures/managed-copies recorded
# (scripts/record.py real --only managed-copies: scripts/corpus/managed_copies.py), and
# decoded there (bench/corpus_kernels.py). The capture comes back in $OUT/rec/.
. bench/probes/device-setup.sh
timeout 120 python3 scripts/record.py --out $OUT/rec real --only managed-copies > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(grep '^==' $OUT/record.log | tail -2)" >> $P
timeout 60 python3 bench/corpus_kernels.py $OUT/rec/managed-copies >> $P 2>&1
rm -f $OUT/rec/managed-copies/native.truth.json
ls -la $OUT/rec/managed-copies >> $P
