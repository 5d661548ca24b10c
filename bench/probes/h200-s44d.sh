#!/bin/bash
# Session 44 device call 4: captures/triton-descriptors recorded (scripts/record.py), the
# held-out Triton TMA job (scripts/corpus/triton_tma.py, 20 steps) traced and decoded, and
# PyTorch's library paths (bench/probes/tma_libs.py): how many cuTensorMapEncodeTiled calls
# each capture holds and how many launches name a map. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
timeout 200 python3 scripts/record.py --out /tmp/rec real --only triton-descriptors > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== triton-descriptors: native' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 /tmp/rec/triton-descriptors/capture.tlc; tar czf $OUT/triton-descriptors.tgz -C /tmp/rec triton-descriptors
for job in "scripts/corpus/triton_tma.py 20" "bench/probes/tma_libs.py"; do
  n=$(basename ${job%% *} .py)
  timeout 200 $TL trace-launch --no-report -o /tmp/$n.tlc python3 $job > $OUT/$n.out 2>&1
  timeout 120 $TL trace-decode /tmp/$n.tlc > /tmp/$n.txt 2>&1
  echo "$(date +%T) $n rc=$? encodes $(grep -c 'cuTensorMapEncodeTiled' /tmp/$n.txt) map lines $(grep -c 'tensor map @' /tmp/$n.txt) $(grep -m1 'kernel launches:' /tmp/$n.txt)" >> $P
  grep -m3 -A1 'tensor map @' /tmp/$n.txt >> $P
  grep -m2 'cuTensorMapEncodeTiled' /tmp/$n.txt >> $P
done
echo "$(date +%T) done" >> $P
