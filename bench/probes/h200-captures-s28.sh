#!/bin/bash
# Session 28 device call 3: three programs of the real-workload corpus recorded on the H200 to
# be committed as captures/<name>-h200 (scripts/record.py real; the same scripts and ground
# truth as their H100 recordings): PyTorch float8 matmuls (cuBLASLt, CUPTI truth) and the
# driver's copy and memset kernels (cuda-python).
. bench/probes/device-setup.sh
export TORCHINDUCTOR_COMPILE_THREADS=1
timeout 200 python3 scripts/record.py --out $OUT real --only torch-fp8,copy-sizes,memset-sizes > /tmp/real.log 2>&1
rc=$?; echo "$(date +%T) real rc=$rc $(grep -c '^== .*unchanged=True' /tmp/real.log) unchanged" >> $P
for d in $OUT/*/; do
  [ -f $d/capture.tlc ] && gzip -9 $d/capture.tlc
  find $d -type f ! -name capture.tlc.gz ! -name manifest.json -delete
done
ls -la $OUT/*/ >> $P
