"""Capture size and decode cost of a real PyTorch script (issue 17), in one run on the GPU
machine: scripts/corpus/torch_script.py (eager matmul, softmax, relu and a replayed CUDA
graph) under `trace-launch --no-report` as it writes captures by default (each image once,
fatbin entries for other GPUs left out, zstd), with --all-entries, and with --no-compress;
then `trace-decode` of the default capture and of captures/launch-loop-10k (text and
--json), wall and peak RSS, as ratios in the same run.

    python3 bench/capture_size.py --json out.json [--keep DIR]
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_job import CLI, ROOT, rss_of, timed  # noqa: E402

PROG = [sys.executable, str(ROOT / "scripts/corpus/torch_script.py")]
VARIANTS = {"default": [], "all_entries": ["--all-entries"], "no_compress": ["--no-compress"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="copy the default capture here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="capture-size-"))
    native = timed(PROG)
    res = {"program": "scripts/corpus/torch_script.py", "native_s": round(native[0], 2),
           "native_stdout": native[2].stdout, "captures": {}}
    for name, extra in VARIANTS.items():
        cap = tmp / f"{name}.tlc"
        wall, _, p = timed(CLI + ["trace-launch", "--no-report", "-o", str(cap)] + extra + PROG)
        res["captures"][name] = {"bytes": cap.stat().st_size, "wall_s": round(wall, 2),
                                 "rc": p.returncode, "stdout_same": p.stdout == native[2].stdout,
                                 "tracer_line": p.stderr.strip().splitlines()[-1:]}
    ref = ROOT / "captures/launch-loop-10k/capture.tlc.gz"
    for name, path in (("torch_script", tmp / "default.tlc"), ("launch_loop_10k", ref)):
        res[f"decode_{name}"] = {"text": rss_of(CLI + ["trace-decode", str(path)]),
                                 "json": rss_of(CLI + ["trace-decode", str(path), "--json"])}
    a, b = res["decode_torch_script"], res["decode_launch_loop_10k"]
    res["decode_ratio_vs_launch_loop"] = {k: round(a[k]["wall_s"] / b[k]["wall_s"], 2)
                                          for k in ("text", "json")}
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp / "default.tlc", args.keep / "torch-script.tlc")
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
