#!/bin/bash
# Session 29 device call 3 (nvidia-h200): the whole suite, GPU tests included, under
# pytest-xdist, with the package's wheels installed into the image's Python (not a
# --target folder: the tests' subprocesses set their own PYTHONPATH and did not see
# /tmp/site in call 2), with --durations.
set -u
export PYTHONUNBUFFERED=1
P=$OUT/progress.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl > $OUT/pip.log 2>&1
rc=$?; echo "$(date +%T) pip rc=$rc $(python3 -V)" >> $P
timeout 150 python3 setup.py -q build_ext --inplace > $OUT/build.log 2>&1
rc=$?; echo "$(date +%T) build rc=$rc" >> $P
timeout 420 python3 -m pytest -q -n 14 --durations=60 -p no:cacheprovider tests \
    > $OUT/pytest-xdist.log 2>&1
rc=$?; echo "$(date +%T) pytest rc=$rc $(tail -1 $OUT/pytest-xdist.log)" >> $P
