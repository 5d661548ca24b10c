#!/bin/bash
# Through the device tool, on the H100: the transformer at 20, 100 and 500 steps natively and
# under trace-launch (scripts/record_scaling.py), CUPTI truth of 20 steps, and a probe of
# what libcuda exports. Captures come back as $OUT/scaling.tar.part-* (cat | tar x).
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
timeout 120 python3 setup.py -q build_ext --inplace > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built" > $OUT/progress.txt
mkdir -p $OUT/logs
lc=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
{ echo "libcuda: $lc"; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv;
  nm -D --defined-only "$lc" | awk '{print $3}' | grep -E '^cu(Func|Kernel|Library|Graph|Profiler|Module)' | sort;
  tl=$(python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')/lib
  ls $tl | grep -i -E 'nvtx|nvToolsExt'; for f in $tl/libtorch_cuda.so; do strings $f | grep -E 'NVTX_INJECTION|nvtxRangePush|InitializeInjection' | head; done
  python3 -c 'import torch;print(torch.__version__)'; } > $OUT/probe.txt 2>&1
echo "probed" >> $OUT/progress.txt
TL_CUPTI_TRUTH=$OUT/cupti-transformer-20.json timeout 120 python3 scripts/corpus/train_transformer.py 20 > $OUT/cupti-run.log 2>&1
echo "cupti done" >> $OUT/progress.txt
timeout 200 python3 scripts/record_scaling.py --out /tmp/scal --steps 20 --report --timeout 150 2>&1 | tee $OUT/scal20.log
echo "scal20 done" >> $OUT/progress.txt
timeout 250 python3 scripts/record_scaling.py --out /tmp/scal2 --steps 100 500 --timeout 120 2>&1 | tee $OUT/scal.log
echo "scal done" >> $OUT/progress.txt
cp /tmp/scal/scaling-record.json $OUT/scaling-record-20.json; cp /tmp/scal2/scaling-record.json $OUT/scaling-record-100-500.json
cp -r /tmp/scal2/transformer-* /tmp/scal/
ls -la /tmp/scal/*/
tar cf - -C /tmp/scal transformer-20 transformer-100 transformer-500 | split -b 15M - "$OUT/scaling.tar.part-"
ls -la $OUT
