#!/bin/bash
# Session 38 device call 1 (nvidia-h200): a block's miss found as it happens
# (decoders/session/shard.py _Early). The held-out mix3 job's default report had taken 1.49x
# and 1.96x native at 20 and 100 steps (session 37): its live decode in blocks met a miss that
# counts (block 1: a release before any launch) only once block 0 handed its last launch over
# at the program's end, then decoded the capture again. Here: mix3 at 20 and 100 steps
# natively, under --no-report and with the default report (record_longjobs.sh REPORT=1, no
# CUPTI: session 37 checked its 89 configurations); the 100-step capture decoded offline
# (text) sharded (the default here) and in one split decode, with the reason the report
# gives; the transformer at 100 and 500 steps with the default report (record_scaling.py
# --report) against session 37's 1.21x. The 100-step mix3 capture comes back. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L . /tmp/longjobs/*.log 2>/dev/null' EXIT
CUPTI=0 NOCAPTURES=1 REPORT=1 LONGJOBS="mix3:20:100" T_JOB=240 timeout 300 bash scripts/record_longjobs.sh > $L/longjobs.log 2>&1
rc=$?; echo "$(date +%T) mix3 rc=$rc $(tail -3 /tmp/longjobs/record-mix3.log | cut -c1-900 | tr '\n' ' ')" >> $P
C=/tmp/longjobs/mix3-100/capture.tlc
for e in "" "TRACE_LAUNCH_SHARDS=1"; do
  echo "$(date +%T) offline [$e] $(env $e timeout 100 python3 bench/probes/brief_decode.py $C 2>&1 | tail -1)" >> $P
done
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 --report \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) transformer rc=$rc $(tail -2 $L/record.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
cp /tmp/longjobs/scaling-record-mix3.json $OUT/ 2>/dev/null
cp $C $OUT/mix3-100.tlc; cp /tmp/longjobs/mix3-100/manifest.json $OUT/mix3-100.manifest.json
echo "$(date +%T) done" >> $P
