#!/bin/bash
# Session 34 device call 2 (nvidia-h200): the GPU tests on the final tree; a fresh 500-step
# transformer capture (scripts/record_scaling.py); `trace-decode CAPTURE --cost` and a
# selection (`--channel`) in one process (TRACE_LAUNCH_SHARDS=1, the decode before) and in
# blocks, their outputs compared by sha256; explain and diff once more. Results in
# $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $L/record.log)" >> $P
T500=/tmp/rs/transformer-500/capture.tlc
t() {   # t OUTFILE CMD...: wall, CPU (children) and the largest process's peak RSS
  timeout 150 python3 bench/probes/wall_cpu_rss.py "$@" 2>> $L/stderr.log
}
D="python3 -m tracer.cli_main trace-decode"
for v in "--cost" "--json --cost" "--channel 0xa"; do
  for s in 1 ""; do
    echo "$v shards=${s:-auto} $(TRACE_LAUNCH_SHARDS=$s t /tmp/o-$s.txt $D $T500 $v)" >> $P
  done
  echo "$v same: $(sha256sum /tmp/o-1.txt /tmp/o-.txt | awk '{print $1}' | uniq | wc -l) distinct, $(wc -c < /tmp/o-.txt) B" >> $P
done
echo "explain 500 $(t /tmp/ex.txt $D explain $T500)" >> $P
echo "$(date +%T) done" >> $P
