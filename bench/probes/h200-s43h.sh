#!/bin/bash
# Session 43 device call 10 (nvidia-h200): captures/copy-sizes-unified (copy_sizes.py's
# copies as cuMemcpyAsync: a one-rank NCCL job's 8-byte cuMemcpyAsync ran the word kernel,
# call 8), brought back as one archive. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
timeout 120 python3 scripts/record.py --out /tmp/rec4 real --only copy-sizes-unified > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== copy-sizes-unified: native' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 /tmp/rec4/copy-sizes-unified/capture.tlc && tar czf $OUT/copy-sizes-unified.tgz -C /tmp/rec4 copy-sizes-unified
