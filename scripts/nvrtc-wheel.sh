#!/usr/bin/env bash
# Fetches NVIDIA's NVRTC (the CUDA runtime compiler, which needs no GPU) from PyPI as a pinned
# wheel, caches and unpacks it under target/nvrtc/, and prints the path of libnvrtc.so.
# The NVRTC compile test of polycompute-cuda reads that path from POLYCOMPUTE_NVRTC_LIB:
#   export POLYCOMPUTE_NVRTC_LIB="$(scripts/nvrtc-wheel.sh)"
# Idempotent: a second run only prints the path.
set -euo pipefail

# CUDA 13.0's NVRTC: compiles for sm_75 .. sm_120, including the sm_80 and sm_90 the test checks.
PACKAGE="nvidia-cuda-nvrtc"
VERSION="13.0.88"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
dir="$target/nvrtc/$PACKAGE-$VERSION"

find_lib() {
    find "$dir/unpacked" -name 'libnvrtc.so*' ! -name '*builtins*' 2>/dev/null | sort | head -n1
}

lib="$(find_lib || true)"
if [[ -z "$lib" ]]; then
    python="$(command -v python3 || command -v python || true)"
    [[ -n "$python" ]] || { echo "nvrtc-wheel.sh: python3 (with pip) is needed to fetch the wheel" >&2; exit 1; }
    mkdir -p "$dir/wheel"
    if ! ls "$dir"/wheel/*.whl >/dev/null 2>&1; then
        "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$dir/wheel" "$PACKAGE==$VERSION" >&2
    fi
    wheel="$(ls "$dir"/wheel/*.whl | head -n1)"
    rm -rf "$dir/unpacked.tmp"
    "$python" -m zipfile -e "$wheel" "$dir/unpacked.tmp"
    mv "$dir/unpacked.tmp" "$dir/unpacked"
    lib="$(find_lib)"
    [[ -n "$lib" ]] || { echo "nvrtc-wheel.sh: no libnvrtc.so in $wheel" >&2; exit 1; }
fi
echo "$lib"
