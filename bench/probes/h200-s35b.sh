#!/bin/bash
# Session 35 device call 2 (nvidia-h200): the GPU tests on this tree; a held-out job of
# launch paths the corpus lacks (scripts/corpus/heldout_mix.py: a PTX module the driver
# JIT-compiles, a cooperative kernel, managed memory, PyTorch syncs mid-step) at 20 and 100
# steps natively and under trace-launch, CUPTI's kernels of a native 20-step run as outside
# truth (scripts/record_longjobs.sh), each capture decoded (bench/corpus_kernels.py) and
# CUPTI's kernels looked for in it (bench/cupti_coverage.py); then a fresh 500-step
# transformer capture's `trace-decode timeline` (the timeline's build compiled, session 35).
# Results: $OUT/progress.txt, $OUT/census.json, $OUT/cupti.txt; captures in
# $OUT/longjobs.tar.part-*.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $L/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $L/gputests.log)" >> $P
LONGJOBS="mix:20:100" T_JOB=150 T_CUPTI=90 timeout 280 bash scripts/record_longjobs.sh
rc=$?; echo "$(date +%T) longjobs rc=$rc" >> $P
W=/tmp/longjobs
timeout 60 python3 bench/corpus_kernels.py --json $OUT/census.json $(ls -d $W/*-*/ | grep -v cupti) > $OUT/census.txt 2>&1
rc=$?; echo "$(date +%T) census rc=$rc $(tail -3 $OUT/census.txt | tr '\n' ' ')" >> $P
for d in $(ls -d $W/*-*/); do timeout 30 python3 bench/cupti_coverage.py $d; done > $OUT/cupti.txt 2>&1
rc=$?; echo "$(date +%T) cupti rc=$rc $(tail -3 $OUT/cupti.txt | tr '\n' ' ')" >> $P
timeout 100 python3 scripts/record_scaling.py --out /tmp/rs --steps 500 --reps 1 --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $L/record.log)" >> $P
T500=/tmp/rs/transformer-500/capture.tlc
echo "timeline t500 $(timeout 120 python3 bench/probes/wall_cpu_rss.py /dev/null python3 -m tracer.cli_main trace-decode timeline $T500 -o /tmp/tl.json 2>> $L/stderr.log)" >> $P
echo "$(date +%T) done" >> $P
