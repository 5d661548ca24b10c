#!/bin/bash
# Session 42, as committed: the one-GPU JAX job at 1,000 steps and the transformer at 500
# (issue 24's whole-job target) natively and under trace-launch with its default report,
# then their offline decodes (bench/probes/jobs_native_traced_offline.sh), and
# bench/same_sharded.py on the JAX capture. nvidia-h200; carry .whl.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
JOBS="jax1:train_jax.py:1000 tf500:train_transformer.py:500 jax1b:train_jax.py:1000" \
  bash bench/probes/jobs_native_traced_offline.sh
. bench/probes/device-setup.sh
timeout 150 python3 bench/same_sharded.py /tmp/jax1/c.tlc >> $P 2>&1; echo "same_sharded rc=$?" >> $P
echo "$(date +%T) done" >> $P
