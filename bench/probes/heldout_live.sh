#!/bin/bash
# Held-out real jobs (not in captures/) under trace-launch as a user runs it, with the report
# made while the program runs (the live decode in blocks), checked against the same capture
# decoded afterwards in one process (TRACE_LAUNCH_SHARDS=0 TRACE_LAUNCH_SPLIT=0): the text
# report and the --json report must be the same; the program's stdout and exit status must
# be what it prints natively; and the report's count of kernel launches verified. JOBS="name:steps ..." (programs of
# scripts/record_longjobs.sh). Carry .whl. Progress and results in $OUT.
. bench/probes/device-setup.sh
. bench/probes/jobs-env.sh
export TORCHINDUCTOR_COMPILE_THREADS=1
declare -A PROG=([transformer]=train_transformer.py [graphed]=train_graphed.py [compiled]=train_compiled.py
  [jaxtrain]=train_jax.py [ddp]=train_ddp.py [cnn]=train_cnn.py [cupyloop]=cupy_loop.py
  [jaxloops]=jax_loops_long.py [jaxcmdbuf]=jax_cmdbuf_long.py [jaxdp]=train_jax_dp.py
  [loader]=train_loader.py [threads]=infer_threads.py [hfgpt2]=train_hf_gpt2.py
  [dynshapes]=train_dynshapes.py [fsdp]=train_fsdp.py [tma]=triton_tma.py [cupygraph]=cupy_graph.py
  [cudnn]=train_cudnn_sdpa.py [mix]=heldout_mix.py [mix2]=heldout_mix2.py [mix3]=heldout_mix3.py)
W=/tmp/hl; mkdir -p $W
trap 'cp $W/*.diff $OUT/ 2>/dev/null' EXIT
for spec in $JOBS; do
  IFS=: read -r name steps <<< "$spec"
  prog=scripts/corpus/${PROG[$name]}; d=$W/$name; mkdir -p $d
  t=$(date +%s%N); timeout ${T_JOB:-120} python3 $prog $steps > $d/native.out 2> $d/native.err; nrc=$?
  tn=$(( ($(date +%s%N) - t) / 1000000 ))
  t=$(date +%s%N); timeout ${T_JOB:-120} $TL trace-launch -o $d/capture.tlc python3 $prog $steps > $d/traced.out 2> $d/report.txt; trc=$?
  tt=$(( ($(date +%s%N) - t) / 1000000 ))
  same=$(cmp -s $d/native.out $d/traced.out && echo same || echo DIFFERENT)
  TRACE_LAUNCH_SHARDS=0 TRACE_LAUNCH_SPLIT=0 timeout ${T_DEC:-150} $TL trace-decode $d/capture.tlc > $d/offline.txt 2> $d/offline.err; orc=$?
  python3 - "$d" > $W/$name.diff <<'PY'
import sys, difflib
d = sys.argv[1]
rep = open(d + "/report.txt", errors="replace").read().splitlines()
off = open(d + "/offline.txt", errors="replace").read().splitlines()
# the report's own lines after the program: from the offline report's first line on
start = next((i for i, l in enumerate(rep) if l == "trace-launch report"), None)
if start is None:
    print("NO START", off[:2]); print("\n".join(rep[-30:])); sys.exit()
diff = list(difflib.unified_diff(off, rep[start:start + len(off) + 50], "offline", "live", lineterm="", n=1))
print(f"offline {len(off)} lines, live {len(rep) - start}; diff lines {len(diff)}")
print("\n".join(diff[:80]))
PY
  nd=$(head -1 $W/$name.diff)
  v=$(grep -m1 'kernel launches:' $d/offline.txt | sed 's/^ *//')
  echo "$(date +%T) $name $steps native rc=$nrc ${tn}ms traced+report rc=$trc ${tt}ms stdout $same offline rc=$orc | $nd | $v" >> $P
done
echo "$(date +%T) done" >> $P
