#!/bin/bash
# Session 43 device call 2 (nvidia-h200): captures/failed-calls recorded
# (scripts/record.py real --only failed-calls), then held-out jobs live against offline
# (bench/probes/heldout_live.sh) as a check of sessions 41-42's decode in blocks on shapes
# the repository's captures do not hold. Stops starting jobs past 430 s. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
. bench/probes/device-setup.sh
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout 120 python3 scripts/record.py --out $OUT/corpus real --only failed-calls > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^==' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 $OUT/corpus/failed-calls/capture.tlc
rm -f $OUT/corpus/failed-calls/*.truth.json.tmp
start=$SECONDS
for spec in ${HELDOUT:-graphed:200 cupygraph:200 mix3:40 threads:300 cudnn:60 compiled:100}; do
  [ $((SECONDS - start)) -gt 330 ] && { echo "$(date +%T) stop before $spec" >> $P; break; }
  JOBS=$spec T_JOB=90 T_DEC=90 bash bench/probes/heldout_live.sh
done
echo "$(date +%T) all done" >> $P
