#!/bin/bash
# Session 25 device call 3 (run then as .s25/gpu.sh): the GPU tests on this tree, and the held-out
# jobs' long lengths recorded again and counted (verified / not checked) by bench/corpus_kernels.py.
. bench/probes/device-setup.sh
CUDA_VISIBLE_DEVICES=0 timeout 260 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $OUT/gputests.log)" >> $P
W=/tmp/w3; mkdir -p $W
TL="python3 -m tracer.cli_main trace-launch --no-report"
for spec in tma:triton_tma.py:1000 cupygraph:cupy_graph.py:1000 cudnn:train_cudnn_sdpa.py:200; do
  IFS=: read -r name prog n <<< "$spec"
  mkdir -p $W/$name-$n
  timeout 90 $TL -o $W/$name-$n/capture.tlc python3 scripts/corpus/$prog $n > $W/$name-$n.out 2>&1
  rc=$?; echo "$(date +%T) $name-$n rc=$rc $(tail -1 $W/$name-$n.out)" >> $P
done
timeout 150 python3 bench/corpus_kernels.py --json $OUT/heldout-long-census.json $W/tma-1000 $W/cupygraph-1000 $W/cudnn-200 > $OUT/census.log 2>&1
rc=$?; echo "$(date +%T) census rc=$rc" >> $P
