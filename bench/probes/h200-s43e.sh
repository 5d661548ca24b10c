#!/bin/bash
# Session 43 device call 6 (nvidia-h200): the shim copies a cuMemcpy2D*/3D* call's
# CUDA_MEMCPY2D / 3D (COPY_PARAMS sections): captures/copies-2d recorded again, brought back
# as one archive, then the GPU-marked tests. Carry .whl. (Run with captures/ddp-2rank moved
# aside: the tree is past 64 MiB.)
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
timeout 150 python3 scripts/record.py --out /tmp/rec3 real --only copies-2d > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== copies-2d: native' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 /tmp/rec3/copies-2d/capture.tlc && tar czf $OUT/copies-2d.tgz -C /tmp/rec3 copies-2d
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
echo "$(date +%T) gpu tests rc=$? $(tail -1 $OUT/gputests.log)" >> $P
