#!/bin/bash
# Record captures/ddp-2rank (issue 26) on a machine with 2 GPUs, through the device tool
# (nvidia-h100-x2; it runs this in the repo root with $OUT set, the wheels of construct and
# pyelftools in .whl/ as for scripts/record_h100.sh, and a Python with torch on PATH):
#
#   scripts/record_ddp.sh            # PYTHON=..., NPROC=2, IMAGE_MAX=262144 may be set
#
# 1. runs scripts/corpus/ddp_train.py natively under torchrun (2 ranks, NCCL, 20 DDP steps);
# 2. runs it again under `trace-launch -o CAPTURE -- torchrun ...` (the shim in every rank);
# 3. compares the two runs' stdout and exit status, decodes the capture (report.txt), and
#    writes $OUT/ddp/{capture.tlc.gz, manifest.json, report.txt, truth/, native/, logs};
# 4. packs $OUT/ddp into $OUT/ddp.tar.part-* of 15 MiB (cat ddp.tar.part-* | tar x).
# To commit: captures/ddp-2rank/{capture.tlc.gz, manifest.json} from ddp/, then
# scripts/make_golden.py ddp-2rank; tests/test_ddp_2rank.py stops skipping.
#
# NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 stay set
# for both runs: the machine needs them (NVLink multicast is off there; KINDS.md).
set -u
OUT=${OUT:-/tmp/trace-launch-out}
PY=${PYTHON:-python3}
NPROC=${NPROC:-2}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
$PY setup.py -q build_ext --inplace >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
nvidia-smi -L || true

D=$OUT/ddp
rm -rf "$D" && mkdir -p "$D/native" "$D/truth"
TORCHRUN=("$PY" -m torch.distributed.run --nproc-per-node "$NPROC" --standalone)
JOB=(scripts/corpus/ddp_train.py)

t0=$(date +%s.%N)
"${TORCHRUN[@]}" "${JOB[@]}" "$D/native" >"$D/native.stdout" 2>"$D/native.stderr"
NATIVE_RC=$?
t1=$(date +%s.%N)
# Module images past IMAGE_MAX bytes are cut (each rank loads torch's and NCCL's fatbins
# whole: hundreds of MiB); kernels are still named from their lookups, and an NCCL kernel's
# collective is read from its argument bytes, not from its cubin.
TRACE_LAUNCH_IMAGE_MAX=${IMAGE_MAX:-262144} \
  $PY -m tracer.cli_main trace-launch -o "$D/capture.tlc" --no-report -- \
  "${TORCHRUN[@]}" "${JOB[@]}" "$D/truth" >"$D/traced.stdout" 2>"$D/traced.stderr"
TRACED_RC=$?
t2=$(date +%s.%N)
echo "native rc=$NATIVE_RC traced rc=$TRACED_RC"
$PY -m tracer.cli_main trace-decode "$D/capture.tlc" >"$D/report.txt" 2>"$D/decode.stderr"
echo "trace-decode rc=$? ($(wc -l <"$D/decode.stderr") problem line(s))"

NATIVE_RC=$NATIVE_RC TRACED_RC=$TRACED_RC T0=$t0 T1=$t1 T2=$t2 D=$D NPROC=$NPROC $PY - <<'EOF'
import gzip, json, os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, "scripts")
from record import git_commit, summarize            # scripts/record.py
from tracer.run import gpu_meta
from decoders.capture.reader import open_capture
from decoders.session import decode_capture
from decoders.ranks import processes_meta
from decoders.ioctl import coverage

d = Path(os.environ["D"])
cap = d / "capture.tlc"
ranks = [json.loads(p.read_text()) for p in sorted((d / "truth").glob("rank*.json"))
         if not p.name.endswith(".cupti.json")]
native = (d / "native.stdout").read_text()
traced = (d / "traced.stdout").read_text()
nrc, trc = int(os.environ["NATIVE_RC"]), int(os.environ["TRACED_RC"])
t0, t1, t2 = (float(os.environ[k]) for k in ("T0", "T1", "T2"))
argv = ["torchrun", "--nproc-per-node", os.environ["NPROC"], "--standalone",
        "scripts/corpus/ddp_train.py", "TRUTH_DIR"]
m = {"name": "ddp-2rank", "command": ["trace-launch", "-o", "capture.tlc", "--"] + argv,
     "mode": "full", "exit_status": trc,
     "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git_commit": git_commit(),
     "wall_s": round(t2 - t1, 3),
     "notes": "scripts/record_ddp.sh: scripts/corpus/ddp_train.py under torchrun (DDP, NCCL, "
              "20 steps, one rank per GPU), natively then under trace-launch; "
              f"TRACE_LAUNCH_IMAGE_MAX={os.environ.get('IMAGE_MAX', '262144')}; "
              "NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1",
     "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                            "NVSHMEM_DISABLE_NVLS", "CUDA_VISIBLE_DEVICES")}}
m.update({k: v for k, v in gpu_meta().items() if k != "gpu_error"})
m["ground_truth"] = {"ranks": ranks, "native_stdout": native, "native_exit": nrc,
                     "native_wall_s": round(t1 - t0, 3), "traced_stdout": traced,
                     "output_unchanged": native == traced and nrc == trc,
                     "traced_stderr_tail": (d / "traced.stderr").read_text()[-2000:]}
m["summary"] = summarize(cap)
model = decode_capture(cap)
cov = coverage([i["_body"] for i in model.ioctls if i.get("_body") is not None])
m["decoded"] = {"processes": [{k: p.get(k) for k in ("pid", "rank", "local_rank", "world_size",
                                                     "gpus")} for p in processes_meta(model)],
                "params_decoded_public": cov["params_decoded_public"],
                "params_opaque": cov["params_opaque"],
                "problems": [str(p) for p in model.problems][:50]}
(d / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True, default=str))
with open_capture(str(cap)) as src, gzip.open(d / "capture.tlc.gz", "wb", 6) as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
cap.unlink()
print("output unchanged:", m["ground_truth"]["output_unchanged"], "| native", repr(native),
      "| traced", repr(traced))
print("ranks:", [(p["rank"], p["pid"], [(g["index"], g["pci_bus_id"]) for g in p["gpus"] or []])
                 for p in m["decoded"]["processes"] if p["rank"] is not None])
print("params_decoded_public", cov["params_decoded_public"], "opaque", cov["params_opaque"])
print("summary", json.dumps(m["summary"])[:1500])
EOF
du -a "$D" | sort -n | tail -12
tar cf - -C "$OUT" ddp | split -b 15M - "$OUT/ddp.tar.part-" && rm -rf "$D"
ls -la "$OUT"
