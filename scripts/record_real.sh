#!/bin/bash
# Record the real-workload corpus on the H100 through the device tool:
#   scripts/record_real.sh [--only NAME,NAME]
# Builds the shim in place, records each program of scripts/record.py's REAL table into
# $OUT/real/<name>/ (capture + manifest + truth), compresses the captures with xz and packs
# them into parts of 15 MiB (cat real.tar.part-* | tar x).
set -u
OUT=${OUT:-/tmp/trace-launch-out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 setup.py -q build_ext --inplace >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
python3 scripts/record.py --out "$OUT/real" "$@" real 2>&1 | tee "$OUT/record.log"
find "$OUT/real" -name capture.tlc -exec gzip -9 {} +
du -a "$OUT/real" | sort -n | tail -20
tar cf - -C "$OUT" real | split -b 15M - "$OUT/real.tar.part-" && rm -rf "$OUT/real"
ls -la "$OUT"
