#!/bin/bash
# Session 43 device call 13 (nvidia-h200): target 2 again on the tree as it stands at the
# session's end (call 1 had 25f044c): the 100-step transformer recorded here,
# bench/json_ratio.py 5 alternated reps. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/t100b; mkdir -p $d
timeout 100 $TL trace-launch --no-report -o $d/t100.tlc python3 scripts/corpus/train_transformer.py 100 > $d/out 2> $d/err
echo "$(date +%T) recorded t100 rc=$? $(ls -la $d/t100.tlc)" >> $P
timeout 150 python3 bench/json_ratio.py $d/t100.tlc --reps 5 --out $OUT/json-ratio.json > $OUT/json-ratio.txt 2>&1
tail -1 $OUT/json-ratio.txt >> $P
