#!/bin/bash
# Session 28 device call 4, on nvidia-h200-x2 (2 H200s): real jobs that are not in captures/, one
# short length each, natively and under trace-launch (scripts/record_longjobs.sh), CUPTI's
# kernels of a native run as outside truth where the job runs on one GPU; then each capture
# decoded there: kernel launches verified / mismatched / not checked / unnamed
# (bench/corpus_kernels.py) and CUPTI's kernels found in the decode (bench/cupti_coverage.py).
# Results: bench/results-h200-heldout-s28.json.
set -u
REAL=$OUT; export OUT=/tmp/o1; mkdir -p $OUT
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
LONGJOBS=${LONGJOBS:-"ddp:20:20 fsdp:20:20 jaxdp:20:20 graphed:20:20 dynshapes:20:20 hfgpt2:20:20 loader:20:20 threads:100:100 cnn:20:20 tma:20:20"} \
  NOCAPTURES=1 T_JOB=80 T_CUPTI=60 timeout ${T_ALL:-440} bash scripts/record_longjobs.sh
cp $OUT/progress.txt $REAL/progress.txt
export PYTHONPATH=/tmp/site:$PWD
W=/tmp/longjobs
timeout 90 python3 bench/corpus_kernels.py --json $REAL/census.json $(ls -d $W/*-*/ | grep -v cupti) > $REAL/census.txt 2>&1
rc=$?; echo "$(date +%T) census rc=$rc" >> $REAL/progress.txt
for d in $(ls -d $W/*-*/); do timeout 20 python3 bench/cupti_coverage.py $d; done > $REAL/cupti.txt 2>&1
echo "$(date +%T) cupti done" >> $REAL/progress.txt
cp $W/scaling-record-*.json $REAL/ 2>/dev/null
cd $REAL && tar czf records.tgz scaling-record-*.json && rm -f scaling-record-*.json
