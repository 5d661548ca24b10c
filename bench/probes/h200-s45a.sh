#!/bin/bash
# Session 45 device call 1 (nvidia-h200): fresh transformer captures at 100 and 500 steps
# (scripts/record_scaling.py, natively and under trace-launch --no-report, 1 rep), brought
# back zstd-compressed for this session's decode work on the 2-CPU machine (issue 24's
# target 2). Carry .whl. Progress and results in $OUT/progress.txt.
find decoders tracer -name "*.cpython-312*.so" -delete      # (a warm machine's: stale)
. bench/probes/device-setup.sh
L=/tmp/logs; mkdir -p $L
trap 'tar czf $OUT/logs.tgz -C $L .' EXIT
timeout 200 python3 scripts/record_scaling.py --out /tmp/rs --steps 100 500 --reps 1 \
    --timeout 80 > $L/record.log 2>&1
rc=$?; echo "$(date +%T) record rc=$rc $(tail -2 $L/record.log)" >> $P
cp /tmp/rs/scaling-record.json $OUT/ 2>/dev/null
cp /tmp/rs/transformer-100/manifest.json $OUT/t100.manifest.json
cp /tmp/rs/transformer-500/manifest.json $OUT/t500.manifest.json
python3 - <<'PY' >> $P 2>&1
import zstandard, os
out = os.environ["OUT"]
for n in (100, 500):
    src = f"/tmp/rs/transformer-{n}/capture.tlc"
    data = open(src, "rb").read()
    z = zstandard.ZstdCompressor(level=9, threads=8, write_content_size=True).compress(data)
    open(f"/tmp/t{n}.tlc.zst", "wb").write(z)
    print(f"t{n}: {len(data)} -> {len(z)} bytes")
PY
cp /tmp/t100.tlc.zst $OUT/
split -b 15M /tmp/t500.tlc.zst $OUT/t500.tlc.zst.part-
ls -la $OUT >> $P
echo "$(date +%T) done" >> $P
