#!/bin/bash
# Session 26 device call 1: on the H100 host's Python (3.12), how much the compiled decode
# gains over the same sources in pure Python (bench/compiled_ab.py), on a fresh 500-step
# transformer capture; and where the front's CPU goes there (perf, bench/perf_categories.py),
# beside this machine's Python 3.11 and 3.12 (docs/measurements.md, session 26).
# Result: bench/results-h100-compiled-ab-s26.json.
. bench/probes/device-setup.sh
python3 -c "import sysconfig, sys; print(sys.version, 'shared', sysconfig.get_config_var('Py_ENABLE_SHARED'))" >> $P
python3 -c "import Cython; print('Cython', Cython.__version__)" >> $P 2>&1
[ -f /tmp/w1/transformer-500/capture.tlc ] || timeout 200 python3 scripts/record_scaling.py --out /tmp/w1 --steps 500 --reps 1 \
    --timeout 120 > $OUT/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -1 $OUT/record.log)" >> $P
CAP=/tmp/w1/transformer-500/capture.tlc
ls -la $CAP >> $P
timeout 300 python3 bench/compiled_ab.py $CAP --reps 3 --out $OUT/compiled-ab.json \
    2>> $P > /dev/null
rc=$?; echo "$(date +%T) ab rc=$rc" >> $P
if command -v perf > /dev/null; then
  timeout 60 perf record -F 499 -g -o /tmp/perf.data python3 -c "import os, sys; \
from decoders.session.front import main; fd = os.open(os.devnull, os.O_WRONLY); \
sys.exit(main(['--out', str(fd), '--path', '$CAP']))" > /dev/null 2>&1
  perf report -i /tmp/perf.data --no-children --sort symbol -g none 2>/dev/null | head -300 \
      > $OUT/perf-front.txt
  python3 bench/perf_categories.py < $OUT/perf-front.txt > $OUT/perf-categories.json
else
  echo "no perf" >> $P
fi
echo "$(date +%T) done" >> $P
