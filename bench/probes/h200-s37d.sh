#!/bin/bash
# Session 37 device call 4 (nvidia-h200): the final tree's target 2 there (a fresh 100-step
# transformer capture against launch-loop-10k, bench/json_ratio.py, 5 alternated reps: the
# .nv.info records unpacked by struct since call 2), and a fresh 500-step capture brought
# back (two parts) for the scaling run on the 2-CPU machine. Carry .whl.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 150 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 60 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $L/record.log | tr '\n' ' ')" >> $P
timeout 150 python3 bench/json_ratio.py /tmp/rs/transformer-100/capture.tlc --reps 5 \
    --out $OUT/json-ratio.json > $L/ratio.log 2>&1
rc=$?; echo "$(date +%T) json_ratio rc=$rc $(tail -1 $L/ratio.log)" >> $P
cp /tmp/rs/transformer-500/manifest.json $OUT/t500.manifest.json
split -b 15M /tmp/rs/transformer-500/capture.tlc $OUT/t500.tlc.part-
echo "$(date +%T) done" >> $P
