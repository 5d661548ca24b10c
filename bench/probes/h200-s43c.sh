#!/bin/bash
# Session 43 device call 4 (nvidia-h200): the shim now brackets the virtual memory calls
# (cuMemAddressReserve/Free, cuMemCreate/Release, cuMemMap/Unmap; shim/abi.h slots 109-114).
# Records captures/torch-vmm (PyTorch on expandable segments), brought back as one archive,
# then runs the GPU-marked tests. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
export XLA_PYTHON_CLIENT_PREALLOCATE=false
timeout 150 python3 scripts/record.py --out /tmp/rec real --only torch-vmm > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== torch-vmm: native' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 /tmp/rec/torch-vmm/capture.tlc && tar czf $OUT/torch-vmm.tgz -C /tmp/rec torch-vmm
CUDA_VISIBLE_DEVICES=0 timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/gputests.log 2>&1
echo "$(date +%T) gpu tests rc=$? $(tail -1 $OUT/gputests.log)" >> $P
