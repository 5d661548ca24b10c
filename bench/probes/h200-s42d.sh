#!/bin/bash
# Session 42: blocks decoded again, several at once, now that the skim's launches are light.
# The 1,000-step two-GPU JAX job natively, then recorded RECS times under trace-launch with
# its default report and TRACE_LAUNCH_AGAIN=8; each capture decoded offline (text, brief
# 10) with at most 1 and at most 8 blocks decoded again, and the full decode with 8; then
# bench/same_sharded.py (with 8) on the first capture that needed two or more.
# nvidia-h200-x2; carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
d=/tmp/jaxdp4; mkdir -p $d
t=$(date +%s%N); timeout 150 python3 scripts/corpus/train_jax_dp.py 1000 > $d/native.out 2> $d/native.err; nrc=$?
echo "$(date +%T) native rc=$nrc $(( ($(date +%s%N) - t) / 1000000 ))ms" >> $P
pick=
for r in $(seq 1 ${RECS:-3}); do
  t=$(date +%s%N); TRACE_LAUNCH_AGAIN=8 timeout 200 $TL trace-launch -o $d/c$r.tlc python3 scripts/corpus/train_jax_dp.py 1000 > $d/traced$r.out 2> $d/report$r.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced$r.out && echo same || echo DIFFERENT)
  echo "$(date +%T) rec $r rc=$trc ${tt}ms stdout $same; $(grep -m1 'kernel launches:' $d/report$r.txt | sed 's/^ *//')" >> $P
  for again in 1 8; do
    TRACE_LAUNCH_AGAIN=$again timeout 100 python3 -c "
import sys, time
from decoders.session import decode_capture
runs = ((10, False), (None, True)) if sys.argv[2] == '8' else ((10, False),)
for brief, full in runs:
    t = time.monotonic(); m = decode_capture(sys.argv[1], brief=brief, full_blocks=full)
    print('rec', sys.argv[3], 'again', sys.argv[2], 'brief', brief, round(time.monotonic() - t, 2), 's', m.split)
" $d/c$r.tlc $again $r >> $P 2>&1
  done
  if [ -z "$pick" ] && tail -2 $P | grep -q "again 8 brief None.*[2-9] decoded again"; then pick=$r; fi
done
if [ -n "$pick" ]; then
  echo "same_sharded on rec $pick" >> $P
  TRACE_LAUNCH_AGAIN=8 timeout 200 python3 bench/same_sharded.py $d/c$pick.tlc >> $P 2>&1; echo "same_sharded rc=$?" >> $P
fi
echo "$(date +%T) done" >> $P
