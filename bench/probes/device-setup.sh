# Sourced by the probe scripts on the device machine: this package's wheels (.whl/, carried
# with the tree) into /tmp/site, and the compiled modules built in place unless a previous
# call on the same machine built them. Needs $OUT; sets PYTHONPATH and P, the progress file
# under $OUT, which it starts with the time and the Python.
set -u
export PYTHONUNBUFFERED=1
P=$OUT/progress.txt
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
if ! ls decoders/session/*.cpython-312*.so >/dev/null 2>&1; then
  timeout 150 python3 setup.py -q build_ext --inplace > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
fi
echo "built $(date +%T); $(python3 -V)" >> $P
