"""tracer/prefault.py on a synthetic capture: it grows the file and faults pages in ahead of
the cursor, and never changes a byte the shim wrote."""
import os
import struct

from decoders.capture import format as F
from decoders.capture.writer import create_capture
from tracer.prefault import Prefaulter


def test_prefaulter_grows_ahead_of_the_cursor_and_keeps_data(tmp_path):
    cap = tmp_path / "c.tlc"
    create_capture(cap, {"synthetic": True})
    head = cap.read_bytes()
    payload = os.urandom(3 << 20)                 # what a shim would have written
    with open(cap, "r+b") as f:
        f.seek(len(head))
        f.write(payload)
        f.seek(F.TL_CURSOR_OFFSET)
        f.write(struct.pack("<Q", len(head) + len(payload)))
    p = Prefaulter(cap, ahead=8 << 20, step=1 << 20)
    try:
        end = p.step_once()
    finally:
        p.stop()
    cursor = len(head) + len(payload)
    assert end >= cursor + (8 << 20) and os.path.getsize(cap) >= end
    data = cap.read_bytes()
    assert data[len(head):cursor] == payload      # nothing the shim wrote was touched
    assert set(data[cursor:end]) <= {0}           # grown space reads as zeros
