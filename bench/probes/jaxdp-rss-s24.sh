#!/bin/bash
# Session 24 device call 4 (2 GPUs; run then as .s24/exp3.sh, its setup inline): jaxdp at
# 20 and 200 steps under trace-launch --no-report, then bench/scaling.py on both captures
# there: peak RSS of the decode with the compiled tree.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
. bench/probes/device-setup.sh
W=/tmp/back; mkdir -p $W
for n in 20 200; do
  timeout 120 python3 -m tracer.cli_main trace-launch --no-report -o $W/jaxdp-$n.tlc python3 scripts/corpus/train_jax_dp.py $n > $W/jaxdp-$n.out 2> $W/jaxdp-$n.err
  rc=$?; echo "$(date +%T) jaxdp-$n rc=$rc $(ls -la $W/jaxdp-$n.tlc) $(tail -1 $W/jaxdp-$n.out)" >> $P
done
timeout 150 python3 bench/scaling.py $W/jaxdp-20.tlc $W/jaxdp-200.tlc --out $OUT/scaling-jaxdp.json >> $P 2>&1
echo "$(date +%T) scaled" >> $P
tar cf - -C /tmp back | split -b 15M - "$OUT/jaxdp.tar.part-"
echo "$(date +%T) packed $(ls $OUT)" >> $P
