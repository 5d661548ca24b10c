#!/bin/bash
# Session 37 device call 2 (nvidia-h200): this tree (the JSON's lists rendered while the
# capture decodes, tracer/prerender.py; argument lists remembered, attribute.py _args) on
# the GPU: the GPU tests; the transformer at 100 and 500 steps natively, under
# trace-launch --no-report and with its default report, alternated, 2 reps
# (scripts/record_scaling.py --report); target 2 on the fresh 100-step capture against
# launch-loop-10k (bench/json_ratio.py, 3 alternated reps); the held-out mix2 job at 20
# steps under trace-launch --json (its kernel launches verified). Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 240 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 2 --report \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $L/record.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
timeout 120 python3 bench/json_ratio.py /tmp/rs/transformer-100/capture.tlc --reps 3 \
    --out $OUT/json-ratio.json > $L/ratio.log 2>&1
rc=$?; echo "$(date +%T) json_ratio rc=$rc $(tail -1 $L/ratio.log)" >> $P
timeout 100 python3 -m tracer.cli_main trace-launch --json -o /tmp/mix2.tlc python3 scripts/corpus/heldout_mix2.py 20 > /tmp/mix2.out 2> /tmp/mix2.json
rc=$?; echo "$(date +%T) mix2 json rc=$rc $(cat /tmp/mix2.out | tail -1) $(python3 -c "
import json,sys
t=open('/tmp/mix2.json').read()
d=json.loads(t[t.index('\\n{') + 1:])  # (the program's own warnings come first on stderr)
k=[l for l in d['launches'] if l.get('kernel')]
print(len(k), 'kernel launches,', sum(1 for l in k if l.get('verified')), 'verified,', sum(1 for l in k if l.get('verified') is False), 'mismatched,', len(d['problems']), 'problems')" 2>&1 | tail -1)" >> $P
echo "$(date +%T) done" >> $P
# (run in the call: the JSON parse failed on the program's warnings before the JSON; parsed again from the first '{' line by a follow-up command on the same machine: 805 kernel launches, 805 verified, 0 mismatched, 0 problems)
