#!/bin/bash
# Session 38 device call 2 (nvidia-h200): the tree after call 1 (shard: misses told as they
# come, a release left to the block that holds its channel's last launch, each block's own
# first launches, a 1,024-submission warm-up while the program runs). The GPU tests; the
# held-out mix3 at 20 and 100 steps natively, --no-report and with the default report, 2
# reps (record_longjobs.sh REPORT=1, no CUPTI); its 100-step capture decoded offline sharded
# and in one split decode, with the reason; the transformer at 100 and 500 steps with its
# default report, 2 reps. The 100-step mix3 capture comes back in two parts. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 30 python3 scripts/corpus/heldout_mix3.py 2 > /dev/null 2>&1     # (warm the caches: call 1's first native run took 15 s)
timeout 200 python3 scripts/record_scaling.py --out /tmp/longjobs --program scripts/corpus/heldout_mix3.py \
    --name mix3 --steps 20 100 --reps 2 --report --timeout 60 > $L/record-mix3.log 2>&1
rc=$?; echo "$(date +%T) mix3 rc=$rc $(tail -2 $L/record-mix3.log | tr '\n' ' ')" >> $P
cp /tmp/longjobs/scaling-record.json $OUT/scaling-record-mix3.json 2>/dev/null
C=/tmp/longjobs/mix3-100/capture.tlc
for e in "" "TRACE_LAUNCH_SHARDS=1"; do
  echo "$(date +%T) offline [$e] $(env $e timeout 100 python3 bench/probes/brief_decode.py $C 2>&1 | tail -1)" >> $P
done
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 2 --report \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) transformer rc=$rc $(tail -2 $L/record.log | tr '\n' ' ')" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
cp /tmp/longjobs/mix3-100/manifest.json $OUT/mix3-100.manifest.json
split -b 15M $C $OUT/mix3-100.tlc.part-
echo "$(date +%T) done" >> $P
