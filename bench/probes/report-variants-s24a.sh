#!/bin/bash
# Session 24 device call 1 (run then as .s24/exp1.sh, its setup inline): where does the
# 500-step job's default report lose time? The job's own end (its steps= line) and
# trace-launch's exit, under configurations that separate the decode's CPU from the job's.
. bench/probes/device-setup.sh
W=/tmp/w1; mkdir -p $W
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|MHz|Model name|NUMA" >> $P
R=$OUT/runs.jsonl
J="python3 scripts/corpus/train_transformer.py 500"
TL="python3 -m tracer.cli_main trace-launch"
L="timeout 90 python3 bench/probes/timed_run.py"
$L native1 $J >> $R; echo "$(date +%T) native1" >> $P
$L noreport $TL --no-report --no-compress -o $W/raw.tlc $J >> $R; echo "$(date +%T) noreport" >> $P
$L default1 $TL -o $W/d1.tlc $J >> $R; echo "$(date +%T) default1" >> $P
$L native2 $J >> $R; echo "$(date +%T) native2" >> $P
$L pinned_native taskset -c 0-7 $J >> $R; echo "$(date +%T) pinned_native" >> $P
$L pinned_default taskset -c 8-15 $TL -o $W/d2.tlc taskset -c 0-7 $J >> $R; echo "$(date +%T) pinned_default" >> $P
# the native job with an offline split decode of a 500-step capture beside it from 8 s on
( sleep 8; cd $PWD; timeout 60 python3 -c "
import sys,time,resource; t=time.time()
from decoders.session import decode_capture
m=decode_capture('$W/raw.tlc', brief=200)
r=resource.getrusage(resource.RUSAGE_SELF); c=resource.getrusage(resource.RUSAGE_CHILDREN)
print('beside-decode wall %.2f main %.2f front %.2f split=%s' % (time.time()-t, r.ru_utime+r.ru_stime, c.ru_utime+c.ru_stime, getattr(m,'split',None)))" >> $P 2>&1 ) &
$L native_beside_decode $J >> $R; wait; echo "$(date +%T) native_beside_decode" >> $P
# default with the decode reniced after the job started
( sleep 3; for i in 1 2 3 4 5 6 7 8 9 10; do for p in $(pgrep -f "tracer.cli_main trace-launch") $(pgrep -f "decoders.session.front"); do renice -n 19 -p $p >/dev/null 2>&1; done; sleep 1.5; done ) &
$L niced_default $TL -o $W/d3.tlc $J >> $R; wait; echo "$(date +%T) niced_default" >> $P
$L default2 $TL -o $W/d4.tlc $J >> $R; echo "$(date +%T) default2" >> $P
$L native3 $J >> $R; echo "$(date +%T) native3" >> $P
echo done >> $P
