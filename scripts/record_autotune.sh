#!/bin/bash
# Through the device tool (session 15: one call on nvidia-h100-x2, GPU 0 only): record
# scripts/corpus/train_autotune.py (torch.compile mode="max-autotune") as record_longjobs.sh
# records its jobs: CUPTI of the 20-step length first (native), then scripts/record_scaling.py
# at 20 and 200 steps (native and `trace-launch --no-report -o`, stdout and exit compared).
# The CUPTI run compiles cold with 16 compile workers (it is not traced; its Triton kernels fill
# TRITON_CACHE_DIR); every later run compiles and autotunes afresh in one process (a new
# TORCHINDUCTOR_CACHE_DIR per run, train_autotune.py) and loads Triton's kernels from that cache.
# Back under $OUT: progress.txt, meta.tar (logs, manifests, CUPTI, scaling-record.json),
# c20.tar.part-* and c200.tar.part-* (cat | tar x: /tmp/autotune/autotune-N, capture and manifest).
set -u
T0=$(date +%s)
left() { local n=$(( T0 + $1 - $(date +%s) )); [ $n -lt 5 ] && n=5; echo $n; }
step() { echo "$(date +%T) +$(( $(date +%s) - T0 ))s $*" >> $OUT/progress.txt; }
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1 CUDA_VISIBLE_DEVICES=0 \
       TRACE_LAUNCH_IMAGE_MAX=262144 TRITON_CACHE_DIR=/tmp/tl-autotune-triton
export TRACE_LAUNCH_GIT_COMMIT=${TRACE_LAUNCH_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
W=/tmp/autotune; mkdir -p $W $TRITON_CACHE_DIR
step "start commit=$TRACE_LAUNCH_GIT_COMMIT"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc
  timeout 60 python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} >> $OUT/progress.txt 2>&1
timeout 90 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl >> $OUT/progress.txt 2>&1 || { step "pip install failed"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
timeout 120 python3 setup.py -q build_ext --inplace > $W/build.log 2>&1 || {
    step "build failed"; tail -20 $W/build.log >> $OUT/progress.txt; exit 1; }
step built
t=$(date +%s)
TORCHINDUCTOR_COMPILE_THREADS=16 TL_CUPTI_TRUTH=$W/cupti-autotune-20.json \
    timeout 220 python3 scripts/corpus/train_autotune.py 20 > $W/cupti-autotune.log 2>&1
rc=$?
step "cupti rc=$rc wall=$(( $(date +%s) - t ))s $(grep -E '^(steps|loss)=' $W/cupti-autotune.log | tr '\n' ' ')" \
     "triton cache files=$(find $TRITON_CACHE_DIR -type f | wc -l)"
timeout $(left 500) python3 scripts/record_scaling.py --out $W --program scripts/corpus/train_autotune.py \
    --name autotune --steps 20 200 --timeout 280 --truth $W/cupti-autotune-20.json \
    > $W/record-autotune.log 2>&1
rc=$?
step "record rc=$rc $(tail -3 $W/record-autotune.log | tr '\n' ' ')"
ls -la $W $W/*/ >> $OUT/progress.txt 2>&1
(cd /tmp && tar cf $OUT/meta.tar autotune/*.log autotune/*.json autotune/*/manifest.json) 2>> $OUT/progress.txt
# a capture left raw (its traced run killed before trace-launch compacted it) is zstd-compressed
# here (trace-decode reads any zstd stream); a compaction's leftover (*.compact<pid>) stays behind
for c in $W/autotune-*/capture.tlc; do
  [ -f "$c" ] || continue
  [ "$(head -c4 "$c" | od -An -tx1 | tr -d ' \n')" = 28b52ffd ] && continue
  step "raw capture $c $(stat -c %s "$c") B: compressing"
  timeout 30 python3 -c 'import sys, zstandard
with open(sys.argv[1], "rb") as i, open(sys.argv[1] + ".zst", "wb") as o:
    zstandard.ZstdCompressor(level=3, threads=-1).copy_stream(i, o)' "$c" && rm -f "$c"
done
# one split series a length: should the returned files run short, one length comes whole
for n in 20 200; do
  [ -d $W/autotune-$n ] && (cd /tmp && tar cf - --exclude='*.compact*' autotune/autotune-$n) \
      | split -b 15M - "$OUT/c$n.tar.part-"
done
step packed
ls -la $OUT >> $OUT/progress.txt
