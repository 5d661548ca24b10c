#!/bin/bash
# Session 36 device call 4 (nvidia-h200): CUDA dynamic parallelism (kernels/corpus_cdp.cu:
# a host-launched parent whose blocks each launch a child grid from the GPU) built with
# nvcc -rdc=true, run natively and under trace-launch; what the capture and the report
# show of it, and the cubin's symbols and relocations (cuobjdump) to find what marks a
# kernel that launches from the device. Carry .whl. Results in $OUT.
. bench/probes/device-setup.sh
cd /tmp && timeout 120 nvcc -arch=sm_90 -rdc=true -I$OLDPWD/kernels -o /tmp/cdp $OLDPWD/kernels/corpus_cdp.cu -lcudadevrt -lcuda > $OUT/nvcc.log 2>&1
rc=$?; echo "$(date +%T) nvcc rc=$rc" >> $P; cd - > /dev/null
timeout 30 /tmp/cdp $OUT/native.truth.json >> $P 2>&1; echo "native rc=$?" >> $P
timeout 60 python3 -m tracer.cli_main trace-launch -o $OUT/capture.tlc /tmp/cdp /tmp/truth.json > $OUT/stdout.txt 2> $OUT/report.txt
rc=$?; echo "$(date +%T) traced rc=$rc $(cat $OUT/stdout.txt)" >> $P
grep -n "kernel launches:\|problems\|child\|parent" $OUT/report.txt | head -20 >> $P
timeout 60 cuobjdump -elf /tmp/cdp > $OUT/elf.txt 2>&1
timeout 60 cuobjdump -sass /tmp/cdp > $OUT/sass.txt 2>&1
grep -n "cudaLaunchDevice\|cudaGetParameterBuffer\|CUDA_CDP\|EIATTR" $OUT/elf.txt | sort | uniq -c | sort -rn | head -40 >> $P
echo "$(date +%T) done" >> $P
