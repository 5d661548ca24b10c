#!/bin/bash
# One device-tool call that records several jobs and brings their results back as few files
# (the tool returns at most 8): scripts/record_session.sh STEP... with steps
#   gputests   the GPU-marked tests (pytest -m gpu), log in $OUT/session/gputests.log
#   windows    scripts/record_windows.sh (issue 24's capture windows)
#   real:A,B   scripts/record.py real --only A,B (the real-workload corpus), one GPU (REAL_GPUS=0,1: two)
#   ddp        scripts/record_ddp.sh (2 ranks; needs 2 GPUs)
#   bench      bench/launch_overhead.py: traced against native per launch, one GPU
#   ddpbench   bench/ddp_overhead.py: launch overhead per rank against one GPU (needs 2 GPUs)
#   scaling    scripts/record_scaling.py: the transformer at 20, 100, 500 steps natively, with
#              --no-report and with the default report, 2 reps (issue 24's whole-job ratio)
# Each step has its own timeout and writes its progress to $OUT/session/progress.txt; at the
# end everything under $OUT is packed into $OUT/session.tar.part-* (cat | tar x).
set -u
OUT=${OUT:-/tmp/trace-launch-out}
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
S=$OUT/session; mkdir -p "$S"
timeout 120 python3 setup.py -q build_ext --inplace >"$S/build.log" 2>&1 || { cat "$S/build.log"; exit 1; }
step() { echo "$(date +%T) $*" >>"$S/progress.txt"; }
for job in "$@"; do
  step "start $job"
  case $job in
    gputests) CUDA_VISIBLE_DEVICES=0 timeout ${T_TESTS:-240} python3 -m pytest -q -m gpu -p no:cacheprovider tests >"$S/gputests.log" 2>&1; step "gputests rc=$? $(tail -1 "$S/gputests.log")";;
    windows) CUDA_VISIBLE_DEVICES=0 OUT=$S timeout ${T_WINDOWS:-180} bash scripts/record_windows.sh >"$S/windows.log" 2>&1; step "windows rc=$?";;
    real:*) CUDA_VISIBLE_DEVICES=${REAL_GPUS:-0} timeout ${T_REAL:-220} python3 scripts/record.py --out "$S/real" real --only "${job#real:}" >"$S/real.log" 2>&1; step "real rc=$?"
            find "$S/real" -name capture.tlc -exec gzip -9 {} + ;;
    ddp) OUT=$S timeout ${T_DDP:-140} bash scripts/record_ddp.sh >"$S/ddp.log" 2>&1; step "ddp rc=$?";;
    bench) CUDA_VISIBLE_DEVICES=0 timeout ${T_BENCH:-200} python3 bench/launch_overhead.py --launches 2000 --reps 5 --json "$S/launch-overhead.json" >"$S/bench.log" 2>&1; step "bench rc=$?";;
    ddpbench) timeout ${T_DDPBENCH:-200} python3 bench/ddp_overhead.py --json "$S/ddp-overhead.json" >"$S/ddpbench.log" 2>&1; step "ddpbench rc=$?";;
    scaling) CUDA_VISIBLE_DEVICES=0 timeout ${T_SCALING:-300} python3 scripts/record_scaling.py --out /tmp/scal --steps 20 100 500 --reps 2 --report --timeout 120 >"$S/scaling.log" 2>&1
             step "scaling rc=$?"; cp /tmp/scal/scaling-record.json "$S/" 2>/dev/null;;
    *) step "unknown step $job";;
  esac
done
step "packing"
cd "$OUT" && tar cf - session | split -b 15M - "$OUT/session.tar.part-" && rm -rf "$OUT/session"
ls -la "$OUT"
