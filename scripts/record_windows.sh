#!/bin/bash
# Record issue 24's capture windows on the GPU machine through the device tool:
#   scripts/record_windows.sh [STEPS [A:B]]        (default 12 steps, window over steps 5..7)
# Builds the shim in place, then scripts/record.py's `windows` job: the CUPTI ground truth of
# scripts/corpus/torch_window.py natively, and under the shim the whole run and its three
# windows (cudaProfilerApi, nvtx "step", --launch-range) over the same steps, each capture +
# manifest (+ the program's stdout) into $OUT/windows/<name>/, capture.tlc gzipped as
# captures/ keeps them. The device tool brings back few files: windows/ is packed into
# $OUT/windows.tgz.part-* (cat windows.tgz.part-* | tar xz). Copy
# windows/torch-window-{full,profiler,nvtx,launches}/{capture.tlc.gz,manifest.json} into
# captures/; tests/test_window_real.py then compares each window with the same steps of the
# whole run (and scripts/make_golden.py writes their golden JSON).
# TORCH_PY names the Python with PyTorch (default /opt/torch/.venv/bin/python3, else python3).
set -u
OUT=${OUT:-/tmp/trace-launch-out}
STEPS=${1:-12}
SPAN=${2:-5:8}
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
[ -x "$TORCH_PY" ] || TORCH_PY=$(command -v python3)
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 setup.py -q build_ext --inplace >/tmp/build.log 2>&1 || { cat /tmp/build.log; exit 1; }
python3 scripts/record.py --out "$OUT/windows" --steps "$STEPS" --span "$SPAN" --python "$TORCH_PY" windows 2>&1 | tee "$OUT/record-windows.log"
find "$OUT/windows" -name capture.tlc -exec gzip -9 {} +
du -a "$OUT/windows" | sort -n | tail -20
tar czf - -C "$OUT" windows | split -b 15M - "$OUT/windows.tgz.part-" && rm -rf "$OUT/windows"
ls -la "$OUT"
