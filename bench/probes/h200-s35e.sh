#!/bin/bash
# Session 35 device call 5 (nvidia-h200): the shim with the 2D memset and 2D / 3D copy
# calls bracketed (decoders/cuda/api.py slots 87-108): the GPU tests, then
# scripts/corpus/copies_2d.py recorded again (scripts/record.py real --only copies-2d) and
# decoded there (bench/corpus_kernels.py), and the held-out mix job at 20 steps under
# trace-launch with its default report. The capture comes back in $OUT/rec/.
. bench/probes/device-setup.sh
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
rc=$?; echo "$(date +%T) gputests rc=$rc $(tail -1 $OUT/gputests.log)" >> $P
timeout 120 python3 scripts/record.py --out $OUT/rec real --only copies-2d > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(grep '^==' $OUT/record.log | tail -1 | cut -c1-300)" >> $P
timeout 60 python3 bench/corpus_kernels.py $OUT/rec/copies-2d >> $P 2>&1
rm -f $OUT/rec/copies-2d/native.truth.json
timeout 120 python3 -m tracer.cli_main trace-launch -o /tmp/mix.tlc python3 scripts/corpus/heldout_mix.py 20 > /tmp/mix.out 2> $OUT/mix-report.txt
rc=$?; echo "$(date +%T) mix rc=$rc $(cat /tmp/mix.out)" >> $P
grep -n "kernel launches:" $OUT/mix-report.txt >> $P
