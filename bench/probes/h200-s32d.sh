#!/bin/bash
# Session 32 device call 4 (nvidia-h200): the GPU tests on this tree, as the suite runs them
# (TRACE_LAUNCH_SHARDS=1 from tests/conftest.py) and with every brief decode in blocks
# (TRACE_LAUNCH_SHARDS=14, this host's default); then the 2000-step transformer again
# (scripts/record_scaling.py, one rep: natively, --no-report, the default report, and the
# default report with the two-process decode, TRACE_LAUNCH_SHARDS=1). Results in
# $OUT/logs.tgz (call 3 lost its JSON to the limit on files brought back).
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests \
    > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gpu tests rc=$rc $(tail -1 $L/gputests.log)" >> $P
TRACE_LAUNCH_SHARDS=14 CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu \
    -p no:cacheprovider tests > $L/gputests-shards.log 2>&1
rc=$?; echo "$(date +%T) gpu tests (shards 14) rc=$rc $(tail -1 $L/gputests-shards.log)" >> $P
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
timeout 250 python3 scripts/record_scaling.py --out /tmp/rs --steps 2000 --reps 1 --report \
    --report-variant two:TRACE_LAUNCH_SHARDS=1 --timeout 200 > $L/record-2000.log 2>&1
rc=$?; echo "$(date +%T) record_scaling 2000 rc=$rc $(tail -1 $L/record-2000.log)" >> $P
cp /tmp/rs/scaling-record.json $L/scaling-record-2000.json 2>/dev/null
grep "rep=" $L/record-2000.log >> $P
echo "$(date +%T) done" >> $P
