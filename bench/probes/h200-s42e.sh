#!/bin/bash
# Session 42: the one-GPU JAX training job (scripts/corpus/train_jax.py) at STEPS (1,000)
# natively and under trace-launch with its default report (TRACE_LAUNCH_AGAIN as given), then
# offline: the text report (brief 10) with at most 1 and 8 blocks decoded again (with
# TRACE_LAUNCH_SHARD_LOG), and bench/same_sharded.py with 8. nvidia-h200; carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/jax1; mkdir -p $d; S=${STEPS:-1000}
t=$(date +%s%N); timeout 150 python3 scripts/corpus/train_jax.py $S > $d/native.out 2> $d/native.err; nrc=$?
echo "$(date +%T) native $S rc=$nrc $(( ($(date +%s%N) - t) / 1000000 ))ms" >> $P
for r in 1 2; do
  t=$(date +%s%N); timeout 200 $TL trace-launch -o $d/c$r.tlc python3 scripts/corpus/train_jax.py $S > $d/traced$r.out 2> $d/report$r.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced$r.out && echo same || echo DIFFERENT)
  echo "$(date +%T) rec $r rc=$trc ${tt}ms stdout $same; $(grep -m1 'kernel launches:' $d/report$r.txt | sed 's/^ *//'); $(grep -m1 'failed' $d/report$r.txt)" >> $P
  for again in 1 8; do
    rm -f $d/log
    TRACE_LAUNCH_AGAIN=$again TRACE_LAUNCH_SHARD_LOG=$d/log timeout 100 python3 -c "
import sys, time
from decoders.session import decode_capture
t = time.monotonic(); m = decode_capture(sys.argv[1], brief=10)
print('again', sys.argv[2], round(time.monotonic() - t, 2), 's', m.split)
" $d/c$r.tlc $again >> $P 2>&1
    [ $again = 8 ] && { tr '\n' ';' < $d/log >> $P; echo >> $P; }
  done
done
TRACE_LAUNCH_AGAIN=8 timeout 150 python3 bench/same_sharded.py $d/c1.tlc >> $P 2>&1; echo "same_sharded rc=$?" >> $P
echo "$(date +%T) done" >> $P
