#!/bin/bash
# Session 36 device call 2 (nvidia-h200): the timeline with its views made by worker
# processes (tracer/parallel.py map_ranges): fresh transformer captures of 100 and 500
# steps (scripts/record_scaling.py), bench/timeline_phases.py on each (the decode, then the
# write without and with the workers, alternated), `trace-decode timeline` of the 500-step
# capture whole, against the job's native wall time; then target 2 of issue 24 again
# (`trace-decode --json` of the 100-step capture and of captures/launch-loop-10k,
# alternated, 3 reps). Carry .whl. Progress and results in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
echo "cpus $(nproc)" >> $P
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $L/record.log | tr '\n' ' ')" >> $P
T100=/tmp/rs/transformer-100/capture.tlc
T500=/tmp/rs/transformer-500/capture.tlc
LOOP=captures/launch-loop-10k/capture.tlc.gz
t() {   # t CMD...: wall, CPU (children) and the largest process's peak RSS
  timeout 120 python3 bench/probes/wall_cpu_rss.py /tmp/out.txt "$@" 2>> $L/stderr.log
}
D="python3 -m tracer.cli_main trace-decode"
timeout 200 python3 bench/timeline_phases.py --reps 2 $T100 $T500 >> $P 2>> $L/stderr.log
rc=$?; echo "$(date +%T) phases rc=$rc" >> $P
for rep in 1 2; do
  echo "timeline t500 rep $rep $(t $D timeline $T500 -o /tmp/tl.json)" >> $P
done
for rep in 1 2 3; do
  for c in $T100 $LOOP; do
    echo "json $(basename $(dirname $c)) rep $rep $(t $D $c --json)" >> $P
  done
done
echo "$(date +%T) done" >> $P
