#!/bin/bash
# Session 31 device call 4 (nvidia-h200): call 3 at four times the length, the sharded
# decode's speed at a second length: a fresh 2000-step transformer capture, trace-decode
# twice, then 8, 12 and 16 blocks side by side (bench/shard_decode.py --light).
STEPS=2000 SHARDS="8 12 16" exec bash "$(dirname "$0")/h200-s31a.sh"
