#!/usr/bin/env bash
# Rebuild tests/fixtures/cubins/ from kernels/shapes.cu (issue 6).
#
# The fixtures are committed build outputs of our own sources, so the tests run where
# no CUDA toolkit is installed. Re-run this after changing kernels/shapes.cu and commit
# the result together with the regenerated expected files, saying why.
#
#   NVCC=/usr/local/bin/nvcc scripts/build_cubin_fixtures.sh
#
# Optional tools, used when found (PATH, or CUDA_TOOLS_BIN for a directory):
#   cuobjdump  -> tests/fixtures/cubins/*.sass.txt (expected SASS words for test_cubin.py)
#   libnvrtc   -> NVRTC_LIB=/path/libnvrtc.so.13: check that shapes.cu also builds with NVRTC
set -euo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-/usr/local/bin/nvcc}
OUT=tests/fixtures/cubins
SRC=kernels/shapes.cu
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One cubin per target the project decodes: Ampere, Ada, Hopper, Blackwell.
for sm in 80 89 90 100; do
    "$NVCC" -cubin -arch=sm_$sm -o "$OUT/shapes.sm_$sm.cubin" "$SRC"
done

# A small executable with an embedded fatbin: SASS for sm_90 plus compute_90 PTX.
# -cudart shared keeps the CUDA runtime out of the binary (tens of KiB, not 1 MiB).
# nvcc 13's default compress mode stores the PTX zstd-compressed, the ELF as is.
printf 'int main(void) { return 0; }\n' > "$TMP/main.c"
"$NVCC" -cudart shared -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    -o "$OUT/shapes_exe" "$SRC" "$TMP/main.c"

# Stand-alone fatbins with every entry compressed, one per compression nvcc 13 offers:
# --compress-mode=speed (LZ4-style, flag 0x2000) and --compress-mode=size (zstd, flag 0x8000).
for mode in speed size; do
    "$NVCC" -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
        --compress-mode=$mode -Xfatbin -compress-all -o "$OUT/shapes.sm_90.$mode.fatbin" "$SRC"
done

# Expected SASS (instruction words as cuobjdump prints them), for hosts without cuobjdump.
CUOBJDUMP=$(command -v cuobjdump || true)
[ -z "$CUOBJDUMP" ] && [ -n "${CUDA_TOOLS_BIN:-}" ] && CUOBJDUMP="$CUDA_TOOLS_BIN/cuobjdump"
if [ -n "$CUOBJDUMP" ] && [ -x "$CUOBJDUMP" ]; then
    for sm in 80 89 90 100; do
        "$CUOBJDUMP" -sass "$OUT/shapes.sm_$sm.cubin" > "$OUT/shapes.sm_$sm.sass.txt"
    done
    "$CUOBJDUMP" -elf "$OUT/shapes.sm_90.cubin" > "$OUT/shapes.sm_90.elf.txt"
else
    echo "cuobjdump not found: expected SASS files left as they are" >&2
fi

# NVRTC: the same source must compile at run time too (no host headers, extern "C").
if [ -n "${NVRTC_LIB:-}" ]; then
    python3 - "$NVRTC_LIB" "$SRC" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
src = open(sys.argv[2], "rb").read()
for arch in (b"sm_80", b"sm_89", b"sm_90", b"sm_100"):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"shapes.cu", 0, None, None)
    assert rc == 0, rc
    opts = (ctypes.c_char_p * 1)(b"--gpu-architecture=" + arch)
    rc = lib.nvrtcCompileProgram(prog, 1, opts)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit(f"NVRTC {arch.decode()}: rc {rc}\n{log.value.decode()}")
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    print(f"NVRTC {arch.decode()}: {size.value} B cubin")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
PY
else
    echo "NVRTC_LIB not set: NVRTC build not checked" >&2
fi
ls -l "$OUT"
