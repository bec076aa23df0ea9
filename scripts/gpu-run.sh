#!/usr/bin/env bash
# The prepared GPU run, executed from the bundle that scripts/gpu-check.sh made, on a GPU host
# with an NVIDIA driver and the CUDA 13.0 toolkit (for NVRTC and cuBLAS) and no Rust toolchain:
#
#   ./gpu-run.sh RESULTS_DIR
#
# Runs, with POLYCOMPUTE_REQUIRE=cuda (an unavailable CUDA backend fails instead of skipping):
# the probe, the CUDA backend's GPU tests (own matmul vs cuBLAS, semantics, reductions, fills,
# transposes), the conformance suite's CUDA trials, the CUDA figures against the issue's targets
# (figures.json: copy/map/sum GB/s, own/cuBLAS matmul GFLOP/s), `polycompute bench --json --device cuda:0`
# (the default matmul path, then the own kernel and cuBLAS alone), and the NVRTC compile check
# against the toolkit's NVRTC, and `polycompute demo` on cuda:0 with process and thread
# workers. Each step's output goes to RESULTS_DIR/<step>.log (JSON to <step>.json), one line
# per step to RESULTS_DIR/summary.txt; exit status 1 if any step failed.
# GPU_RUN_QUICK=1 passes --quick to the bench; STEP_TIMEOUT (seconds, default 600) bounds a step.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: $0 RESULTS_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
: >"$out/summary.txt"
failed=0
step_timeout="${STEP_TIMEOUT:-600}"
quick=()
[[ "${GPU_RUN_QUICK:-0}" == 1 ]] && quick=(--quick)

export POLYCOMPUTE_REQUIRE=cuda
export RUST_BACKTRACE=1
# NVRTC and cuBLAS from the toolkit when they are not on the loader's path.
for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/local/cuda-13.0/lib64; do
    if [[ -z "${POLYCOMPUTE_NVRTC_LIB:-}" && -e "$dir/libnvrtc.so.13" ]]; then
        export POLYCOMPUTE_NVRTC_LIB="$dir/libnvrtc.so.13"
    fi
    if [[ -z "${POLYCOMPUTE_CUBLAS_LIB:-}" && -e "$dir/libcublas.so.13" ]]; then
        export POLYCOMPUTE_CUBLAS_LIB="$dir/libcublas.so.13"
        export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
done

# step NAME [json] -- COMMAND...: runs COMMAND, stdout to NAME.json (json) or NAME.log.
step() {
    local name="$1" json=0 start rc
    shift
    if [[ "$1" == json ]]; then json=1; shift; fi
    [[ "$1" == -- ]] && shift
    echo "== $name: $*" >&2
    start=$(date +%s)
    if ((json)); then
        timeout "$step_timeout" "$@" >"$out/$name.json" 2>"$out/$name.log"
    else
        timeout "$step_timeout" "$@" >"$out/$name.log" 2>&1
    fi
    rc=$?
    ((rc == 0)) || failed=1
    printf '%-22s rc=%-3s %4ss\n' "$name" "$rc" "$(($(date +%s) - start))" | tee -a "$out/summary.txt" >&2
}

{
    cat "$here/MANIFEST" 2>/dev/null
    echo "host: $(uname -a)"
    echo "NVRTC: ${POLYCOMPUTE_NVRTC_LIB:-(loader path)}  cuBLAS: ${POLYCOMPUTE_CUBLAS_LIB:-(loader path)}"
    nvidia-smi 2>&1 || echo "nvidia-smi not available"
} >"$out/environment.txt"

step probe json -- "$here/bin/polycompute" probe --json
step cuda_unavailable -- "$here/tests/cuda_unavailable" --nocapture
step cuda_gpu -- "$here/tests/cuda_gpu" --nocapture --test-threads=1
step conformance -- "$here/tests/conformance" conformance::cuda
# The issue's targets in one binary: copy, fused map, sum (GB/s); own/cuBLAS/default matmul at 4096³, 8192³.
step figures json -- "$here/bin/cuda_figures" --device 0 "${quick[@]}"
step bench json -- "$here/bin/polycompute" bench --json --device cuda:0 "${quick[@]}"
step bench_matmul_own json -- env POLYCOMPUTE_CUDA_MATMUL=own \
    "$here/bin/polycompute" bench --json --device cuda:0 --only matmul_f32_1024 --only matmul_f32_2048 "${quick[@]}"
step bench_matmul_cublas json -- env POLYCOMPUTE_CUDA_MATMUL=cublas \
    "$here/bin/polycompute" bench --json --device cuda:0 --only matmul_f32_1024 --only matmul_f32_2048 "${quick[@]}"
# The pool on the GPU: one worker per CUDA device, in each worker mode (process workers are
# this binary re-executed, each opening its own CUDA context), results cross-checked on the CPU.
step demo_process json -- "$here/bin/polycompute" demo --json --devices cuda:0 --mode process --tasks 256
step demo_thread json -- "$here/bin/polycompute" demo --json --devices cuda:0 --mode thread --tasks 256
step cuda_nvrtc_compile -- env POLYCOMPUTE_REQUIRE_NVRTC=1 "$here/tests/cuda_nvrtc_compile" --nocapture
if [[ -x "$here/tests/cuda_fake_driver" ]]; then
    step cuda_fake_driver -- "$here/tests/cuda_fake_driver"
fi

echo "results in $out (summary.txt)" >&2
cat "$out/summary.txt"
exit "$failed"
