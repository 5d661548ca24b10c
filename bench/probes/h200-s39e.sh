#!/bin/bash
# Session 39 device call 5 (nvidia-h200-x2): two-GPU training jobs at a long length (issue 24:
# "thousands of steps, often on several GPUs"): DDP under torchrun (2 ranks) and JAX data
# parallel (2 GPUs, one process) at 1,000 steps, natively and under trace-launch with its
# default report (stdout, status), then the capture decoded afterwards: the text report and
# --json, wall, CPU and the largest process's peak RSS (bench/probes/wall_cpu_rss.py), and
# the verified count. Carry .whl.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
for spec in ddp:train_ddp.py:1000 jaxdp:train_jax_dp.py:1000; do
  IFS=: read -r name prog steps <<< "$spec"; d=/tmp/$name; mkdir -p $d
  t=$(date +%s%N); timeout 150 python3 scripts/corpus/$prog $steps > $d/native.out 2>&1; nrc=$?
  tn=$(( ($(date +%s%N) - t) / 1000000 ))
  t=$(date +%s%N); timeout 200 $TL trace-launch -o $d/c.tlc python3 scripts/corpus/$prog $steps > $d/traced.out 2> $d/report.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  grep -v '^\[rank\|^W[0-9]' $d/native.out > $d/n; grep -v '^\[rank\|^W[0-9]' $d/traced.out > $d/t
  same=$(cmp -s $d/n $d/t && echo same || echo DIFFERENT)
  echo "$(date +%T) $name $steps native rc=$nrc ${tn}ms traced+report rc=$trc ${tt}ms stdout $same capture $(stat -c %s $d/c.tlc) B; report: $(grep -m1 'kernel launches:' $d/report.txt | sed 's/^ *//')" >> $P
  txt=$(timeout 150 python3 bench/probes/wall_cpu_rss.py /tmp/txt.out $TL trace-decode $d/c.tlc)
  js=$(timeout 200 python3 bench/probes/wall_cpu_rss.py /tmp/js.out $TL trace-decode $d/c.tlc --json)
  n=$(python3 -c "import json; d=json.load(open('/tmp/js.out')); print(sum(1 for l in d['launches'] if l['kernel']), d['stats'].get('submissions_lost', d['stats'].get('lost')), round(__import__('os').path.getsize('/tmp/js.out')/1e6), 'MB')" 2>&1 | tail -1)
  echo "$(date +%T) $name decode text: $txt; --json: $js; kernel launches, lost, size: $n; split $(grep -m1 -i 'decoded in\|blocks' /tmp/txt.out | head -c 120)" >> $P
  tail -c 20000 $d/report.txt > $OUT/report-$name.txt
done
echo "$(date +%T) done" >> $P
