#!/bin/bash
# Session 30 device call 5 (nvidia-h200): the GPU tests on the final tree, and one real
# program under `trace-launch --json` (the report on stderr, parsed whole: no progress
# line mixed in), then --cost and a --channel selection of its capture.
. bench/probes/device-setup.sh
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gpu-tests.txt 2>&1
rc=$?; echo "$(date +%T) gpu tests rc=$rc $(tail -1 $OUT/gpu-tests.txt)" >> $P
timeout 120 python3 -m tracer.cli_main trace-launch --json -o /tmp/small.tlc -- python3 scripts/corpus/torch_small.py \
    > $OUT/small.out 2> $OUT/small.err
rc=$?; echo "$(date +%T) trace-launch --json rc=$rc" >> $P
python3 - >> $P 2>&1 <<'PY'
import json, os
err = open(os.environ["OUT"] + "/small.err").read()
doc = json.loads(err[err.index("{"):])
print("json report parsed:", len(doc["launches"]), "launches,", doc["stats"]["submissions_lost"], "lost;",
      sum(1 for l in doc["launches"] if l.get("verified")), "verified")
PY
timeout 120 python3 -m tracer.cli_main trace-decode /tmp/small.tlc --cost > $OUT/small-cost.txt 2>&1
rc=$?; echo "$(date +%T) --cost rc=$rc $(grep -c . $OUT/small-cost.txt) lines" >> $P
timeout 120 python3 -m tracer.cli_main trace-decode /tmp/small.tlc --channel 0xa > $OUT/small-channel.txt 2>&1
rc=$?; echo "$(date +%T) --channel rc=$rc $(grep 'kernel launches:' $OUT/small-channel.txt)" >> $P
