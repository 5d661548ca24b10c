"""Record the capture corpus on a real GPU: every file in captures/ comes from here.

    python3 scripts/record.py --out DIR JOB [JOB ...]

Each job writes DIR/<name>/capture.tlc and DIR/<name>/manifest.json (command, GPU, driver,
date, git commit, and the ground truth taken at capture time). Copy a job's folder into
captures/ to commit it. Run through the device tool by scripts/record_h100.sh.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoders.capture.reader import read_capture  # noqa: E402
from tracer.run import builtin_argv, gpu_meta, run_traced  # noqa: E402


def git_commit():
    if os.environ.get("TRACE_LAUNCH_GIT_COMMIT"):
        return os.environ["TRACE_LAUNCH_GIT_COMMIT"]
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or None
    except OSError:
        return None


def summarize(path):
    reader, recs = read_capture(path)
    types = Counter(r.type for r in recs)
    stats = {}
    for r in recs:
        if r.type == "STATS":
            from decoders.capture.format import TL_STATS_NAMES
            for name, v in zip(TL_STATS_NAMES, r.body.counters):
                stats[name] = stats.get(name, 0) + v
    subs = [r for r in recs if r.type == "SUBMISSION"]
    return {"records": len(recs), "by_type": dict(types), "shim_stats": stats,
            "submissions": len(subs), "problems": [str(p) for p in reader.problems][:20],
            "pids": sorted({r.pid for r in recs if r.type == "PROCESS_START"})}


def record(out, name, argv, truth=None, mode="full", notes="", window=None):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    cap = d / "capture.tlc"
    t0 = time.time()
    rc = run_traced(argv, cap, mode=mode, window=window)
    wall = time.time() - t0
    manifest = {"name": name, "command": argv, "mode": mode, "exit_status": rc,
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "git_commit": git_commit(), "wall_s": round(wall, 3), "notes": notes}
    if window is not None:
        manifest["capture_range"] = window
    manifest.update({k: v for k, v in gpu_meta().items() if k != "gpu_error"})
    if truth and Path(truth).exists():
        manifest["ground_truth"] = json.loads(Path(truth).read_text())
    manifest["summary"] = summarize(cap)
    (d / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"== {name}: rc={rc} wall={wall:.2f}s {json.dumps(manifest['summary'])[:1500]}")
    return manifest


def job_builtin(out, args):
    truth = out / "builtin.truth.json"
    record(out, "builtin-vadd", builtin_argv(4096, 256, 0, truth), truth,
           notes="trace-launch with no PROGRAM: vadd via cuda-python driver API, NVRTC")
    truth = out / "builtin123.truth.json"
    record(out, "builtin-vadd-grid123", builtin_argv(123, 256, 0, truth), truth,
           notes="built-in launch with --grid 123, for diffs against grid 4096")


def job_vadd(out, args):
    exe = out / "vadd"
    subprocess.run(["nvcc", "-arch=sm_90", "-o", str(exe), str(ROOT / "kernels/vadd_main.cu")],
                   check=True)
    truth = {"kernel": "vadd", "signature": "vadd(const float*, const float*, float*, int)",
             "grid": [4096, 1, 1], "block": [256, 1, 1], "cluster": None,
             "shared_mem_dynamic": 0, "launches": 1, "args": {"n": 1 << 20},
             "source": "kernels/vadd_main.cu", "build": "nvcc -arch=sm_90"}
    t = out / "vadd.truth.json"
    t.write_text(json.dumps(truth))
    record(out, "runtime-vadd", [str(exe)], t, notes="runtime-API vadd, 1 launch, 3 memcpys")


def job_timing(out, args):
    """Wall time of ./vadd native, under the shim (ioctl only) and full capture: median of 5."""
    exe = out / "vadd"
    rows = {}
    for rep in range(5):
        for mode in ("native", "ioctl", "full"):
            t0 = time.perf_counter()
            if mode == "native":
                subprocess.run([str(exe)], check=True, capture_output=True)
            else:
                cap = out / f"timing-{mode}.tlc"
                run_traced([str(exe)], cap, mode=mode)
                cap.unlink()
            rows.setdefault(mode, []).append(time.perf_counter() - t0)
    res = {m: {"median_s": statistics.median(v), "runs_s": v} for m, v in rows.items()}
    (out / "timing.json").write_text(json.dumps(res, indent=1))
    print("== timing (./vadd wall, median of 5):",
          {m: round(r["median_s"], 4) for m, r in res.items()})


def job_shapes(out, args):
    truth = out / "shapes.truth.json"
    record(out, "launch-shapes", [sys.executable, "-m", "tracer.shapes", "--truth", str(truth)],
           truth, notes="kernels/shapes.cu: 1D/2D/3D grids, 65535-wide grid, 100 KiB dynamic smem, "
                        "clusters via cuLaunchKernelEx, int/double/pointer/struct arguments")


def _loop(out, name, n):
    """`n` launches of an empty kernel: submissions == doorbells == GP_PUT advance."""
    t = out / f"{name}.truth.json"
    t.write_text(json.dumps({"kernel": "empty", "launches": n, "warmup_launches": 100,
                             "grid": [1, 1, 1], "block": [1, 1, 1]}))
    record(out, name, [sys.executable, str(ROOT / "bench/launch_overhead.py"),
                       "--child", "--launches", str(n)], t,
           notes=f"bench/launch_overhead.py child: 100 warm-up + {n:,} cuLaunchKernel of an "
                 "empty kernel, then one synchronize")


def job_loop(out, args):
    _loop(out, "launch-loop-10k", 10000)


def job_torch(out, args):
    """A small PyTorch script: traced output and exit status must equal the native ones.
    PyTorch loads each of its fatbins whole (hundreds of MiB together): module images are
    kept up to 64 KiB each (TRACE_LAUNCH_IMAGE_MAX), so kernels are named from
    cuLibraryGetKernel and launches verified without the cubin's shared-memory size."""
    os.environ["TRACE_LAUNCH_IMAGE_MAX"] = str(64 << 10)
    argv = [sys.executable, str(ROOT / "scripts/corpus/torch_small.py")]
    native = subprocess.run(argv, capture_output=True, text=True)
    t = out / "torch.truth.json"
    d = out / "torch-small"
    d.mkdir(parents=True, exist_ok=True)
    log = d / "stdout.txt"
    wrapped = ["/bin/sh", "-c", f'exec "$@" > {log}', "sh"] + argv
    t.write_text(json.dumps({"native_stdout": native.stdout, "native_exit": native.returncode}))
    m = record(out, "torch-small", wrapped, t, notes="scripts/corpus/torch_small.py under trace-launch, "
               "TRACE_LAUNCH_IMAGE_MAX=65536 (module images cut at 64 KiB)")
    os.environ.pop("TRACE_LAUNCH_IMAGE_MAX", None)
    traced = log.read_text()
    m["ground_truth"]["traced_stdout"] = traced
    m["ground_truth"]["output_unchanged"] = traced == native.stdout and m["exit_status"] == native.returncode
    (d / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))
    print("== torch: native", repr(native.stdout), "traced", repr(traced),
          "unchanged", m["ground_truth"]["output_unchanged"])


CORPUS = {
    "graph-replay": ("corpus_graph", "a CUDA graph of 2 kernels captured from a stream, "
                     "replayed 3 times with cudaGraphLaunch"),
    "two-streams": ("corpus_streams", "produce on stream 1, event, consume on stream 2"),
    "memcpy-memset": ("corpus_memcpy", "memcpy H2D, D2D, D2H, memset, async D2H to pinned memory"),
    "kernel-fault": ("corpus_fault", "a kernel storing to address 0x10: cudaErrorIllegalAddress"),
    "sigkill": ("corpus_kill", "SIGKILL sent to itself after 2,000 launches, mid-run"),
    "cdp": ("corpus_cdp", "CUDA dynamic parallelism: each of parent's 4 blocks launches a "
            "child grid from the GPU", ["-rdc=true"], ["-lcudadevrt"]),
}


def job_corpus(out, args):
    """The runtime-API corpus programs of kernels/corpus_*.cu, built with nvcc -lcuda."""
    for name, (src, notes, *more) in CORPUS.items():
        if args.only and name not in args.only.split(","):
            continue
        flags, libs = more if more else ([], [])    # (compile flags, libraries after -lcuda)
        exe = out / src
        subprocess.run(["nvcc", "-arch=sm_90", *flags, "-o", str(exe),
                        str(ROOT / f"kernels/{src}.cu"), "-lcuda", *libs], check=True)
        native = subprocess.run([str(exe)], capture_output=True, text=True)
        t = out / f"{src}.truth.json"
        build = " ".join(["nvcc -arch=sm_90", *flags, f"-o {src} kernels/{src}.cu -lcuda", *libs])
        m = record(out, name, [str(exe), str(t)], t, notes=notes + f"; source kernels/{src}.cu, "
                   f"built with {build}")
        m.setdefault("ground_truth", {})["native_exit"] = native.returncode
        m["ground_truth"]["native_stdout"] = native.stdout
        m["ground_truth"]["build"] = build
        (out / name / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))


def job_loop100k(out, args):
    """100,000 launches: the decoder's streaming-memory figure (bench/decode_rss.py)."""
    _loop(out, "launch-loop-100k", 100000)


def job_multigpu(out, args):
    """One launch on every GPU of the machine, one process (scripts/corpus/multi_gpu.py)."""
    t = out / "multigpu.truth.json"
    record(out, "multi-gpu", [sys.executable, str(ROOT / "scripts/corpus/multi_gpu.py"), str(t)],
           t, notes="scripts/corpus/multi_gpu.py: vadd on each device, each in its primary context")


def job_probe(out, args):
    """What libcuda exports and how it is linked (for the API brackets)."""
    import ctypes.util
    lib = subprocess.run(["sh", "-c", "ldconfig -p | grep 'libcuda.so.1 ' | head -1"],
                         capture_output=True, text=True).stdout.split("=>")[-1].strip()
    syms = subprocess.run(["sh", "-c", f"nm -D --defined-only {lib} | awk '{{print $3}}'"],
                          capture_output=True, text=True).stdout.split()
    dyn = subprocess.run(["sh", "-c", f"readelf -d {lib} | grep -iE 'flags|symbolic|soname'"],
                         capture_output=True, text=True).stdout
    from decoders.cuda.api import FUNCTIONS
    info = {"libcuda": lib, "exported_cu": len([x for x in syms if x.startswith("cu")]),
            "dynamic": dyn, "slots_missing": [f.name for f in FUNCTIONS if f.name not in syms],
            "ctypes_find": ctypes.util.find_library("cuda")}
    (out / "probe.json").write_text(json.dumps(info, indent=1))
    print("== probe:", json.dumps(info)[:3000])


def job_bench(out, args):
    subprocess.run([sys.executable, str(ROOT / "bench/launch_overhead.py"), "--launches",
                    str(args.launches), "--reps", "5", "--modes", args.modes,
                    "--json", str(out / "bench.json")], check=False)


REAL = {
    # name: (script under scripts/corpus, notes)
    "launch-paths": ("launch_paths.py", "cuda-python: graph kernel nodes replayed, changed with "
                     "cuGraphExecKernelNodeSetParams and cuGraphExecUpdate; extra, cooperative, library"),
    "smem-sweep": ("smem_sweep.py", "cuda-python: dynamic/static shared memory and cluster sweep"),
    "cupy-kernels": ("cupy_kernels.py", "CuPy RawKernel saxpy, elementwise, reduction, ElementwiseKernel"),
    "triton-add": ("triton_add.py", "a plain @triton.jit vector add launched 3 times"),
    "torch-eager": ("torch_eager.py", "PyTorch eager: matmul (cuBLAS), softmax, sum, backward, Adam step"),
    "torch-graph": ("torch_graph.py", "PyTorch torch.cuda.CUDAGraph captured once, replayed 3 times; "
                    "truth: the graph's kernel nodes read back through the driver's graph API"),
    "jax-jit": ("jax_jit.py", "JAX jit of matmul + tanh + sum (XLA)"),
    "torch-compile": ("torch_compile.py", "torch.compile (inductor): Triton kernels generated at run time"),
    "torch-copies": ("torch_copies.py", "PyTorch device-to-device copy_/clone and zero_/fill_ of 8 sizes "
                     "(the driver's own copy and memset kernels); truth: CUPTI memcpy/memset activities"),
    # issue 25: kernels whose handles no bracketed lookup names, graphs built node by node
    "cupy-fft": ("cupy_fft.py", "CuPy rfft + irfft (cuFFT: function handles from export tables) and "
                 "a stream-captured graph of 3 elementwise kernels replayed 3 times; truth: every "
                 "kernel from CUPTI (torch.profiler), the graph's nodes read back through the driver"),
    "jax-loops": ("jax_loops.py", "JAX jit of lax.scan over value_and_grad and of lax.while_loop, "
                  "10 calls each (XLA command buffers: child graphs, conditional nodes); truth: "
                  "every kernel from CUPTI (torch.profiler)"),
    "jax-cmdbuf": ("jax_cmdbuf.py", "jax_loops.py with XLA_FLAGS=--xla_gpu_enable_command_buffer="
                   "+WHILE,+CONDITIONAL --xla_gpu_graph_min_graph_size=1: the loops as CUDA "
                   "graphs with CONDITIONAL (WHILE) nodes; truth: every kernel from CUPTI"),
    "torch-libs": ("torch_libs.py", "PyTorch through cuDNN (conv2d fwd/bwd), cuBLAS (fp32, bf16, "
                   "bmm), cuFFT (rfft/irfft), CUB (sort, cumsum), cuSOLVER (cholesky), cuSPARSE "
                   "(CSR matmul), twice each; truth: every kernel from CUPTI (torch.profiler)"),
    "peer-copy": ("peer_copy.py", "PyTorch on 2 GPUs in one process: each GPU's stream waits "
                  "for an event of the other's and copies from it (peer copies), 3 times; truth: "
                  "every kernel and memcpy from CUPTI (needs 2 GPUs)"),
    "cond-nodes": ("cond_nodes.py", "cuda-python: graphs with IF (true, false), SWITCH (3 bodies) "
                   "and WHILE (4 trips, 0 trips, 3 trips with its body filled by stream "
                   "capture, 2 trips with an IF inside) conditional nodes, 3 replays each; "
                   "truth: each "
                   "body's run count read back from the GPU, every kernel from CUPTI"),
    "cupy-linalg": ("cupy_linalg.py", "CuPy matmul (cuBLAS), solve and svd (cuSOLVER), cuRAND, "
                    "sort and sum (CUB), twice each; truth: every kernel from CUPTI"),
    # Hopper launch paths the frameworks' own recordings do not show
    "pdl": ("pdl.py", "cuda-python: programmatic dependent launch (cuLaunchKernelEx with "
            "PROGRAMMATIC_STREAM_SERIALIZATION; griddepcontrol.launch_dependents/wait), 6 pairs "
            "on a stream, then 3 pairs stream-captured into a graph replayed 3 times; truth: "
            "each launch's configuration and parameter bytes, the graph's nodes, the results, "
            "every kernel from CUPTI"),
    "failed-calls": ("failed_calls.py", "cuda-python: 40 vadd launches, 8 host-to-device "
                     "copies, then cuModuleGetFunction of a missing name (NOT_FOUND) and "
                     "cuMemAlloc of twice the GPU's memory (OUT_OF_MEMORY), twice over; truth: "
                     "each failed call's result and the launch made last before it, every "
                     "kernel from CUPTI"),
    "graph-copies": ("graph_copies.py", "cuda-python: CUDA graphs of device-to-device MEMCPY "
                     "nodes of 6 sizes (4 B to 16 MiB + 48 B, cuGraphAddMemcpyNode) and 2 "
                     "stream-captured copies, 3 replays each (the driver's copy kernels); "
                     "truth: each node's parameters read back, the destinations' bytes"),
    "memset-sizes": ("memset_sizes.py", "cuda-python: cuMemsetD8/D8Async/D16Async/D32Async of "
                     "24 sizes, values and dst alignments, each on its own buffer (which of the "
                     "driver's memset kernels runs, with what parameters); truth: each call's "
                     "arguments and every buffer's bytes read back"),
    "copy-sizes": ("copy_sizes.py", "cuda-python: cuMemcpyDtoDAsync of 26 sizes and dst/src "
                   "alignments, each between its own buffers (which of the driver's copy "
                   "kernels runs, with what parameters); truth: each call's arguments and "
                   "every destination's bytes read back"),
    "copy-sizes-unified": ("copy_sizes.py", "cuda-python: copy_sizes.py's 26 copies as "
                           "cuMemcpyAsync (unified addressing) instead of cuMemcpyDtoDAsync; "
                           "truth: each call's arguments and every destination's bytes read "
                           "back", ["unified"]),
    "managed-copies": ("managed_copies.py", "cuda-python: cuMemcpyDtoHAsync and cuMemcpyDtoH "
                       "out of managed memory (cuMemAllocManaged) of 9 sizes and src offsets "
                       "into pageable and page-locked host buffers (which copies the driver "
                       "runs as its own kernel, with what parameters); truth: each call's "
                       "arguments and every destination's bytes read back"),
    "copies-2d": ("copies_2d.py", "cuda-python: 2D memsets (cuMemsetD2D8Async, "
                  "cuMemsetD2D32Async), 2D copies (cuMemcpy2DAsync device to device, host to "
                  "device, device to host) and copies into managed memory (which the driver "
                  "runs as kernels); truth: each call's arguments and every destination's "
                  "bytes read back"),
    "torch-threads": ("torch_threads.py", "PyTorch from 4 host threads at once, each on its "
                      "own stream (cuBLAS matmul, GELU, sums), 25 steps each; truth: every "
                      "kernel from CUPTI (torch.profiler)"),
    "torch-vmm": ("torch_vmm.py", "PyTorch on expandable segments (PYTORCH_CUDA_ALLOC_CONF="
                  "expandable_segments:True): an MLP trained 5 steps, a 64 MiB tensor, the cache "
                  "emptied (cuMemUnmap), a tensor mapped anew; truth: each tensor's data pointer, "
                  "the allocator's segments, every kernel from CUPTI"),
    "torch-fp8": ("torch_fp8.py", "PyTorch torch._scaled_mm (float8_e4m3fn) and bf16 matmuls "
                  "of 3 shapes, 3 times each (cuBLASLt sm_90 kernels); truth: every kernel "
                  "from CUPTI (torch.profiler)"),
    "tma": ("tma.py", "cuda-python: Hopper TMA descriptors made by cuTensorMapEncodeTiled (a "
            "FLOAT32 matrix; a rank-3 BFLOAT16 tensor with 128-byte swizzle) and moved by "
            "cuTensorMapReplaceAddress, passed by value to kernels/tma.cu (a tile copied by the "
            "tensor memory accelerator and checked; two maps prefetched); a PyTorch bf16 matmul "
            "(cuBLASLt's TMA kernels); truth: each map's inputs and bytes, each launch's maps, "
            "the tensors' data pointers, every kernel from CUPTI"),
    "triton-descriptors": ("triton_descriptors.py", "Triton: a kernel that doubles 64 x 64 "
                           "blocks of a 512 x 256 fp16 tensor through host-made TMA "
                           "descriptors (TensorDescriptor; Triton's launcher encodes each "
                           "CUtensorMap), launched 3 times; truth: the tensors' data pointers, "
                           "shapes, strides and blocks, the output checked, every kernel from "
                           "CUPTI"),
    # issue 24: a long job of another shape, cut short (scripts/record_longjobs.sh runs it long)
    "jax-train": ("train_jax.py", "a jitted JAX training step (MLP, Adam) called 30 times: XLA "
                  "runs it as a command buffer it updates with cuGraphExecKernelNodeSetParams "
                  "and replays; truth: every kernel from CUPTI in the native run (CUPTI in the "
                  "traced run makes the driver replay the graph node by node, as it does not "
                  "unprofiled)", ["30"], {"traced_cupti": False}),
}


def job_real(out, args):
    """The real-workload corpus (issue 16): each program run natively, then under the shim
    with whole module images; stdout and exit status compared."""
    env_keep = dict(os.environ)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    for name, (script, notes, *more) in REAL.items():
        extra = more[0] if more else []         # arguments before the truth path
        # traced_cupti False: the traced run gets no truth path (no CUPTI in it); the truth
        # is the native run's CUPTI (ground_truth.native_cupti)
        traced_cupti = (more[1] if len(more) > 1 else {}).get("traced_cupti", True)
        if args.only and name not in args.only.split(","):
            continue
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        src = ROOT / "scripts/corpus" / script
        native_truth = d / "native.truth.json"
        t0 = time.time()
        native = subprocess.run([sys.executable, str(src), *extra, str(native_truth)], capture_output=True,
                                text=True)
        native_wall = time.time() - t0
        t = d / "truth.json"
        log = d / "stdout.txt"
        argv = ["/bin/sh", "-c", f'exec "$@" > {log}', "sh", sys.executable, str(src), *extra] + \
            ([str(t)] if traced_cupti else [])
        # The frameworks load their libraries' fatbins whole (torch-eager: 56 MB of images,
        # 4.5 MB of them sm_90 code): images past 256 KiB are cut so that each capture stays
        # within the repository's 8 MB. The programs' own kernels (NVRTC, Triton, XLA
        # fusions) are far smaller and kept whole; a launch of a kernel from a cut image is
        # named from its lookup and verified without the cubin's static shared memory.
        cut = name not in ("launch-paths", "smem-sweep", "cond-nodes", "pdl", "failed-calls",
                           "graph-copies", "memset-sizes", "copy-sizes", "copy-sizes-unified",
                           "managed-copies", "copies-2d")
        # the library-heavy programs (cuDNN, cuBLAS, cuFFT, cuSOLVER, cuSPARSE, cuRAND), and
        # torch-vmm (kept small: the repository is near what a device run carries): cut at
        # 64 KiB, as torch-small, or their images alone pass 4-7 MB
        cut_at = (64 << 10) if name in ("torch-libs", "cupy-linalg", "torch-fp8", "torch-vmm",
                                        "tma") \
            else (256 << 10)
        if cut:
            os.environ["TRACE_LAUNCH_IMAGE_MAX"] = str(cut_at)
        m = record(out, name, argv, t, notes=notes + f"; source scripts/corpus/{script}" +
                   (f"; TRACE_LAUNCH_IMAGE_MAX={cut_at} (module images cut at "
                    f"{cut_at >> 10} KiB)" if cut else ""))
        os.environ.pop("TRACE_LAUNCH_IMAGE_MAX", None)
        traced = log.read_text() if log.exists() else ""
        gt = m.setdefault("ground_truth", {})
        if native_truth.exists():   # CUPTI of the native run (bench/cupti_coverage.py NATIVE)
            try:
                gt["native_cupti"] = json.loads(native_truth.read_text())
            except ValueError:
                pass
        gt.update({"native_stdout": native.stdout, "native_exit": native.returncode,
                   "native_stderr_tail": native.stderr[-2000:], "native_wall_s": round(native_wall, 3),
                   "traced_stdout": traced,
                   "output_unchanged": traced == native.stdout and m["exit_status"] == native.returncode})
        (d / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))
        print(f"== {name}: native {native.returncode} {native.stdout!r} traced {traced!r} "
              f"unchanged={gt['output_unchanged']}", native.stderr[-800:] if native.returncode else "")
    os.environ.clear()
    os.environ.update(env_keep)


def _launch_calls(path, first, last):
    """(kernel launch calls before step `first`'s POINT mark, launch calls in steps
    first..last-1) of a capture of scripts/corpus/torch_window.py: the --launch-range that
    covers the same steps (shim/window.c counts LAUNCH-role calls of the process)."""
    from decoders.cuda.api import BY_SLOT, window_role
    reader, recs = read_capture(path)
    n, at = 0, {}
    for r in recs:
        if r.type == "API_ENTER" and r.body.slot in BY_SLOT and window_role(BY_SLOT[r.body.slot]) == "LAUNCH":
            n += 1
        elif r.type == "MARK" and r.body.kind == 3 and bytes(r.body.label) == b"step":
            at[r.body.id] = n
    end = at.get(last, n)
    return at[first], end - at[first]


def job_windows(out, args):
    """Issue 24's capture windows on a PyTorch training loop (scripts/corpus/torch_window.py):
    the CUPTI ground truth natively, then under the shim the whole run and the three window
    kinds over the same steps (--span A:B): cudaProfilerApi (the program calls
    cudaProfilerStart/Stop around them), nvtx (the ranges named "step" A+1 to B) and launches
    (the kernel launch calls of those steps, counted in the whole run's capture)."""
    first, last = (int(v) for v in args.span.split(":"))
    src = ROOT / "scripts/corpus/torch_window.py"
    py = args.python or sys.executable
    common = ["--steps", str(args.steps), "--span", args.span]
    out.mkdir(parents=True, exist_ok=True)
    cupti = out / "cupti.truth.json"
    t0 = time.time()
    native = subprocess.run([py, str(src), str(cupti), "--cupti"] + common, capture_output=True,
                            text=True)
    native_wall = time.time() - t0
    print(f"== native (CUPTI): rc={native.returncode} {native.stdout!r} {native.stderr[-1500:]}")
    # PyTorch's libraries' fatbins are cut at 64 KiB (as captures/torch-small): the kernels
    # are named from their lookups, the captures stay small
    os.environ["TRACE_LAUNCH_IMAGE_MAX"] = str(64 << 10)
    runs = [("torch-window-full", None)]
    for name, window in runs + [("torch-window-profiler", {"kind": "cudaProfilerApi", "skip": 0, "count": 1}),
                                ("torch-window-nvtx", {"kind": "nvtx", "name": "step", "skip": first,
                                                       "count": last - first}),
                                ("torch-window-launches", "launches")]:
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        if window == "launches":
            skip, count = _launch_calls(out / "torch-window-full" / "capture.tlc", first, last)
            window = {"kind": "launches", "skip": skip, "count": count}
        log = d / "stdout.txt"
        argv = ["/bin/sh", "-c", f'exec "$@" > {log}', "sh", py, str(src), "-"] + common
        m = record(out, name, argv, cupti, window=window,
                   notes=f"scripts/corpus/torch_window.py --steps {args.steps} --span {args.span}; "
                         f"TRACE_LAUNCH_IMAGE_MAX=65536 (module images cut at 64 KiB)")
        traced = log.read_text() if log.exists() else ""
        gt = m.setdefault("ground_truth", {})
        gt.update({"native_stdout": native.stdout, "native_exit": native.returncode,
                   "native_wall_s": round(native_wall, 3), "traced_stdout": traced,
                   "output_unchanged": traced == native.stdout and m["exit_status"] == native.returncode})
        (d / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))
        print(f"== {name}: window {window} unchanged={gt['output_unchanged']} traced {traced!r}")
    os.environ.pop("TRACE_LAUNCH_IMAGE_MAX", None)


JOBS = {"builtin": job_builtin, "vadd": job_vadd, "timing": job_timing, "shapes": job_shapes,
        "loop": job_loop, "bench": job_bench, "torch": job_torch, "corpus": job_corpus,
        "loop100k": job_loop100k, "probe": job_probe, "multigpu": job_multigpu, "real": job_real,
        "windows": job_windows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--launches", type=int, default=100000)
    ap.add_argument("--modes", default="native,ioctl,trap,full")
    ap.add_argument("--only", default="", help="corpus job: comma-separated program names")
    ap.add_argument("--steps", type=int, default=12, help="windows job: training steps")
    ap.add_argument("--span", default="5:8", help="windows job: steps A:B the windows cover")
    ap.add_argument("--python", default=None, help="windows job: the Python with PyTorch")
    ap.add_argument("jobs", nargs="+", choices=sorted(JOBS))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for j in args.jobs:
        try:
            JOBS[j](args.out, args)
        except Exception as exc:  # keep going: one failed job must not cost the others
            print(f"== job {j} FAILED: {type(exc).__name__}: {exc}", flush=True)
            import traceback
            traceback.print_exc()


if __name__ == "__main__":
    main()
