#!/bin/bash
# Session 43 device call 5 (nvidia-h200): captures/torch-vmm recorded again with module
# images cut at 64 KiB (scripts/record.py), to keep the repository within what a device run
# carries. Carry .whl. (Run with captures/ddp-2rank moved aside: the tree is past 64 MiB.)
. bench/probes/device-setup.sh
timeout 150 python3 scripts/record.py --out /tmp/rec2 real --only torch-vmm > $OUT/record.log 2>&1
echo "$(date +%T) recorded rc=$? $(grep '^== torch-vmm: native' $OUT/record.log | cut -c1-300)" >> $P
gzip -6 /tmp/rec2/torch-vmm/capture.tlc && tar czf $OUT/torch-vmm.tgz -C /tmp/rec2 torch-vmm
