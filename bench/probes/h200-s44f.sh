#!/bin/bash
# Session 44 device call 6: the transformer at 500 steps under trace-launch --no-report,
# brought back in two parts (a file comes back up to 16 MiB), for the two-length decode on the
# 2-CPU machine (bench/scaling.py with the 100-step capture of call 1). Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
timeout 100 $TL trace-launch --no-report -o /tmp/t500.tlc python3 scripts/corpus/train_transformer.py 500 > /tmp/t500.out 2> /tmp/t500.err
echo "$(date +%T) recorded t500 rc=$? $(ls -la /tmp/t500.tlc)" >> $P
split -b 15M /tmp/t500.tlc $OUT/t500.tlc.part-
ls -la $OUT >> $P
