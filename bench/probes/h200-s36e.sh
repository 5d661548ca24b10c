#!/bin/bash
# Session 36 device call 6 (nvidia-h200): captures/cdp recorded (scripts/record.py corpus
# --only cdp: kernels/corpus_cdp.cu, CUDA dynamic parallelism) and decoded there
# (bench/corpus_kernels.py); the capture comes back in $OUT/rec/. Carry .whl.
. bench/probes/device-setup.sh
timeout 150 python3 scripts/record.py --out $OUT/rec corpus --only cdp > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(grep '^==' $OUT/record.log | tail -2)" >> $P
timeout 60 python3 bench/corpus_kernels.py $OUT/rec/cdp >> $P 2>&1
rm -f $OUT/rec/corpus_cdp $OUT/rec/*.truth.json
ls -la $OUT/rec $OUT/rec/cdp >> $P
