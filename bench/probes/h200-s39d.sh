#!/bin/bash
# Session 39 device call 4 (nvidia-h200): where target 2's wall goes on this host (16 CPUs:
# the JSON decoded in blocks): bench/json_phases.py on a 100-step transformer recorded here
# and on captures/launch-loop-10k, alternated, 3 each. Carry .whl.
. bench/probes/device-setup.sh
timeout 40 python3 -m tracer.cli_main trace-launch --no-report -o /tmp/t100.tlc python3 scripts/corpus/train_transformer.py 100 > /dev/null 2>&1
echo "$(date +%T) t100 rc=$?" >> $P
for i in 1 2 3; do
  for c in /tmp/t100.tlc captures/launch-loop-10k/capture.tlc.gz; do
    timeout 40 python3 bench/json_phases.py $c >> $OUT/phases.jsonl 2>> $OUT/phases.err
  done
done
echo "$(date +%T) done" >> $P
