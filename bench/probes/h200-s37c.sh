#!/bin/bash
# Session 37 device call 3 (nvidia-h200): a third held-out job of library paths the corpus
# lacks (scripts/corpus/heldout_mix3.py: cuRAND, cuSPARSE, CUB, 80 KB of dynamic shared
# memory, PyTorch's sort/unique/nonzero/multinomial/index_add/embedding_bag/conv3d/bf16, a
# graph captured across two streams): natively at 3 steps first (does it run), then at 20
# and 100 steps natively and under trace-launch (scripts/record_longjobs.sh, REPORT=1, CUPTI
# at 20 steps), the census of its captures, CUPTI's kernel configurations against the
# decode (bench/cupti_coverage.py), and the default report of a 20-step run. Carry .whl.
# $OUT/progress.txt, census.json, mix3-report.txt, the record's log and JSON, the 20-step
# capture as mix3-20.tgz; census.txt and cupti.txt in logs.tgz (the tool brings back 8 files).
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L . /tmp/longjobs/*.log 2>/dev/null' EXIT
timeout 120 python3 scripts/corpus/heldout_mix3.py 3 > $L/native3.log 2>&1
rc=$?; echo "$(date +%T) native3 rc=$rc $(tail -3 $L/native3.log | cut -c1-600 | tr '\n' ' ')" >> $P
[ $rc = 0 ] || exit 1
NOCAPTURES=1 REPORT=1 LONGJOBS="mix3:20:100" T_JOB=240 T_CUPTI=120 timeout 400 bash scripts/record_longjobs.sh
rc=$?; echo "$(date +%T) longjobs rc=$rc" >> $P
W=/tmp/longjobs
timeout 60 python3 bench/corpus_kernels.py --json $OUT/census.json $(ls -d $W/*-*/ | grep -v cupti) > $L/census.txt 2>&1
rc=$?; echo "$(date +%T) census rc=$rc $(tail -3 $L/census.txt | tr '\n' ' ')" >> $P
for d in $(ls -d $W/*-*/); do timeout 30 python3 bench/cupti_coverage.py $d; done > $L/cupti.txt 2>&1
rc=$?; echo "$(date +%T) cupti rc=$rc $(tail -3 $L/cupti.txt | tr '\n' ' ')" >> $P
timeout 100 python3 -m tracer.cli_main trace-launch -o /tmp/mix3.tlc python3 scripts/corpus/heldout_mix3.py 20 > /tmp/mix3.out 2> $OUT/mix3-report.txt
rc=$?; echo "$(date +%T) mix3 report rc=$rc $(cat /tmp/mix3.out | cut -c1-300)" >> $P
grep -n "kernel launches:" $OUT/mix3-report.txt >> $P
tar czf $OUT/mix3-20.tgz -C $W mix3-20 2>/dev/null
echo "$(date +%T) done" >> $P
