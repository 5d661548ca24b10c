#!/bin/bash
# Session 40 device call 5 (nvidia-h200-x2): the offline decode of the two-GPU jobs at 1,000
# steps after an offline block's warm-up grew with the block (shard.offline_warmup: an
# eighth of it, 256 to 1,024): each recorded with --no-report, then its text report's brief
# decode and the JSON's full decode in blocks (model.split, wall s). Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
for spec in ddp:train_ddp.py:1000 jaxdp:train_jax_dp.py:1000; do
  IFS=: read -r name prog steps <<< "$spec"; d=/tmp/$name; mkdir -p $d
  timeout 150 $TL trace-launch --no-report -o $d/c.tlc python3 scripts/corpus/$prog $steps > $d/traced.out 2> $d/err.txt
  echo "$(date +%T) $name recorded rc=$? $(stat -c %s $d/c.tlc) B" >> $P
  timeout 150 python3 -c "
import sys, time
from decoders.session import decode_capture, shard
print('submissions', shard.cuts(sys.argv[1]), 'shards', shard.shards())
for brief, full in ((10, False), (None, True)):
    t = time.monotonic(); m = decode_capture(sys.argv[1], brief=brief, full_blocks=full)
    print('brief', brief, round(time.monotonic() - t, 2), 's', m.split, sum(1 for l in m.launches if l.kernel) if full else '')
" $d/c.tlc >> $P 2>&1
done
echo "$(date +%T) done" >> $P
