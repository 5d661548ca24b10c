#!/bin/bash
# Session 42: why a long JAX job's blocks fork late (bench/probes/h200-s42a.sh: the process
# that follows the capture reached block 5's warm-up 7.8 s into a 12.5 s decode). The
# 1,000-step two-GPU JAX job recorded once, then bench/skim_cost.py on it: compiled, and on
# a copy of the .py files alone with a profile. nvidia-h200-x2; carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/jaxdp; mkdir -p $d
if [ ! -s $d/c1.tlc ]; then
  timeout 200 $TL trace-launch --no-report -o $d/c1.tlc python3 scripts/corpus/train_jax_dp.py ${STEPS:-1000} > $d/traced1.out 2> $d/report1.txt
  echo "$(date +%T) recorded rc=$? $(ls -la $d/c1.tlc | awk '{print $5}') bytes" >> $P
fi
timeout 150 python3 bench/skim_cost.py $d/c1.tlc >> $P 2>&1
rm -rf /tmp/pure; mkdir -p /tmp/pure
find decoders tracer -name "*.py" | tar cf - -T - | tar xf - -C /tmp/pure
PYTHONPATH=/tmp/site:/tmp/pure timeout 300 python3 bench/skim_cost.py $d/c1.tlc --profile 40 > $OUT/skim-profile.txt 2>&1
head -20 $OUT/skim-profile.txt >> $P
echo "$(date +%T) done" >> $P
