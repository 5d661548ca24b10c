#!/bin/bash
# Session 42: where the time goes when several blocks of a long JAX job's decode are decoded
# again, seeded. The 1,000-step two-GPU JAX job recorded RECS times under trace-launch (its
# default report; stdout against one native run), then each capture decoded offline (text,
# brief 10) with at most 1 block decoded again (the default) and with at most 8
# (TRACE_LAUNCH_AGAIN), each with TRACE_LAUNCH_SHARD_LOG: when each block forked, told its
# known(), ended, was checked, and which were decoded again. nvidia-h200-x2; carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/jaxdp; mkdir -p $d
t=$(date +%s%N); timeout 150 python3 scripts/corpus/train_jax_dp.py 1000 > $d/native.out 2> $d/native.err; nrc=$?
echo "$(date +%T) native rc=$nrc $(( ($(date +%s%N) - t) / 1000000 ))ms" >> $P
for r in $(seq 1 ${RECS:-2}); do
  t=$(date +%s%N); timeout 200 $TL trace-launch -o $d/c$r.tlc python3 scripts/corpus/train_jax_dp.py 1000 > $d/traced$r.out 2> $d/report$r.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced$r.out && echo same || echo DIFFERENT)
  echo "$(date +%T) rec $r rc=$trc ${tt}ms stdout $same; $(grep -m1 'kernel launches:' $d/report$r.txt | sed 's/^ *//'); $(ls -la $d/c$r.tlc | awk '{print $5}') bytes" >> $P
  for again in 1 8; do
    rm -f $d/log
    TRACE_LAUNCH_AGAIN=$again TRACE_LAUNCH_SHARD_LOG=$d/log timeout 120 python3 -c "
import sys, time
from decoders.session import decode_capture
t = time.monotonic(); m = decode_capture(sys.argv[1], brief=10)
print('rec', sys.argv[2], 'again', sys.argv[3], round(time.monotonic() - t, 2), 's', m.split)
" $d/c$r.tlc $r $again >> $P 2>&1
    tr '\n' ';' < $d/log >> $P; echo >> $P
  done
done
echo "$(date +%T) done" >> $P
