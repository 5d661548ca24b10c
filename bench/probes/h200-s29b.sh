#!/bin/bash
# Session 29 device call 2 (nvidia-h200): the whole test suite under pytest-xdist (on the
# image) with --durations, to see where the CI's time goes and whether the tests run
# side by side cleanly.
. bench/probes/device-setup.sh
timeout 480 python3 -m pytest -q -n 14 --durations=150 -p no:cacheprovider tests \
    > $OUT/pytest-xdist.log 2>&1
rc=$?; echo "$(date +%T) pytest rc=$rc $(tail -1 $OUT/pytest-xdist.log)" >> $P
