"""Launch-overhead benchmark (issue 3): a loop of cuLaunchKernel of an empty kernel, then
one synchronize, timed natively and under the shim in each mode, in one run.

    python3 bench/launch_overhead.py [--launches 100000] [--reps 5]

Prints microseconds per launch (median of --reps runs per mode), the ratio to native and
capture bytes per launch. Needs a GPU. The inner loop runs in a child process per run so
that each mode gets a fresh process under (or without) the shim.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def child(launches, marks=False):
    from tracer.cudaapi import check, open_module
    driver, mod, _ = open_module("empty.cu")
    fn = check(driver.cuModuleGetFunction(mod, b"empty"), "fn")
    launch = driver.cuLaunchKernel
    for _ in range(100):   # warm up
        launch(fn, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
    check(driver.cuCtxSynchronize(), "sync")
    # The loop is timed whole (then one synchronize), and in chunks of CHUNK launches: the
    # median chunk is robust against a host that stalls the process now and then.
    chunks, chunk = [], min(CHUNK, launches)
    c0 = time.thread_time_ns()   # CPU time: on a shared host, time the vCPU ran us
    t0 = t = time.perf_counter_ns()
    for i in range(1, launches + 1):
        launch(fn, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
        if i % chunk == 0:
            now = time.perf_counter_ns()
            chunks.append(now - t)
            t = now
    check(driver.cuCtxSynchronize(), "sync")
    t1 = time.perf_counter_ns()
    c1 = time.thread_time_ns()
    print(json.dumps({"ns": t1 - t0, "cpu_ns": c1 - c0, "launches": launches, "chunk": chunk,
                      "chunk_ns": chunks}))


CHUNK = 10000


def run_mode(mode, launches, workdir):
    argv = [sys.executable, __file__, "--child", "--launches", str(launches)]
    if mode == "native":
        out = subprocess.run(argv, capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1]), 0
    from tracer.run import run_traced
    cap = Path(workdir) / f"bench-{mode}.tlc"
    if mode.endswith("+shm"):   # the capture file on tmpfs: what page-cache writes cost
        cap = Path("/dev/shm") / f"bench-{mode}-{os.getpid()}.tlc"
    log = Path(workdir) / "child.json"
    wrapped = ["/bin/sh", "-c", f'exec "$@" > {log}', "sh"] + argv
    shim_mode, _, variant = mode.partition("+")
    env = dict(os.environ)
    if variant == "stream":   # streaming loads instead of memcpy for the pushbuffer copy
        env["TRACE_LAUNCH_COPY"] = "stream"
    if variant == "xsave":    # stubs that save the x87/SSE/AVX state too (before I16)
        env["TRACE_LAUNCH_XSAVE"] = "1"
    if variant == "noapi":    # full capture without the driver-API brackets: their cost
        env["TRACE_LAUNCH_API"] = "0"
    if variant == "nopatch":  # every doorbell faults: the store sites are not patched
        env["TRACE_LAUNCH_PATCH"] = "0"
    if variant == "noprefault":   # no helper thread mapping the capture ahead (I15)
        env["TRACE_LAUNCH_PREFAULT"] = "0"
    if variant == "noknown":  # no GP entry writer hook: every entry read from the ring
        env["TRACE_LAUNCH_KNOWN"] = "0"
    if variant == "profile":  # fenced TSC phase counters (they cost time themselves)
        env["TRACE_LAUNCH_PROFILE"] = "1"
    rc = run_traced(wrapped, cap, mode=shim_mode, env=env)
    if rc != 0:
        raise RuntimeError(f"{mode} run failed with {rc}")
    size = cap.stat().st_size
    CYCLES[mode].append(shim_cycles(cap))
    cap.unlink()
    return json.loads(log.read_text().strip().splitlines()[-1]), size


CYCLES = __import__("collections").defaultdict(list)
SITES = __import__("collections").Counter()


def shim_cycles(cap):
    """TSC cycles per doorbell spent in each phase of the capture (from the STATS record)."""
    from decoders.capture.format import TL_STATS_NAMES
    from decoders.capture.reader import CaptureReader, open_capture
    stats = {}
    for r in CaptureReader(open_capture(cap)).records():
        if r.type == "NOTE":   # which store sites were patched, and why others were not
            text = bytes(r.body.text).decode(errors="replace")
            if " store site " in text or text.startswith("GP entry writer site"):
                SITES[text.split(";")[0].split(" 0x")[0] + ": " + text.split(";")[0].split(": ", 1)[-1]] += 1
        if r.type == "STATS":
            for name, v in zip(TL_STATS_NAMES, r.body.counters):
                stats[name] = stats.get(name, 0) + v
    d = max(stats.get("doorbells", 0), 1)
    out = {k[len("cycles_"):]: stats.get(k, 0) / d for k in TL_STATS_NAMES if k.startswith("cycles_")}
    out["populate_failed"] = stats.get("populate_failed", 0)
    out["hooked_share"] = stats.get("doorbells_hooked", 0) / d   # through a patched site
    out["gp_put_hooked_share"] = stats.get("gp_put_hooked", 0) / d
    out["gp_put_shadow_mismatch"] = stats.get("gp_put_shadow_mismatch", 0)
    out["grows_inline"] = stats.get("grows_inline", 0)   # the recording thread grew the file
    out["entries_shadowed_share"] = stats.get("gp_entries_shadowed", 0) / d   # no ring read (I14)
    out["gp_entry_shadow_mismatch"] = stats.get("gp_entry_shadow_mismatch", 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--workdir", default=None, help="where the benchmark's captures are written")
    ap.add_argument("--modes", default="native,ioctl,full",
                    help="comma list of native, ioctl (shim, no trap), trap (trap and emulate the "
                         "doorbell store, no capture: isolates the fault cost), full; full+VARIANT "
                         "with VARIANT one of noapi, nopatch, noknown, noprefault, profile, stream, xsave, shm")
    args = ap.parse_args()
    if args.child:
        return child(args.launches)
    modes = args.modes.split(",")
    results, chunked, cpu = {}, {}, {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        for rep in range(args.reps):
            for mode in modes:   # interleaved: drift hits every mode alike
                r, size = run_mode(mode, args.launches, tmp)
                results.setdefault(mode, []).append((r["ns"] / r["launches"] / 1000.0, size))
                chunked.setdefault(mode, []).append(statistics.median(r["chunk_ns"]) / r["chunk"] / 1000.0)
                cpu.setdefault(mode, []).append(r["cpu_ns"] / r["launches"] / 1000.0)
    base = statistics.median(x for x, _ in results["native"])
    cbase = statistics.median(chunked["native"])
    table = {}
    print(f"{'mode':12} {'us/launch':>10} {'x native':>9} {'capture B/launch':>17} {'chunked us':>11} {'x native':>9}"
          f"   ({args.launches} launches, median of {args.reps}; chunked: median {CHUNK:,}-launch chunk)")
    for mode in modes:
        us = statistics.median(x for x, _ in results[mode])
        bpl = statistics.median(s for _, s in results[mode]) / args.launches
        cus = statistics.median(chunked[mode])
        table[mode] = {"us_per_launch": us, "ratio": us / base, "bytes_per_launch": bpl,
                       "runs_us": [x for x, _ in results[mode]],
                       "chunked_us_per_launch": cus, "chunked_ratio": cus / cbase,
                       "chunked_runs_us": chunked[mode]}
        cyc = ""
        if CYCLES.get(mode):
            parts = {k: statistics.median(c[k] for c in CYCLES[mode]) for k in CYCLES[mode][0]}
            table[mode]["tsc_cycles_per_doorbell"] = parts
            cyc = "  cycles/doorbell " + " ".join(f"{k}={v:.0f}" for k, v in parts.items())
        print(f"{mode:12} {us:10.3f} {us / base:9.3f} {bpl:17.1f} {cus:11.3f} {cus / cbase:9.3f}{cyc}")
    # The host is shared and native runs spread by 1.5x within one run, so the same runs are
    # also read four other ways: the protocol (median of the first five reps), the
    # fastest run of each mode, the median of each rep's ratio to the native run of the same
    # rep (neighbours in time), and CPU time (thread_time: time the vCPU was running us).
    nat = [x for x, _ in results["native"]]
    print(f"\n{'mode':12} {'first 5':>8} {'best':>8} {'paired':>8} {'cpu us':>8} {'cpu x':>8}")
    for mode in modes:
        runs = [x for x, _ in results[mode]]
        other = {"first5_ratio": statistics.median(runs[:5]) / statistics.median(nat[:5]),
                 "best_ratio": min(runs) / min(nat),
                 "paired_ratio": statistics.median(a / b for a, b in zip(runs, nat)),
                 "cpu_us_per_launch": statistics.median(cpu[mode]),
                 "cpu_ratio": statistics.median(cpu[mode]) / statistics.median(cpu["native"]),
                 "cpu_runs_us": cpu[mode]}
        table[mode].update(other)
        print(f"{mode:12} {other['first5_ratio']:8.3f} {other['best_ratio']:8.3f} {other['paired_ratio']:8.3f} "
              f"{other['cpu_us_per_launch']:8.3f} {other['cpu_ratio']:8.3f}")
    print("store sites over all traced runs:", dict(SITES))
    table["store_sites"] = dict(SITES)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    sys.exit(main())
