#!/bin/bash
# Session 33 device call 2 (nvidia-h200): a Ctrl-C while the default report of a
# 2000-step transformer job is made (2.5 s after its last stdout line: its report took
# ~4.8 s after the program in session 32), and which of the decode's processes outlive
# trace-launch (bench/interrupt_tail.py); then target 2 of issue 24 on this host: a fresh
# 100-step transformer capture (scripts/record_scaling.py) and captures/launch-loop-10k,
# `trace-decode --json` of each to /dev/null, alternated, 3 reps, wall, CPU and the
# largest process's peak RSS. Results in $OUT/logs.tgz, progress in $OUT/progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 150 python3 bench/interrupt_tail.py --after 2.5 -- \
    python3 scripts/corpus/train_transformer.py 2000 > $L/interrupt-2000.json 2> $L/interrupt-2000.err
rc=$?; echo "$(date +%T) interrupt_tail rc=$rc" >> $P
grep -E '"rc"|left|ended_after|sigint_at|program_done' $L/interrupt-2000.json >> $P
tail -c 400 $L/interrupt-2000.json | tr -d '\n' | tail -c 300 >> $P; echo >> $P
timeout 100 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 --reps 1 \
    --timeout 60 > $L/record-100.log 2>&1
rc=$?; echo "$(date +%T) record 100 rc=$rc $(tail -1 $L/record-100.log)" >> $P
T100=/tmp/rs/transformer-100/capture.tlc
for rep in 1 2 3; do
  for c in $T100 captures/launch-loop-10k/capture.tlc.gz; do
    timeout 60 python3 -c 'import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call([sys.executable, "-m", "tracer.cli_main", "trace-decode", "--json",
                      sys.argv[1]], stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"rc={rc} {time.monotonic() - t:.2f} s {r.ru_utime:.2f} user {r.ru_stime:.2f} sys "
      f"{r.ru_maxrss} KiB (largest process)")' $c > /tmp/t.txt 2> $L/json.err
    echo "json $(basename $(dirname $c)) rep $rep $(cat /tmp/t.txt)" >> $P
  done
done
ls -la $T100 >> $P
echo "$(date +%T) done" >> $P
