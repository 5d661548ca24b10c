#!/bin/bash
# Session 39 device call 3 (nvidia-h200): bench/probes/heldout_live.sh on ten more held-out
# jobs (live report against the offline one-process report, stdout, verified counts), then
# issue 24's target 2 on this host: a 100-step transformer recorded here, bench/json_ratio.py
# against captures/launch-loop-10k, 3 alternated reps. Carry .whl.
JOBS="hfgpt2:20 threads:300 tma:60 cupygraph:200 cudnn:60 loader:30 compiled:200 jaxtrain:200 cnn:100 mix2:20" \
  T_JOB=100 T_DEC=100 timeout 480 bash bench/probes/heldout_live.sh
. bench/probes/device-setup.sh
timeout 40 python3 -m tracer.cli_main trace-launch --no-report -o /tmp/t100.tlc python3 scripts/corpus/train_transformer.py 100 > /dev/null 2>&1
echo "$(date +%T) t100 rc=$?" >> $P
timeout 70 python3 bench/json_ratio.py /tmp/t100.tlc --reps 3 --out $OUT/json-ratio.json > $OUT/json-ratio.txt 2>&1
echo "$(date +%T) json_ratio rc=$? $(tail -2 $OUT/json-ratio.txt | tr '\n' ' ')" >> $P
