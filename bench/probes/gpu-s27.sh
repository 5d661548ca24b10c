#!/bin/bash
# Session 27 device call 2: the GPU tests on this tree (trace-launch now reads the GPU's facts
# after the program has started: tracer/run.py), and one real program traced with the default
# report, its capture's header checked for those facts (bench/results-h100-gpu-s27.txt).
. bench/probes/device-setup.sh
CUDA_VISIBLE_DEVICES=0 timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $OUT/gputests.log)" >> $P
timeout 120 python3 -m tracer.cli_main trace-launch -o /tmp/small.tlc python3 scripts/corpus/torch_small.py \
    > $OUT/small.out 2> $OUT/small.err
rc=$?; echo "$(date +%T) torch_small rc=$rc $(grep -c . $OUT/small.err) report lines" >> $P
python3 - >> $P <<'PY'
from decoders.capture.reader import CaptureReader, open_capture
m = CaptureReader(open_capture("/tmp/small.tlc")).meta
print({k: m.get(k) for k in ("pid", "gpu", "compute_capability", "compute_capabilities", "driver", "cuda_driver_api")})
PY
echo "$(date +%T) done" >> $P
