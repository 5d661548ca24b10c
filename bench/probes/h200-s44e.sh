#!/bin/bash
# Session 44 device call 5 (nvidia-h200), the tree at the session's end (the shim forwarding
# 12 words, TMA descriptors named): held-out jobs live against offline (the Triton TMA
# matmul at 100 steps: 300 maps; the transformer at 100; JAX at 300), then the transformer
# at 100 and 500 steps natively, under --no-report and under the default report
# (scripts/record_scaling.py --report: target 3), and target 2 on the 100-step capture
# (bench/json_ratio.py, 5 alternated reps). Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
JOBS="tma:100 transformer:100 jaxtrain:300" T_JOB=100 T_DEC=100 timeout 330 bash bench/probes/heldout_live.sh
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
grep -c 'tensor map @' /tmp/hl/tma/report.txt /tmp/hl/tma/offline.txt >> $P 2>&1
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 --report \
    --timeout 80 > $OUT/record-scaling.log 2>&1
echo "$(date +%T) scaling rc=$? $(grep '^steps=' $OUT/record-scaling.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
timeout 120 python3 bench/json_ratio.py /tmp/rs/transformer-100/capture.tlc --reps 5 --out $OUT/json-ratio.json > $OUT/json-ratio.txt 2>&1
tail -1 $OUT/json-ratio.txt >> $P
echo "$(date +%T) done" >> $P
