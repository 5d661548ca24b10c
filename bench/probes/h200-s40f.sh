#!/bin/bash
# Session 40 device call 7 (nvidia-h200, 16 CPUs): target 2 with smaller offline blocks. The
# 100-step transformer (19,214 submissions) is cut in 5 blocks and launch-loop-10k in 3 by
# shard.MIN_SUBMISSIONS (4,096) although 14 could run: bench/json_ratio.py, 5 reps each,
# with MIN_SUBMISSIONS as it is and at 2,048 and 1,024 (set by a sitecustomize.py of this
# probe's, for both captures alike). Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/t100; mkdir -p $d /tmp/sc
[ -f $d/t100.tlc ] || timeout 150 $TL trace-launch --no-report -o $d/t100.tlc python3 scripts/corpus/train_transformer.py 100 > $d/out 2> $d/err
cat > /tmp/sc/sitecustomize.py <<'PY'
import os
if os.environ.get("S40_MIN"):
    from decoders.session import shard
    shard.MIN_SUBMISSIONS = int(os.environ["S40_MIN"])
PY
export PYTHONPATH=/tmp/sc:$PYTHONPATH
for m in "" 2048 1024; do
  echo "$(date +%T) MIN_SUBMISSIONS ${m:-4096}" >> $P
  S40_MIN=$m timeout 170 python3 bench/json_ratio.py $d/t100.tlc --reps 5 --out $OUT/json-ratio-${m:-4096}.json 2>&1 | tail -1 >> $P
done
echo "$(date +%T) done" >> $P
