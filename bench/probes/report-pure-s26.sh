#!/bin/bash
# Session 26 device call 3: the 500-step transformer job with its default report, the decode
# compiled (setup.py COMPILED) against the same tree as pure Python, alternating per rep,
# each rep with its own native run (scripts/record_scaling.py --report): does the compiled
# build shorten the whole job on the H100's Python 3.12? (bench/compiled_ab.py says the
# decode's CPU is the same.) Result: bench/results-h100-report-pure-s26.json.
. bench/probes/device-setup.sh
mkdir -p /tmp/pure
tar cf - --exclude='*.cpython-3*-x86_64-linux-gnu.so' --exclude=./build --exclude=./.whl . \
    | tar xf - -C /tmp/pure
echo "$(date +%T) pure copy: $(find /tmp/pure -name '*.cpython-3*.so' | wc -l) extension modules, shim $(ls /tmp/pure/tracer/libtracelaunch.so)" >> $P
for rep in 1 2 3; do
  for tree in compiled pure; do
    dir=$PWD; [ $tree = pure ] && dir=/tmp/pure
    (cd $dir && PYTHONPATH=/tmp/site:$dir timeout 200 python3 scripts/record_scaling.py \
        --out /tmp/r-$tree-$rep --steps 500 --reps 1 --report --timeout 120 \
        > /tmp/r-$tree-$rep.log 2>&1)
    rc=$?; echo "$(date +%T) $tree rep $rep rc=$rc $(tail -1 /tmp/r-$tree-$rep.log)" >> $P
  done
done
python3 - > $OUT/report-pure.json <<'PY'
import json, glob
out = {}
for f in sorted(glob.glob("/tmp/r-*-*/scaling-record.json")):
    out[f.split("/")[2]] = json.load(open(f))
print(json.dumps(out, indent=1))
PY
echo "$(date +%T) done" >> $P
