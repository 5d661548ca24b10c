"""Launches decoded per second on a long synthetic stream (one core).

The stream repeats the measured H100 launch order (h100-measured.md section 1; the
synthetic-h100 builder of tests/test_launch_decode.py). Each cuLaunchKernel there
schedules two QMDs, so launches = 2 x kernels. Replace with a real capture once the
capture owner adds one. Prints: launches/s (stream + launch decode, summaries with
all QMD fields; node trees are built lazily and not counted) and packets/s.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from decoders.launch import LaunchDecoder  # noqa: E402
from decoders.pushbuf import StreamDecoder  # noqa: E402
from test_launch_decode import synthetic_h100_launch  # noqa: E402


def main(kernels=5000, repeat=3):
    segments = [synthetic_h100_launch(seq=k) for k in range(64)]
    stream = [segments[k % 64] for k in range(kernels)]
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        dec = StreamDecoder(gpu="hopper")
        ld = LaunchDecoder(gpu="hopper")
        npkts = 0
        for seg in stream:
            pkts = dec.feed(seg, 0x7F00000000)
            npkts += len(pkts)
            ld.feed_methods(pkts)
        dec.finish()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    nl = len(ld.launches)
    assert nl == 2 * kernels and not dec.problems and not ld.problems
    print(f"synthetic-h100: {kernels} kernels, {nl} launches, {npkts} packets, "
          f"{sum(map(len, stream))} bytes in {best:.3f} s")
    print(f"launches/s: {nl / best:,.0f}")
    print(f"packets/s: {npkts / best:,.0f}")
    return nl / best


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
