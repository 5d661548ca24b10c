"""Launches decoded per second on real H100 capture data (one core).

1. captures/launch-loop-10k: a real recording of 100 + 10,000 cuLaunchKernel of an empty
   kernel; every SUBMISSION record (all channels) is read into memory first, then timed
   through decode_submissions. This is the headline figure.
2. captures/builtin-vadd replayed: every submission of the capture
up to the MARK BEGIN is decoded once (SET_OBJECT, module uploads, the first launch: the
state a process has before it launches), then the real launch submission between the
marks (one GP entry, 1560 bytes, channel token 0xa) is replayed N times through the same
decoder, exactly as recorded (same VAs, same QMD ring slots). The output says so.

Each cuLaunchKernel on the H100 schedules two QMDs (a GRID_NULL QMD and the kernel's own,
h100-measured.md 1), so QMDs = 2 x launches. Timed: decode_submissions' full path (method
stream, I2M reconstruction, QMD decode with every field, cbank0 driver constants and
parameters, semaphores); node trees are built lazily and not counted.

3. --full: the headline on this machine's terms: decode_capture (reading the file, ioctls,
   object tree, methods, QMDs, constant bank 0, resolution, everything `trace-decode` does
   before rendering) of captures/launch-loop-10k, CPU time (time.process_time: the machine
   may be shared), best of N, one process per run. The decoder modules are imported before
   the clock starts (IMPORTS): importing is not decoding, and where PYTHONDONTWRITEBYTECODE
   is set (as on the machine these figures come from) it compiles every module from source
   each run, ~0.1 s; that import time is printed beside it. With --ref REV the same measurement runs
   alternately in a snapshot of the working tree whose decoder files come from REV
   (bench/decode_identity.py's snapshot), so old and new are compared in the same run.
   --full --profile prints the cProfile top entries of one decode_capture instead.

4. --real [DIR ...]: real-workload captures (PyTorch with its libraries' module images, JAX,
   CuPy, ...), which stay outside the repository (too large; re-recorded by
   scripts/record.py): every capture.tlc[.gz|.zst|.xz-less] under DIR (default: the
   directories in $TRACE_LAUNCH_REALCAPS, separated by ':'). Each is decoded and rendered
   (text report, then --json, to /dev/null) in its own process, as `trace-decode` does,
   with captures/launch-loop-10k in the same run: CPU seconds, kernel launches/s, seconds
   per MB of capture (uncompressed) and peak RSS, each also as a ratio to launch-loop-10k's
   (the machine may be shared and noisy: compare ratios). The largest module image entry
   (declared decompressed size) is printed too (docs/module-images.md: the cap).

usage: python3 bench/decode_bench.py [launches] [--profile]
       python3 bench/decode_bench.py --full [--repeat N] [--ref REV] [--profile]
       python3 bench/decode_bench.py --real [DIR ...] [--repeat N]
"""
import cProfile
import gc
import os
import pstats
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

from decoders.capture.reader import read_capture  # noqa: E402
from decoders.submissions import SubmissionDecoder  # noqa: E402

CAPTURE = os.path.join(ROOT, "captures", "builtin-vadd", "capture.tlc.gz")


def load(path=CAPTURE):
    """(submissions before the BEGIN mark, the marked launch submission(s))."""
    _, records = read_capture(path)
    begin = next(r.index for r in records if r.type == "MARK" and r.body.kind == 1)
    end = next(r.index for r in records if r.type == "MARK" and r.body.kind == 2)
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"]
    before = [s for s in subs if s[0] < begin]
    marked = [s for s in subs if begin < s[0] < end]
    return before, marked


def run(before, marked, launches):
    dec = SubmissionDecoder(gpu="hopper")
    for index, body, pid in before:
        dec.feed(index, body, pid)
    n0 = len(dec.launches)
    t0 = time.perf_counter()
    for k in range(launches):
        for index, body, pid in marked:
            dec.feed(index, body, pid)
    dt = time.perf_counter() - t0
    result = dec.finish()
    return dt, result, len(result.launches) - n0


LOOP = os.path.join(ROOT, "captures", "launch-loop-10k", "capture.tlc.gz")


def run_loop(path=LOOP, repeat=3, materialize=False):
    """(seconds, result) for decode_submissions over a whole real capture's submissions."""
    from decoders.submissions import decode_submissions
    _, records = read_capture(path)
    subs = [(r.index, r.body, r.pid) for r in records if r.type == "SUBMISSION"]
    best, result = None, None
    for _ in range(repeat):
        result = None            # the previous repeat's launches must not stay alive
        gc.collect()
        t0 = time.perf_counter()
        result = decode_submissions(subs, gpu="hopper")
        if materialize:
            for l in result.launches:
                l.summary["qmd_fields"]
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, result, len(subs)


def main_loop(repeat=3):
    if not os.path.exists(LOOP):
        print("captures/launch-loop-10k not present")
        return None
    dt, result, nsubs = run_loop(repeat=repeat)
    dtm, _, _ = run_loop(repeat=repeat, materialize=True)
    kernels = len(result.kernels)
    assert not result.problems, result.problems[:3]
    print(f"real: captures/launch-loop-10k, {nsubs} submissions, {kernels} kernel launches "
          f"({len(result.launches)} QMDs)")
    print(f"launches/s: {kernels / dt:,.0f}  (best of {repeat}, {dt:.3f} s)")
    print(f"launches/s with every summary's qmd_fields materialized: {kernels / dtm:,.0f}")
    return kernels / dt


def main(launches=20000, repeat=3, profile=False):
    before, marked = load()
    nbytes = sum(s.size for _, b, _ in marked for s in b.segments)
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        run(before, marked, launches)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return None
    best = None
    for _ in range(repeat):
        dt, result, nqmd = run(before, marked, launches)
        best = dt if best is None else min(best, dt)
    assert not result.problems, result.problems[:3]
    assert nqmd == 2 * launches
    kernels = sum(1 for l in result.launches[-nqmd:] if l.summary["kernel"])
    assert kernels == launches
    print(f"real-replayed: captures/builtin-vadd launch submission (record {marked[0][0]}, "
          f"{nbytes} bytes) replayed {launches} times after the capture's "
          f"{len(before)} earlier submissions (no long real capture yet)")
    print(f"{launches} launches ({nqmd} QMDs) in {best:.3f} s, best of {repeat}")
    print(f"launches/s: {launches / best:,.0f}")
    print(f"QMDs/s: {nqmd / best:,.0f}")
    print(f"MB/s: {launches * nbytes / best / 1e6:,.1f}")
    return launches / best


# What decode_capture imports (at module level or on first use), imported before timing;
# with the method tables of the classes launch-loop-10k's channels use (H100: host C86F,
# compute CBC0, copy C8B5, each importing the table it builds on), which a decode imports
# on first use of each class (decoders.methods.class_module).
IMPORTS = ("decoders.session", "decoders.launch", "decoders.submissions", "decoders.pushbuf",
           "decoders.rm.objects", "decoders.ioctl", "decoders.cuda.attribute",
           "decoders.cuda.calls", "decoders.qmd", "decoders.methods.clc86f",
           "decoders.methods.clcbc0", "decoders.methods.clc8b5", "decoders.rm.opaque",
           "decoders.window")


def _import_decoders():
    """CPU seconds to import IMPORTS (those not yet imported) in this process."""
    import importlib
    t0 = time.process_time()
    for name in IMPORTS:
        importlib.import_module(name)
    return time.process_time() - t0


def _one_full(path=LOOP):
    """(CPU seconds, kernel launches) of one decode_capture in this process, and the CPU
    seconds its imports took before it."""
    imports = _import_decoders()
    from decoders.session import decode_capture
    gc.collect()
    t0 = time.process_time()
    model = decode_capture(path)
    dt = time.process_time() - t0
    kernels = sum(1 for l in model.launches if l.kernel)
    return dt, kernels, imports


def _full_in(tree, path=LOOP):
    import json
    import subprocess
    code = ("import json, sys; sys.path.insert(0, '.'); "
            "sys.argv = ['decode_bench']; import bench.decode_bench as b; "
            f"print(json.dumps(b._one_full({path!r})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main_full(repeat=5, ref=None, profile=False):
    """launches/s of decode_capture on launch-loop-10k: CPU time, best of `repeat`."""
    if profile:
        _import_decoders()
        from decoders.session import decode_capture
        prof = cProfile.Profile()
        prof.enable()
        decode_capture(LOOP)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return None
    trees = {"new": ROOT}
    work = None
    if ref is not None:
        import shutil
        import tempfile
        from bench import decode_identity as di
        work = tempfile.mkdtemp(prefix="decode-bench-")
        trees = {"ref": os.path.join(work, "ref"), "new": os.path.join(work, "new")}
        di.snapshot(trees["new"])
        shutil.copytree(trees["new"], trees["ref"], symlinks=True)
        di.overlay(trees["ref"], ref, di.default_paths(ref))
    try:
        best, cold = {}, {}
        for _ in range(repeat):
            for name, tree in trees.items():
                dt, kernels, imports = _full_in(tree)
                if name not in best or dt < best[name][0]:
                    best[name] = (dt, kernels)
                if name not in cold or dt + imports < cold[name]:
                    cold[name] = dt + imports
        for name, (dt, kernels) in best.items():
            label = f"{ref} (decoder files)" if name == "ref" else "working tree"
            print(f"{label}: {kernels} kernel launches, {dt:.3f} s CPU (best of {repeat}): "
                  f"{kernels / dt:,.0f} launches/s; with the imports: {cold[name]:.3f} s, "
                  f"{kernels / cold[name]:,.0f} launches/s")
        if "ref" in best:
            print(f"speed-up: {best['ref'][0] / best['new'][0]:.2f}x "
                  f"(with the imports: {cold['ref'] / cold['new']:.2f}x)")
        return {k: v[1] / v[0] for k, v in best.items()}
    finally:
        if work is not None:
            import shutil
            shutil.rmtree(work, ignore_errors=True)


def _one_real(path, as_json):
    """{cpu_s, launches, peak_rss_mib, raw_mb} of decoding + rendering one capture in this
    process (the report to /dev/null), imports excluded (IMPORTS)."""
    import resource
    _import_decoders()
    from decoders.capture.reader import open_capture
    from decoders.session import decode_capture
    from tracer.report import render_json, render_text
    with open_capture(path) as f:
        raw = 0
        while chunk := f.read(1 << 22):
            raw += len(chunk)
    gc.collect()
    t0 = time.process_time()
    model = decode_capture(path)
    with open(os.devnull, "w") as out:
        (render_json if as_json else render_text)(model, out)
    dt = time.process_time() - t0
    kernels = sum(1 for l in model.launches if l.summary.get("kernel"))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu_s": dt, "launches": kernels, "peak_rss_mib": rss, "raw_mb": raw / 1e6,
            "problems": len(model.problems)}


def _real_in(path, as_json):
    import json
    import subprocess
    code = ("import json, sys; sys.path.insert(0, '.'); "
            "sys.argv = ['decode_bench']; import bench.decode_bench as b; "
            f"print(json.dumps(b._one_real({str(path)!r}, {as_json!r})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def largest_entry(path):
    """(declared decompressed bytes, arch) of the largest fatbin entry of any module image."""
    from decoders.capture.reader import CaptureReader, open_capture
    from decoders.cubin import fatbin as FB
    from decoders.cuda.calls import ApiCalls
    from decoders.errors import TraceLaunchError
    best = (0, None)
    with open_capture(path) as f:
        api = ApiCalls()
        for rec in CaptureReader(f).records():
            if rec.type != "API_ENTER":
                continue
            try:
                image = api.enter(rec).image
                if image is None or int.from_bytes(image[:4], "little") != FB.FATBIN_MAGIC:
                    continue
                for e in FB.parse_fatbin(image, 0, decompress=False, views=True):
                    n = e.header.decompressed_size if e.compression else e.header.size
                    best = max(best, (n, e.arch))
            except TraceLaunchError:
                continue
    return best


def real_captures(dirs):
    found = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name in ("capture.tlc", "capture.tlc.gz", "capture.tlc.zst"):
                    found.append(os.path.join(root, name))
                    break
    return sorted(found)


def main_real(dirs, repeat=1):
    dirs = dirs or [d for d in os.environ.get("TRACE_LAUNCH_REALCAPS", "").split(":") if d]
    paths = real_captures(dirs)
    if not paths:
        print("no real captures: pass --real DIR or set TRACE_LAUNCH_REALCAPS")
        return None
    rows = {}
    for path in [LOOP] + paths:
        for as_json in (False, True):
            best = None
            for _ in range(repeat):
                r = _real_in(path, as_json)
                best = r if best is None or r["cpu_s"] < best["cpu_s"] else best
            rows[(path, as_json)] = best
    base = {j: rows[(LOOP, j)] for j in (False, True)}
    print(f"{'capture':52s} {'view':4s} {'MB':>6s} {'launches':>8s} {'CPU s':>6s} "
          f"{'launch/s':>9s} {'x loop':>6s} {'s/MB':>6s} {'x loop':>6s} {'RSS MiB':>7s} "
          f"{'x loop':>6s}")
    for (path, as_json), r in rows.items():
        b = base[as_json]
        lps = r["launches"] / r["cpu_s"] if r["launches"] else 0.0
        blps = b["launches"] / b["cpu_s"]
        spm, bspm = r["cpu_s"] / r["raw_mb"], b["cpu_s"] / b["raw_mb"]
        name = os.path.relpath(path, ROOT) if path == LOOP else path
        print(f"{name[-52:]:52s} {'json' if as_json else 'text':4s} {r['raw_mb']:6.1f} "
              f"{r['launches']:8d} {r['cpu_s']:6.2f} {lps:9,.0f} {lps / blps:6.2f} "
              f"{spm:6.3f} {spm / bspm:6.2f} {r['peak_rss_mib']:7.0f} "
              f"{r['peak_rss_mib'] / b['peak_rss_mib']:6.2f}")
    for path in paths:
        size, arch = largest_entry(path)
        print(f"largest module image entry in {path}: {size:,} B ({arch})")
    return rows


if __name__ == "__main__":
    if "--real" in sys.argv:
        argv = sys.argv[1:]
        rep = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 1
        dirs = [a for a in argv[argv.index("--real") + 1:] if not a.startswith("--")
                and not a.isdigit()]
        main_real(dirs, rep)
        sys.exit(0)
    if "--full" in sys.argv:
        argv = sys.argv[1:]
        rep = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
        rev = argv[argv.index("--ref") + 1] if "--ref" in argv else None
        main_full(rep, rev, profile="--profile" in argv)
        sys.exit(0)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--profile" not in sys.argv:
        main_loop()
    main(int(args[0]) if args else 20000, profile="--profile" in sys.argv)
