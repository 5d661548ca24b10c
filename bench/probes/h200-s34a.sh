#!/bin/bash
# Session 34 device call 1 (nvidia-h200): the GPU tests on this tree; fresh 100- and
# 500-step transformer captures (scripts/record_scaling.py); on each, the views session 34
# changed: `trace-decode explain` (decoded only as far as its launch: decoders/pick.py),
# `trace-decode diff` of the two, and `trace-decode timeline` in blocks against one process
# (TRACE_LAUNCH_SHARDS=1, the decode before), its output compared by sha256; then target 2
# of issue 24: `trace-decode --json` of the 100-step capture and of launch-loop-10k,
# alternated, 3 reps. Results in $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $L/record.log)" >> $P
T100=/tmp/rs/transformer-100/capture.tlc
T500=/tmp/rs/transformer-500/capture.tlc
ls -la $T100 $T500 >> $P
t() {   # t CMD...: wall, CPU (children) and the largest process's peak RSS (stdout: /tmp/out.txt)
  timeout 120 python3 bench/probes/wall_cpu_rss.py /tmp/out.txt "$@" 2>> $L/stderr.log
}
D="python3 -m tracer.cli_main trace-decode"
for c in $T100 $T500; do
  n=$(basename $(dirname $c))
  echo "explain $n default $(t $D explain $c)" >> $P; cp /tmp/out.txt $L/explain-$n.txt
  echo "explain $n --launch 20000 $(t $D explain $c --launch 20000)" >> $P
  for s in 1 ""; do
    echo "timeline $n shards=${s:-auto} $(TRACE_LAUNCH_SHARDS=$s t $D timeline $c -o /tmp/tl-$s.json)" >> $P
  done
  echo "timeline $n same: $(sha256sum /tmp/tl-1.json /tmp/tl-.json | awk '{print $1}' | uniq | wc -l) distinct" >> $P
done
echo "diff 100 500 $(t $D diff $T100 $T500)" >> $P; cp /tmp/out.txt $L/diff.txt
for rep in 1 2 3; do
  for c in $T100 captures/launch-loop-10k/capture.tlc.gz; do
    echo "json $(basename $(dirname $c)) rep $rep $(t $D --json $c)" >> $P
  done
done
echo "$(date +%T) done" >> $P
