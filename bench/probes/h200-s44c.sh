#!/bin/bash
# Session 44 device call 3 (nvidia-h200): the shim that forwards 12 argument words and
# brackets cuTensorMapEncodeTiled / cuTensorMapReplaceAddress. captures/tma recorded
# (scripts/record.py real --only tma), decoded here (the text report's tensor map lines),
# the GPU-marked tests, and the built-in vadd (the README's main job). Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
timeout 200 python3 scripts/record.py --out /tmp/rec real --only tma > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== tma' $OUT/record.log | cut -c1-300)" >> $P
cp /tmp/rec/tma/stdout.txt $OUT/tma-stdout.txt 2>/dev/null
timeout 60 $TL trace-decode /tmp/rec/tma/capture.tlc > $OUT/tma-report.txt 2>&1
echo "$(date +%T) decoded rc=$? tensor map lines $(grep -c 'tensor map @' $OUT/tma-report.txt)" >> $P
gzip -6 /tmp/rec/tma/capture.tlc; tar czf $OUT/tma.tgz -C /tmp/rec tma
CUDA_VISIBLE_DEVICES=0 timeout 250 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
echo "$(date +%T) gpu tests rc=$? $(tail -1 $OUT/gputests.log)" >> $P
timeout 60 $TL trace-launch > $OUT/vadd.txt 2>&1
echo "$(date +%T) trace-launch vadd rc=$? $(grep -c verified $OUT/vadd.txt)" >> $P
echo "$(date +%T) done" >> $P
