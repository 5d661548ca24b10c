#!/bin/bash
# Session 44 device call 2: which libraries look up cuTensorMapEncode* by name, and what
# cuTensorMapEncodeTiled makes for a few inputs (bench/probes/tma_probe.py); a bf16 and an
# fp8 matmul under trace-launch (captures/torch-fp8's script) decoded, so the nvjet kernels'
# parameter blocks can be compared with the encodings.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
timeout 120 python3 bench/probes/tma_probe.py > $OUT/tma.jsonl 2> $OUT/tma.err
echo "$(date +%T) tma probe rc=$? $(wc -l < $OUT/tma.jsonl)" >> $P
echo "$(date +%T) done" >> $P
