#!/bin/bash
# Session 29 device call 1 (nvidia-h200): fresh 100- and 500-step transformer captures
# (scripts/record_scaling.py, native and --no-report interleaved, one rep) brought back for
# profiling the decode on the 2-core machine; and the offline text decode of the 500-step
# capture timed here, CPU per process (bench/cpu_by_process.py), the baseline for this
# session's decode changes. Small results in $OUT/logs.tgz (the 8-file limit).
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record_scaling rc=$rc $(tail -1 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $L/ 2>/dev/null
cp /tmp/rs/transformer-100/capture.tlc $OUT/t100.tlc
split -b 15M /tmp/rs/transformer-500/capture.tlc $OUT/t500.tlc.part-
for rep in 1 2; do
  python3 bench/cpu_by_process.py $L/cpu-decode500-$rep.json & S=$!
  /usr/bin/time -f "%e s wall %M KB" timeout 60 python3 -m tracer.cli_main trace-decode \
      /tmp/rs/transformer-500/capture.tlc > /dev/null 2> $L/decode500-$rep.err
  kill $S; wait $S
  echo "$(date +%T) decode500 rep $rep: $(tail -1 $L/decode500-$rep.err)" >> $P
done
echo "$(date +%T) done" >> $P
