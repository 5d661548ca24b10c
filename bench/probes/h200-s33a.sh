#!/bin/bash
# Session 33 device call 1 (nvidia-h200): the GPU tests on this tree; the 500-step
# transformer's default report (decoded in blocks while it runs, its progress now read
# from the blocks: decoders/session/shard.py Board) against native, 3 reps interleaved
# (scripts/record_scaling.py); the live decode's progress calls logged through the end of
# the report (bench/live_progress.py); a Ctrl-C while the report is made, and which of the
# decode's processes outlive trace-launch (bench/interrupt_tail.py). Results in
# $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up run rc=$rc" >> $P
timeout 250 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps ${REPS:-3} \
    --report --timeout 100 > $L/record-500.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record-500.log)" >> $P
grep "rep=" $L/record-500.log >> $P
cp /tmp/rs/scaling-record.json $L/scaling-record-500.json 2>/dev/null
LIVELOG=$L/live-progress.json timeout 60 python3 bench/live_progress.py -o /tmp/lp.tlc -- \
    python3 scripts/corpus/train_transformer.py 500 > $L/live-progress.out 2> $L/live-progress.err
rc=$?; echo "$(date +%T) live_progress rc=$rc" >> $P
timeout 90 python3 bench/interrupt_tail.py --after 1.0 -- \
    python3 scripts/corpus/train_transformer.py 500 > $L/interrupt.json 2> $L/interrupt.err
rc=$?; echo "$(date +%T) interrupt_tail rc=$rc" >> $P
grep -E '"rc"|left|ended_after' $L/interrupt.json >> $P
echo "$(date +%T) done" >> $P
