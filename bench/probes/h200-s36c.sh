#!/bin/bash
# Session 36 device call 3 (nvidia-h200): this tree (tracer/cli.py split into cli_launch,
# cli_decode and cli_common; the timeline's workers) on the GPU: the GPU tests, then the
# 500-step transformer job natively, under trace-launch --no-report and with its default
# report, alternated, 2 reps (scripts/record_scaling.py --report), and the held-out mix2
# job at 20 steps under trace-launch --json (its report's kernel launch counts).
# Carry .whl. Progress and results in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 250 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 2 --report \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
timeout 100 python3 -m tracer.cli_main trace-launch --json -o /tmp/mix2.tlc python3 scripts/corpus/heldout_mix2.py 20 > /tmp/mix2.out 2> /tmp/mix2.json
rc=$?; echo "$(date +%T) mix2 json rc=$rc $(cat /tmp/mix2.out) $(python3 -c "
import json,sys
d=json.load(open('/tmp/mix2.json'))
k=[l for l in d['launches'] if l.get('kernel')]
print(len(k), 'kernel launches,', sum(1 for l in k if l.get('verified')), 'verified,', len(d['problems']), 'problems')" 2>&1 | tail -1)" >> $P
echo "$(date +%T) done" >> $P
