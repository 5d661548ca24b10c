#!/bin/bash
# Session 33 device call 5 (nvidia-h200): the JSON report decoded in blocks (a full decode
# in blocks side by side, decoders/session/shard.py with brief None; the lists each
# block's files laid end to end). The GPU tests; `trace-launch --json` on the 500-step
# transformer against native and the default report, 2 reps interleaved; a fresh 100-step
# capture and launch-loop-10k, `trace-decode --json` of each, alternated, 3 reps (target 2
# of issue 24); the 500-step capture's --json in blocks and in one process (two
# processes: TRACE_LAUNCH_SHARDS=1), the two outputs' sha256. Results in $OUT/logs.tgz.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
N=500
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up rc=$rc" >> $P
# t CMD...: runs it, says on fd 3 its status and wall seconds (its own output redirected)
t() { local s=$EPOCHREALTIME; "$@"; local rc=$?
      awk "BEGIN{printf \"rc=$rc %.2f s\", $EPOCHREALTIME - $s}" >&3; }
for rep in 1 2; do
  echo "native rep $rep $( { t timeout 100 python3 scripts/corpus/train_transformer.py $N \
      > $L/native.out 2> /dev/null; } 3>&1 )" >> $P
  echo "default rep $rep $( { t timeout 150 python3 -m tracer.cli_main trace-launch -o /tmp/d.tlc -- \
      python3 scripts/corpus/train_transformer.py $N > $L/default.out 2> $L/default.err; } 3>&1 )" >> $P
  echo "json rep $rep $( { t timeout 200 python3 -m tracer.cli_main trace-launch --json -o /tmp/j.tlc -- \
      python3 scripts/corpus/train_transformer.py $N > $L/json.out 2> /tmp/json.err; } 3>&1 )" >> $P
  echo "  json $(stat -c %s /tmp/json.err) B; stdout same as native: $(cmp -s $L/native.out $L/json.out && echo yes || echo no)" >> $P
done
grep -v '^ \|^{\|^}' /tmp/json.err | head -5 > $L/json-err-lines.txt
timeout 100 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 --reps 1 \
    --timeout 60 > $L/record-100.log 2>&1
rc=$?; echo "$(date +%T) record 100 rc=$rc $(tail -1 $L/record-100.log)" >> $P
T100=/tmp/rs/transformer-100/capture.tlc
for rep in 1 2 3; do
  for c in $T100 captures/launch-loop-10k/capture.tlc.gz; do
    echo "json $(basename $(dirname $c)) rep $rep $( { t timeout 60 python3 -m tracer.cli_main \
        trace-decode --json $c > /dev/null 2> $L/json.err; } 3>&1 )" >> $P
  done
done
for shards in 14 1; do
  echo "json 500 shards=$shards $( { TRACE_LAUNCH_SHARDS=$shards t timeout 120 python3 -m tracer.cli_main \
      trace-decode --json /tmp/j.tlc > /tmp/j500-$shards.json 2> $L/j500-$shards.err; } 3>&1 ) \
      $(sha256sum < /tmp/j500-$shards.json | cut -c1-16) $(stat -c %s /tmp/j500-$shards.json) B" >> $P
done
echo "$(date +%T) done" >> $P
