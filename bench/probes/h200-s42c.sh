#!/bin/bash
# Session 42: the long JAX job's report decoded in blocks against one process, after the
# skim's launches went light (decoders/session/launches.py LaunchSink.light): the
# 1,000-step two-GPU JAX job recorded (unless /tmp/jaxdp/c1.tlc is there), its split and
# offline time, and bench/same_sharded.py on it (--json and the text report, each sharded
# and in one process). Also DDP at 1,000 steps. nvidia-h200-x2; carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
for spec in jaxdp:train_jax_dp.py ddp:train_ddp.py; do
  IFS=: read -r name prog <<< "$spec"; d=/tmp/$name; mkdir -p $d
  if [ ! -s $d/c1.tlc ]; then
    timeout 200 $TL trace-launch --no-report -o $d/c1.tlc python3 scripts/corpus/$prog 1000 > /dev/null 2> $d/report1.txt
    echo "$(date +%T) $name recorded rc=$? $(ls -la $d/c1.tlc | awk '{print $5}') bytes" >> $P
  fi
  timeout 100 python3 -c "
import sys, time
from decoders.session import decode_capture
for brief, full in ((10, False), (None, True)):
    t = time.monotonic(); m = decode_capture(sys.argv[1], brief=brief, full_blocks=full)
    print('$name brief', brief, round(time.monotonic() - t, 2), 's', m.split)
" $d/c1.tlc >> $P 2>&1
  timeout 250 python3 bench/same_sharded.py $d/c1.tlc >> $P 2>&1; echo "same_sharded rc=$?" >> $P
done
echo "$(date +%T) done" >> $P
