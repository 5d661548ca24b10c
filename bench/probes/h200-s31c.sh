#!/bin/bash
# Session 31 device call 3 (nvidia-h200): the speed of a decode sharded by time, as the
# committed probe times it (bench/shard_decode.py --light: the blocks' decodes without the
# detectors' wrappers or the facts' digests, which slow the blocks of call 2): call 1's
# steps on a fresh capture, with 4, 8, 12 and 16 blocks side by side.
SHARDS="4 8 12 16" exec bash "$(dirname "$0")/h200-s31a.sh"
