#!/bin/bash
# Session 33 device call 3 (nvidia-h200): `trace-launch --json` on the 500-step transformer
# job (its report is the full decode, in two processes while the program runs, then the
# JSON rendered by worker processes; not decoded in blocks), against native and against
# the default report, 2 reps interleaved: total wall of each run, the JSON's size and that
# it parses (strictly: no NaN or Infinity). Results in $OUT/logs.tgz and progress.txt.
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
N=${STEPS:-500}
timeout 60 python3 scripts/corpus/train_transformer.py 200 > /dev/null 2>&1
rc=$?; echo "$(date +%T) warm-up rc=$rc" >> $P
# t CMD...: runs it, says on fd 3 its status and wall seconds (its own output redirected)
t() { local s=$EPOCHREALTIME; "$@"; local rc=$?
      awk "BEGIN{printf \"rc=$rc %.2f s\", $EPOCHREALTIME - $s}" >&3; }
for rep in 1 2; do
  echo "native rep $rep $( { t timeout 100 python3 scripts/corpus/train_transformer.py $N \
      > $L/native.out 2> /dev/null; } 3>&1 )" >> $P
  echo "default rep $rep $( { t timeout 150 python3 -m tracer.cli_main trace-launch -o /tmp/d.tlc -- \
      python3 scripts/corpus/train_transformer.py $N > $L/default.out 2> $L/default.err; } 3>&1 )" >> $P
  echo "json rep $rep $( { t timeout 200 python3 -m tracer.cli_main trace-launch --json -o /tmp/j.tlc -- \
      python3 scripts/corpus/train_transformer.py $N > $L/json.out 2> /tmp/json.err; } 3>&1 )" >> $P
  echo "  json $(stat -c %s /tmp/json.err) B; stdout same as native: $(cmp -s $L/native.out $L/json.out && echo yes || echo no)" >> $P
done
timeout 120 python3 - >> $P 2>&1 <<'PY'
import json
text = open("/tmp/json.err").read()
start = text.index("{\n")          # (trace-launch's lines before the report)
def refuse(c):
    raise ValueError(c)
doc = json.JSONDecoder(parse_constant=refuse).raw_decode(text, start)[0]
print("json parses:", len(doc["launches"]), "launches,", doc["stats"].get("submissions_lost"), "lost")
PY
tail -c 300 /tmp/json.err > $L/json-tail.txt
echo "$(date +%T) done" >> $P
