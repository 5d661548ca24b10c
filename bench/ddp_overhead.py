"""Launch overhead per rank of a multi-GPU job against the single-GPU figure (issue 26), in
one run on one machine:

    python3 bench/ddp_overhead.py [--launches 50000] [--reps 3] [--nproc 2] [--json F]

Four modes, interleaved rep by rep so that drift hits each alike:
  single-native   bench/launch_overhead.py's loop (cuLaunchKernel of an empty kernel, then one
                  synchronize) in one process on GPU 0;
  single-traced   the same under the shim (full mode, no report);
  ranks-native    torchrun --nproc-per-node N: each rank joins an NCCL process group, runs
                  one all_reduce (communicator, peer mappings and NCCL's kernels in place),
                  then the same loop on its own GPU, all ranks at once;
  ranks-traced    the same under `trace-launch` (the shim in every rank).
Prints microseconds per launch for each (median of the reps; per rank for the rank modes)
and each traced mode's ratio to its native one. Needs N GPUs, torch and cuda-python.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def rank_child(launches, out_dir):
    """One rank: NCCL up and used once, then launch_overhead's loop on this rank's GPU."""
    import torch
    import torch.distributed as dist
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    t = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(t)
    torch.cuda.synchronize()
    dist.barrier()
    import io
    from contextlib import redirect_stdout

    import launch_overhead
    from tracer import cudaapi
    real = cudaapi.open_module
    cudaapi.open_module = lambda name, ordinal=0: real(name, ordinal=local)
    buf = io.StringIO()
    with redirect_stdout(buf):
        launch_overhead.child(launches)
    r = json.loads(buf.getvalue().strip().splitlines()[-1])
    r["rank"] = rank
    r["allreduce_ok"] = float(t[0]) == float(dist.get_world_size())
    (Path(out_dir) / f"rank{rank}.json").write_text(json.dumps(r))
    dist.barrier()
    dist.destroy_process_group()


def run(mode, launches, nproc, tmp):
    """{rank or 'single': us per launch} for one run of `mode`."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}:{os.environ.get('PYTHONPATH', '')}")
    out = Path(tempfile.mkdtemp(dir=tmp))
    if mode.startswith("single"):
        argv = [sys.executable, str(ROOT / "bench" / "launch_overhead.py"), "--child",
                "--launches", str(launches)]
    else:
        env.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1")
        argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
                "--standalone", __file__, "--rank-child", "--launches", str(launches),
                "--out", str(out)]
    log = out / "stdout.txt"
    if mode.endswith("traced"):
        cap = out / "capture.tlc"
        argv = [sys.executable, "-m", "tracer.cli_main", "trace-launch", "-o", str(cap),
                "--no-report", "--no-compress", "--"] + argv
    with open(log, "w") as f:
        p = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{mode}: exit {p.returncode}: {p.stderr[-2000:]}")
    if mode.startswith("single"):
        r = json.loads(log.read_text().strip().splitlines()[-1])
        return {"single": r["ns"] / r["launches"] / 1000.0}
    got = {}
    for k in range(nproc):
        r = json.loads((out / f"rank{k}.json").read_text())
        if not r["allreduce_ok"]:
            raise RuntimeError(f"{mode}: rank {k}'s all_reduce gave a wrong sum")
        got[f"rank{k}"] = r["ns"] / r["launches"] / 1000.0
    if mode.endswith("traced"):
        got["capture_bytes"] = cap.stat().st_size
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=50000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--rank-child", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.rank_child:
        return rank_child(args.launches, args.out)
    modes = ("single-native", "single-traced", "ranks-native", "ranks-traced")
    runs = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for mode in modes:
                runs[mode].append(run(mode, args.launches, args.nproc, tmp))
                print(f"rep {rep} {mode}: {runs[mode][-1]}", flush=True)
    table = {"launches": args.launches, "reps": args.reps, "nproc": args.nproc, "runs": runs}
    med = {m: {k: statistics.median(r[k] for r in runs[m]) for k in runs[m][0]} for m in modes}
    table["median_us_per_launch"] = med
    single = med["single-traced"]["single"] / med["single-native"]["single"]
    table["single_ratio"] = round(single, 3)
    table["rank_ratios"] = {k: round(med["ranks-traced"][k] / med["ranks-native"][k], 3)
                            for k in med["ranks-native"]}
    table["ranks_within_single"] = all(r <= single * 1.05 for r in table["rank_ratios"].values())
    print(json.dumps({k: v for k, v in table.items() if k != "runs"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    sys.exit(main())
