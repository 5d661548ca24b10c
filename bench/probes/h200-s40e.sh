#!/bin/bash
# Session 40 device call 6 (nvidia-h200, 16 CPUs): issue 24's target 2 after s40's changes
# (the offline warm-up grows with the block): a 100-step transformer recorded here, then
# bench/json_ratio.py against captures/launch-loop-10k, 3 reps alternated. Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/t100; mkdir -p $d
timeout 150 $TL trace-launch --no-report -o $d/t100.tlc python3 scripts/corpus/train_transformer.py 100 > $d/out 2> $d/err
echo "$(date +%T) recorded rc=$? $(stat -c %s $d/t100.tlc) B" >> $P
timeout 300 python3 bench/json_ratio.py $d/t100.tlc --reps 3 --out $OUT/json-ratio.json >> $P 2>&1
timeout 100 python3 bench/json_phases.py $d/t100.tlc captures/launch-loop-10k/capture.tlc.gz >> $P 2>&1
echo "$(date +%T) done" >> $P
