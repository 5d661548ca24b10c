#!/bin/bash
# Session 35 device call 1 (nvidia-h200): the decode in blocks' smallest block
# (decoders/session/shard.py MIN_SUBMISSIONS, 4096 SUBMISSION records) against 2048 and
# 1024, on target 2 of issue 24: `trace-decode --json` of a 100-step transformer capture
# (recorded fresh, scripts/record_scaling.py) and of captures/launch-loop-10k,
# alternated, 3 reps each, with bench/json_phases.py's phases; the 500-step capture's
# --json at 4096 and 1024 (14 blocks either way: no change expected); then the timeline
# A/B (bench/timeline_ab.py: the timeline before session 35, pure Python, against this
# tree's, compiled) on the 100- and 500-step captures. Carry .whl, .s35/timeline_old.py. Results in $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
echo "cpus $(nproc)" >> $P
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $L/record.log)" >> $P
T100=/tmp/rs/transformer-100/capture.tlc
T500=/tmp/rs/transformer-500/capture.tlc
LOOP=captures/launch-loop-10k/capture.tlc.gz
t() {   # t CMD...: wall, CPU (children) and the largest process's peak RSS
  timeout 120 python3 bench/probes/wall_cpu_rss.py /tmp/out.txt "$@" 2>> $L/stderr.log
}
D="python3 -m tracer.cli_main trace-decode"
for min in 4096 2048 1024; do
  sed -i "s/^MIN_SUBMISSIONS = [0-9]*/MIN_SUBMISSIONS = $min/" decoders/session/shard.py
  timeout 150 python3 setup.py -q build_ext --inplace > $L/build-$min.log 2>&1
  rc=$?; echo "$(date +%T) min=$min built rc=$rc" >> $P
  timeout 100 python3 bench/json_phases.py $T100 $LOOP 2>> $L/stderr.log | sed "s/^/min=$min phases /" >> $P
  for rep in 1 2 3; do
    for c in $T100 $LOOP; do
      echo "min=$min json $(basename $c) rep $rep $(t $D --json $c)" >> $P
    done
  done
  if [ $min = 4096 ] || [ $min = 1024 ]; then
    echo "min=$min json t500 $(t $D --json $T500)" >> $P
  fi
done
echo "$(date +%T) timeline A/B" >> $P
timeout 200 python3 bench/timeline_ab.py --old .s35/timeline_old.py $T100 $T500 \
    --out $L/timeline-ab.json >> $P 2>> $L/stderr.log
rc=$?; echo "$(date +%T) done rc=$rc" >> $P
