#!/bin/bash
# Session 36 device call 1 (nvidia-h200): a second held-out job of launch paths the corpus
# lacks (scripts/corpus/heldout_mix2.py: kernel parameters past 4 KB, launch attributes,
# PyTorch on cudaMallocAsync with a graph replayed), at 3 steps natively first (does it run),
# then at 20 and 100 steps natively and under trace-launch with CUPTI's kernels of a native
# 20-step run as outside truth (scripts/record_longjobs.sh, REPORT=1), each capture decoded
# (bench/corpus_kernels.py) and CUPTI's kernels looked for in it (bench/cupti_coverage.py),
# and the 20-step job under trace-launch with its default report. Results:
# $OUT/progress.txt, census.json/.txt, cupti.txt, mix2-report.txt; captures in
# $OUT/longjobs.tar.part-*.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L . /tmp/longjobs/*.log 2>/dev/null' EXIT
timeout 90 python3 scripts/corpus/heldout_mix2.py 3 > $L/native3.log 2>&1
rc=$?; echo "$(date +%T) native3 rc=$rc $(tail -3 $L/native3.log | cut -c1-400 | tr '\n' ' ')" >> $P
REPORT=1 LONGJOBS="mix2:20:100" T_JOB=240 T_CUPTI=90 timeout 360 bash scripts/record_longjobs.sh
rc=$?; echo "$(date +%T) longjobs rc=$rc" >> $P
W=/tmp/longjobs
timeout 60 python3 bench/corpus_kernels.py --json $OUT/census.json $(ls -d $W/*-*/ | grep -v cupti) > $OUT/census.txt 2>&1
rc=$?; echo "$(date +%T) census rc=$rc $(tail -3 $OUT/census.txt | tr '\n' ' ')" >> $P
for d in $(ls -d $W/*-*/); do timeout 30 python3 bench/cupti_coverage.py $d; done > $OUT/cupti.txt 2>&1
rc=$?; echo "$(date +%T) cupti rc=$rc $(tail -3 $OUT/cupti.txt | tr '\n' ' ')" >> $P
timeout 100 python3 -m tracer.cli_main trace-launch -o /tmp/mix2.tlc python3 scripts/corpus/heldout_mix2.py 20 > /tmp/mix2.out 2> $OUT/mix2-report.txt
rc=$?; echo "$(date +%T) mix2 report rc=$rc $(cat /tmp/mix2.out)" >> $P
grep -n "kernel launches:" $OUT/mix2-report.txt >> $P
echo "$(date +%T) done" >> $P
