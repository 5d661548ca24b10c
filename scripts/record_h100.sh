#!/bin/bash
# Re-record on the H100 through the device tool (which runs this in the repo root with
# $OUT set and the wheels of construct and pyelftools carried in .whl/):
#   scripts/record_h100.sh JOB [JOB ...]      jobs: see scripts/record.py
# Builds the shim in place, then records into $OUT/<job>/ (capture + manifest).
set -u
OUT=${OUT:-/tmp/trace-launch-out}
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
python3 setup.py -q build_ext --inplace >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
export PYTHONUNBUFFERED=1
python3 scripts/record.py --out "$OUT/corpus" "$@" 2>&1 | tee "$OUT/record.log"
# The device tool brings back at most 8 files of 16 MiB: compress each capture, drop the
# binaries, pack the corpus into one archive and split it into 15 MiB parts
# (cat corpus.tgz.part-* | tar xz).
find "$OUT/corpus" -name capture.tlc -exec gzip -6 {} +
find "$OUT/corpus" -maxdepth 1 -type f -perm -u+x -delete
tar czf - -C "$OUT" corpus | split -b 15M - "$OUT/corpus.tgz.part-" && rm -rf "$OUT/corpus"
