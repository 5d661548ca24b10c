#!/bin/bash
# Session 24 device call 2 (run then as .s24/exp2.sh, its setup inline): the 500-step job's
# default report against native, interleaved reps (one host's noise between runs was 11-15 s
# natively in call 1), and the default report with --no-compress (whether the exit step's
# zstd slows the decode's tail); then a fresh 100-step capture's --json decode against
# launch-loop-10k's, three reps.
. bench/probes/device-setup.sh
W=/tmp/w2; mkdir -p $W
R=$OUT/runs.jsonl
J="python3 scripts/corpus/train_transformer.py 500"
TL="python3 -m tracer.cli_main trace-launch"
L="timeout 90 python3 bench/probes/timed_run.py"
for rep in 1 2 3 4; do
  $L native$rep $J >> $R
  $L default$rep $TL -o $W/d.tlc $J >> $R; rm -f $W/d.tlc
  $L nocompress$rep $TL --no-compress -o $W/n.tlc $J >> $R; rm -f $W/n.tlc
  echo "$(date +%T) rep $rep" >> $P
done
timeout 60 $TL --no-report -o $W/t100.tlc python3 scripts/corpus/train_transformer.py 100 > $W/t100.out 2>&1
rc=$?; echo "$(date +%T) t100 rc=$rc $(ls -la $W/t100.tlc)" >> $P
for rep in 1 2 3; do
  timeout 150 python3 bench/scaling.py $W/t100.tlc --views json --out $OUT/scaling-json-$rep.json >> $P 2>&1
done
echo "$(date +%T) done" >> $P
