#!/bin/bash
# Session 43 device call 8 (nvidia-h200): NCCL under the shim now that it brackets the
# virtual memory calls (NCCL 2.19+ allocates its buffers with cuMem* by default): the DDP job
# with one rank (NPROC=1: the x2 is not lent) live against offline, stdout the same, and the
# report's counts of cuMem* calls and of pointers it names by a cuMemMap. Carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete; rm -f tracer/libtracelaunch.so
. bench/probes/device-setup.sh
NPROC=1 JOBS=ddp:20 T_JOB=120 T_DEC=120 bash bench/probes/heldout_live.sh
grep -E "^ +[0-9]+ +cuMem(Create|Map|Unmap|Release|Address)" /tmp/hl/ddp/offline.txt | sed 's/^/  ddp(1 rank) /' >> $P
echo "  ddp(1 rank) pointer lines naming a cuMemMap: $(grep -c 'in cuMemMap' /tmp/hl/ddp/offline.txt); NCCL kernels: $(grep -c 'ncclDevKernel\|NCCL:' /tmp/hl/ddp/offline.txt)" >> $P
tail -3 /tmp/hl/ddp/native.err >> $P 2>/dev/null
echo "$(date +%T) all done" >> $P
