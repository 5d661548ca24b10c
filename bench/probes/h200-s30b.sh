#!/bin/bash
# Session 30 device calls 2-4 (nvidia-h200; call 2's harness failed to parse the decode's
# header line `launches (N)`, call 3's waited for the end of a stdout the tracer shares; call
# 4 ran with SKIP_GPU=1): the GPU tests on this tree, and a Ctrl-C during
# the default report's tail of a real 500-step job (bench/interrupt_tail.py): trace-launch
# should exit with the program's status, keep the capture whole and compacted, and say how
# to make the report.
. bench/probes/device-setup.sh
if [ -z "${SKIP_GPU:-}" ]; then
  timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gpu-tests.txt 2>&1
  rc=$?; echo "$(date +%T) gpu tests rc=$rc $(tail -1 $OUT/gpu-tests.txt)" >> $P
fi
timeout 200 python3 bench/interrupt_tail.py --after 1.0 -- python3 scripts/corpus/train_transformer.py 500 \
    > $OUT/interrupt-500.json 2> $OUT/interrupt-500.err
rc=$?; echo "$(date +%T) interrupt 500 rc=$rc" >> $P
timeout 120 python3 bench/interrupt_tail.py --after 0.3 -- python3 scripts/corpus/train_transformer.py 100 \
    > $OUT/interrupt-100.json 2> $OUT/interrupt-100.err
rc=$?; echo "$(date +%T) interrupt 100 rc=$rc" >> $P
