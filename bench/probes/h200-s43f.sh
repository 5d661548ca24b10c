#!/bin/bash
# Session 43 device call 7 (nvidia-h200), the shim with the virtual memory calls and the 2D
# copy structs bracketed: held-out jobs live against offline (bench/probes/heldout_live.sh),
# stdout, exit status and verified counts; the transformer also on expandable segments
# (its pointers named by cuMemMap). Stops starting jobs past 380 s. Carry .whl. (Run with
# captures/ddp-2rank moved aside: the tree is past 64 MiB.)
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
start=$SECONDS
for spec in "transformer:100:expandable_segments:True" jaxtrain:300 hfgpt2:20 loader:30 dynshapes:50 cnn:50; do
  [ $((SECONDS - start)) -gt 380 ] && { echo "$(date +%T) stop before $spec" >> $P; break; }
  IFS=: read -r name steps conf <<< "$spec"
  env ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} JOBS=$name:$steps T_JOB=90 T_DEC=90 \
    bash bench/probes/heldout_live.sh
  [ -n "$conf" ] && grep -c "in cuMemMap" /tmp/hl/$name/offline.txt | sed "s/^/  $name pointer lines naming a cuMemMap: /" >> $P
done
echo "$(date +%T) all done" >> $P
