"""The text report's decode of one capture (decode_capture(brief=200)), in one line: its wall
seconds, its launches and how it went (model.split: in blocks, split, or why not). The
probes' look at a decode's path.

    python3 bench/probes/brief_decode.py CAPTURE
"""
import sys
import time

from decoders.session import decode_capture

t = time.monotonic()
m = decode_capture(sys.argv[1], brief=200)
print(f"{time.monotonic() - t:.2f} s, {len(m.launches)} launches, split: {m.split}")
