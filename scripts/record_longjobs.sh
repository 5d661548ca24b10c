#!/bin/bash
# Through the device tool, on the H100: long real jobs of other shapes than the eager
# transformer (issue 24: "checked on held-out captures of other long real jobs"), each at a
# short and a long length natively and under trace-launch (scripts/record_scaling.py), and
# CUPTI's kernels of the short length as outside truth:
#   graphed   scripts/corpus/train_graphed.py   whole training step as one CUDA graph, replayed
#   compiled  scripts/corpus/train_compiled.py  torch.compile(mode="reduce-overhead")
#   jaxtrain  scripts/corpus/train_jax.py       a jitted JAX training step
#   compiledd train_compiled.py with TL_COMPILE_MODE=default (inductor, no CUDA graphs)
#   cnn       scripts/corpus/train_cnn.py       a CNN through cuDNN
#   cupyloop  scripts/corpus/cupy_loop.py       CuPy: cuFFT, RawKernel, ElementwiseKernel, cuBLAS
#   jaxloops  scripts/corpus/jax_loops_long.py  jax_loops.py's scan and while loops, N calls
#   jaxcmdbuf scripts/corpus/jax_cmdbuf_long.py the same as conditional command buffers
#   ddp       scripts/corpus/train_ddp.py       DDP under torchrun, 2 ranks (needs 2 GPUs; no CUPTI)
#   jaxdp     scripts/corpus/train_jax_dp.py    JAX data-parallel, 2 GPUs in one process (needs 2 GPUs)
#   loader    scripts/corpus/train_loader.py    DataLoader workers (fork), pinned memory, expandable
#                                               segments (VMM), cudnn.benchmark, fp16 GradScaler
#   threads   scripts/corpus/infer_threads.py   3 inference threads, own streams, event waits
#   hfgpt2    scripts/corpus/train_hf_gpt2.py   Hugging Face GPT-2 trained, then generate() with a KV cache
#   dynshapes scripts/corpus/train_dynshapes.py torch.compile reduce-overhead over 3 batch sizes: 3 graphs interleaved
#   fsdp      scripts/corpus/train_fsdp.py      FSDP (fully_shard) under torchrun, 2 ranks (needs 2 GPUs; no CUPTI)
#   tma       scripts/corpus/triton_tma.py      Triton matmul on host TMA descriptors (CUtensorMap arguments)
#   cupygraph scripts/corpus/cupy_graph.py      CuPy stream capture, graph replays, host functions
#   cudnn     scripts/corpus/train_cudnn_sdpa.py attention through cuDNN's fused SDPA, trained
#   mix       scripts/corpus/heldout_mix.py     a PTX module JIT-compiled by the driver, a cooperative
#                                               kernel, managed memory, PyTorch syncs mid-step
#   mix2      scripts/corpus/heldout_mix2.py    kernel parameters past 4 KB (to 32,000 B), launch
#                                               attributes, PyTorch on cudaMallocAsync with a graph
#   mix3      scripts/corpus/heldout_mix3.py    cuRAND, cuSPARSE, CUB, 80 KB dynamic shared memory,
#                                               torch sort/unique/conv3d/bf16, a two-stream graph
# LONGJOBS="graphed:30:300 ..." picks jobs and lengths (short:short records one length);
# TRACE_LAUNCH_IMAGE_MAX cuts module images as scripts/record.py does (a capture to commit);
# REPORT=1 also times trace-launch with its default report (record_scaling.py --report);
# CUPTI=0 skips the CUPTI run; NOCAPTURES=1 brings back only the timings. Captures come back as
# $OUT/longjobs.tar.part-* (cat | tar x); progress in $OUT/progress.txt.
set -u
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
timeout 120 python3 setup.py -q build_ext --inplace > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
step() { echo "$(date +%T) $*" >> $OUT/progress.txt; }
step built
W=/tmp/longjobs; mkdir -p $W
declare -A PROG=([transformer]=train_transformer.py [graphed]=train_graphed.py [compiled]=train_compiled.py [jaxtrain]=train_jax.py [ddp]=train_ddp.py \
              [compiledd]=train_compiled.py [cnn]=train_cnn.py [cupyloop]=cupy_loop.py \
              [jaxloops]=jax_loops_long.py [jaxcmdbuf]=jax_cmdbuf_long.py [jaxdp]=train_jax_dp.py \
              [loader]=train_loader.py [threads]=infer_threads.py [hfgpt2]=train_hf_gpt2.py \
              [dynshapes]=train_dynshapes.py [fsdp]=train_fsdp.py \
              [tma]=triton_tma.py [cupygraph]=cupy_graph.py [cudnn]=train_cudnn_sdpa.py \
              [mix]=heldout_mix.py [mix2]=heldout_mix2.py [mix3]=heldout_mix3.py)
for spec in ${LONGJOBS:-graphed:30:300 jaxtrain:30:300 compiled:30:300}; do
  IFS=: read -r name short long <<< "$spec"
  [ "$long" = "$short" ] && long=
  prog=scripts/corpus/${PROG[$name]}
  if [ $name = compiledd ]; then export TL_COMPILE_MODE=default; else unset TL_COMPILE_MODE; fi
  [ $name = ddp ] || [ $name = fsdp ] || [ $name = jaxloops ] || [ $name = jaxcmdbuf ] || [ "${CUPTI:-1}" = 0 ] || TL_CUPTI_TRUTH=$W/cupti-$name-$short.json timeout ${T_CUPTI:-150} python3 $prog $short > $W/cupti-$name.log 2>&1
  step "$name cupti rc=$?"
  timeout ${T_JOB:-300} python3 scripts/record_scaling.py --out $W --program $prog --name $name \
      --steps $short $long --timeout 140 --truth $W/cupti-$name-$short.json ${REPORT:+--report} \
      > $W/record-$name.log 2>&1
  step "$name record rc=$? $(tail -2 $W/record-$name.log | tr '\n' ' ')"
  mv $W/scaling-record.json $W/scaling-record-$name.json 2>/dev/null
done
ls -la $W $W/*/ >> $OUT/progress.txt
if [ -n "${NOCAPTURES:-}" ]; then cp $W/scaling-record-*.json $W/record-*.log $OUT/ 2>/dev/null
else tar cf - -C /tmp longjobs | split -b 15M - "$OUT/longjobs.tar.part-"; fi
step packed
