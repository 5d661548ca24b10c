#!/bin/bash
# Run here (not on the device): the wheels the probes carry to the H200 (.whl/, ignored by
# .git/info/exclude) for Python 3.12, made small enough to travel beside the ~63 MB tree
# (64 MiB in all): the C extensions stripped of their symbols, and the parts this package
# never imports (zstandard's cffi backend, lz4.frame) left out.
set -eu
cd "$(dirname "$0")/../.."
rm -rf .whl; T=$(mktemp -d)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl construct zstandard lz4 cxxfilt pyelftools orjson
for w in .whl/zstandard-*.whl .whl/lz4-*.whl .whl/orjson-*.whl; do
    rm -rf $T/w; mkdir $T/w; (cd $T/w && unzip -q "$OLDPWD/$w" \
        && rm -rf zstandard/_cffi.*.so zstandard/backend_cffi.py lz4/frame \
        && find . -name '*.so' -exec strip --strip-unneeded {} + \
        && for r in *.dist-info/RECORD; do grep -v '_cffi\|backend_cffi\|lz4/frame' $r > $r.new; mv $r.new $r; done \
        && rm "$OLDPWD/$w" && zip -q -r -9 "$OLDPWD/$w" .)
done
rm -rf $T; du -sh .whl
