#!/bin/bash
# Session 43 device call 1 (nvidia-h200, 16 CPUs), the tree with session 42's light skim:
# target 2 again (the 100-step transformer, recorded here: the tree is too close to the
# 64 MiB a run carries to bring one), bench/json_phases.py on both captures, and the one-GPU
# JAX job at 1,000 steps natively and under trace-launch with its default report, its
# follower's events logged (TRACE_LAUNCH_SHARD_LOG), to see where the report's tail goes.
# Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/t100; mkdir -p $d
timeout 150 $TL trace-launch --no-report -o $d/t100.tlc python3 scripts/corpus/train_transformer.py 100 > $d/out 2> $d/err
echo "$(date +%T) recorded t100 rc=$? $(ls -la $d/t100.tlc)" >> $P
timeout 200 python3 bench/json_ratio.py $d/t100.tlc --reps 5 --out $OUT/json-ratio.json > $OUT/json-ratio.txt 2>&1
tail -1 $OUT/json-ratio.txt >> $P
timeout 100 python3 bench/json_phases.py $d/t100.tlc captures/launch-loop-10k/capture.tlc.gz >> $P 2>&1
j=/tmp/jax1; mkdir -p $j
for rep in 1 2; do
  t=$(date +%s%N); timeout 150 python3 scripts/corpus/train_jax.py 1000 > $j/native.out 2> $j/native.err; nrc=$?
  tn=$(( ($(date +%s%N) - t) / 1000000 ))
  t=$(date +%s%N); TRACE_LAUNCH_SHARD_LOG=$OUT/jax1-shardlog-$rep.txt timeout 200 $TL trace-launch -o $j/c$rep.tlc python3 scripts/corpus/train_jax.py 1000 > $j/traced.out 2> $OUT/jax1-report-$rep.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $j/native.out $j/traced.out && echo same || echo DIFFERENT)
  echo "$(date +%T) jax1 rep $rep native rc=$nrc ${tn}ms traced+report rc=$trc ${tt}ms stdout $same" >> $P
done
echo "$(date +%T) done" >> $P
