"""CuPy with cuFFT (issue 25): rfft and irfft of a known signal (cuFFT's kernels get their
function handles through the driver's export tables, which no bracketed lookup names), and
a stream-captured CUDA graph of a few elementwise kernels replayed 3 times.

Truth (first argument, JSON): every kernel the GPU ran, from CUPTI (scripts/corpus/_truth.py
CuptiKernels: name, grid, block, registers, shared memory), with the part each came from;
the FFT sizes; the graph's kernel nodes read back through the driver's graph API where
CuPy hands out the CUgraph."""
import cupy as cp

import _truth

N, BATCH = 4096, 8
REPLAYS = 3


def fft_part():
    x = cp.sin(cp.arange(N * BATCH, dtype=cp.float32).reshape(BATCH, N) * (2 * cp.pi * 5 / N))
    cp.cuda.Device().synchronize()
    with _truth.CuptiKernels() as k:
        f = cp.fft.rfft(x, axis=1)              # real to complex: N // 2 + 1 bins per row
        y = cp.fft.irfft(f, n=N, axis=1)
        cp.cuda.Device().synchronize()
    peak = int(cp.argmax(cp.abs(f[0])))
    err = float(cp.abs(y - x).max())
    return k, {"n": N, "batch": BATCH, "bins": N // 2 + 1, "peak_bin": peak,
               "roundtrip_ok": err < 1e-3}


def graph_part():
    s = cp.cuda.Stream(non_blocking=True)
    a = cp.arange(1 << 16, dtype=cp.float32)
    b = cp.ones(1 << 16, dtype=cp.float32)
    t, u, out = cp.empty_like(a), cp.empty_like(a), cp.empty_like(a)
    with s:
        # the kernels compiled and loaded, and nothing allocated, before the capture
        cp.multiply(a, 2.0, out=t), cp.add(t, b, out=u), cp.multiply(u, u, out=out)
        s.synchronize()
        s.begin_capture()
        cp.multiply(a, 2.0, out=t)      # three elementwise kernels in the graph
        cp.add(t, b, out=u)
        cp.multiply(u, u, out=out)
        g = s.end_capture()
    nodes, why = None, None
    handle = getattr(g, "graph", None)
    if handle:
        try:
            nodes = _truth.graph_nodes(int(handle))
        except Exception as exc:        # the driver graph API through cuda-python
            why = repr(exc)
    else:
        why = "this CuPy's Graph has no `graph` attribute"
    with _truth.CuptiKernels() as k:
        for _ in range(REPLAYS):
            g.launch(s)
        s.synchronize()
    return k, out, {"replays": REPLAYS, "graph_nodes": nodes, "graph_nodes_error": why}


fft_k, fft = fft_part()
graph_k, out, graph = graph_part()
_truth.write({"fft": dict(fft, cupti=fft_k.to_json()),
              "graph": dict(graph, cupti=graph_k.to_json())})
print(f"cupy fft peak={fft['peak_bin']} roundtrip_ok={fft['roundtrip_ok']} "
      f"graph out[3]={float(out[3]):.1f}")
