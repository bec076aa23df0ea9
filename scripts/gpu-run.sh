#!/usr/bin/env bash
# The prepared GPU run, executed from the bundle that scripts/gpu-check.sh made, on a GPU host
# (x86-64 Linux, NVIDIA driver; NVRTC and cuBLAS from a CUDA 13 toolkit or its Python wheels;
# no Rust toolchain). docs/cuda.md gives the exact device call.
#
#   ./gpu-run.sh [OUT_DIR]        (default: $OUT, else ./gpu-results beside the bundle)
#
# Results always come back: every log is written into a scratch folder that is packed into
# OUT_DIR/gpu-results.tar.gz after each step and again on exit (a trap, so a TERM still leaves
# it), beside OUT_DIR/summary.txt: two files in all. stdout gets the compact summary (per step:
# ok / FAILED / TIMEOUT / skipped, seconds; the last lines of each failed step's log).
#
# Steps, most important first, each bounded by `timeout -k` (STEP_TIMEOUT, default 120 s;
# conformance 1.5x, environment and probe 0.5x): environment, probe, the CUDA conformance
# trials (POLYCOMPUTE_REQUIRE=cuda), the CUDA GPU tests, the k-means and softmax-regression
# examples' cross-device checks, the demo (thread and process workers),
# the figures (copy/map/sum GB/s, own/cuBLAS matmul), the bench, own-vs-cuBLAS bench figures,
# the half-precision bench rows;
# then, with GPU_RUN_WGPU=1, the wgpu set on the NVIDIA GPU through Vulkan (the loader packages
# carried in gl/ are unpacked first). The whole run ends within GPU_RUN_BUDGET seconds (default
# 400): a step starts only with at least GPU_RUN_MIN_STEP (45) seconds left, and its timeout is
# cut to what is left. GPU steps are skipped ("no GPU") where no NVIDIA GPU is seen.
#
# For the dry run (scripts/gpu-dry-run.sh): GPU_RUN_ASSUME_GPU=1 runs the GPU steps anyway;
# GPU_RUN_HANG=STEP makes that step hang (ignoring TERM) to prove the bound; GPU_RUN_STEPS="a b"
# runs only the named steps, and the environment (for a rerun of what a first call skipped).
# `./gpu-run.sh --list` prints the bundle files the steps use (gpu-check.sh checks them).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
binaries=(bin/polycompute bin/cuda_figures tests/conformance tests/examples tests/cuda_gpu tests/cuda_execute_validation tests/cuda_gpu_views tests/cuda_gpu_sizes)

# The facts a first failure needs; run as the environment step (each probe bounded).
environment() {
    local t="timeout -k 2 10"
    cat "$here/MANIFEST" 2>/dev/null
    echo "== host";             uname -a; echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "== os-release";       cat /etc/os-release 2>/dev/null
    echo "== glibc";            $t ldd --version 2>&1 | head -n1
    echo "== LD_LIBRARY_PATH";  echo "${LD_LIBRARY_PATH:-(unset)}"
    echo "== CUDA_PATH / CUDA_HOME"; echo "${CUDA_PATH:-(unset)} / ${CUDA_HOME:-(unset)}"
    echo "== ldconfig -p (libcuda, libnvrtc, libcublas, libvulkan, libEGL)"
    $t ldconfig -p 2>&1 | grep -E 'libcuda\.|libnvrtc|libcublas|libvulkan|libEGL' || echo "(none)"
    echo "== NVRTC and cuBLAS files (toolkits, Python wheels)"
    $t find /usr/local/cuda* /opt /usr/lib/python3* /usr/local/lib/python3* -maxdepth 8 \
        \( -name 'libnvrtc.so*' -o -name 'libcublas.so*' \) 2>/dev/null | head -n 40
    echo "== python3";          $t python3 -c 'import sys; print(sys.executable, sys.version.split()[0])' 2>&1
    echo "== nvcc --version";   $t nvcc --version 2>&1 || echo "(no nvcc on PATH)"
    echo "== nvidia-smi";       $t nvidia-smi 2>&1 || echo "(nvidia-smi failed)"
    echo "== Vulkan ICDs";      ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d 2>&1
    echo "== POLYCOMPUTE_*";    env | grep '^POLYCOMPUTE_' || echo "(none)"
}

case "${1:-}" in
--list) printf '%s\n' "${binaries[@]}"; exit 0 ;;
--environment) environment; exit 0 ;;
esac

out="${1:-${OUT:-$here/../gpu-results}}"
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
budget="${GPU_RUN_BUDGET:-400}"
base="${STEP_TIMEOUT:-120}"
min_step="${GPU_RUN_MIN_STEP:-45}"
reserve=10 # seconds kept for packing the archive at the end
kill_after="${GPU_RUN_KILL_AFTER:-5}" # a step that ignores TERM is killed this much later
scratch="$(mktemp -d "${TMPDIR:-/tmp}/gpu-run.XXXXXX")"
res="$scratch/gpu-results"
mkdir -p "$res"
summary="$res/summary.txt"
: >"$summary"
failed_steps=()
child=0
# The bench runs --quick (GPU_RUN_FULL=1: full); the figures always at full size.
quick=(--quick)
[[ "${GPU_RUN_FULL:-0}" == 1 ]] && quick=()

export POLYCOMPUTE_REQUIRE=cuda RUST_BACKTRACE=1

if [[ "${GPU_RUN_ASSUME_GPU:-0}" == 1 ]] || [[ -e /dev/nvidia0 ]] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    have_gpu=1
else
    have_gpu=0
fi

# Packs the scratch folder into OUT (the previous archive stays until the new one is whole).
pack() {
    cat "$summary" "$res/failures.txt" >"$out/summary.txt" 2>/dev/null
    tar -czf "$out/gpu-results.part" -C "$scratch" gpu-results 2>/dev/null &&
        mv -f "$out/gpu-results.part" "$out/gpu-results.tar.gz"
}

finish() {
    local rc=$? name
    trap - EXIT TERM INT HUP
    if ((child > 0)); then kill -KILL -- "-$child" "$child" 2>/dev/null; fi
    echo "total ${SECONDS}s of a ${budget}s budget; GPU seen: $have_gpu" >>"$summary"
    # Per failed step: its first lines that name a failure (a test's panic message sits far
    # above libtest's closing lines), then its last lines.
    for name in "${failed_steps[@]}"; do
        echo "--- $name: first failure lines of $name.log"
        grep -m 8 -E "panicked|error|Error|unavailable|not found|FAILED" "$res/$name.log" 2>/dev/null | cut -c1-300
        echo "--- $name: last lines of $name.log"
        tail -n "${GPU_RUN_TAIL:-8}" "$res/$name.log" 2>/dev/null | cut -c1-240
    done >"$res/failures.txt"
    pack
    # The failed steps' log tails first, the table last: the table is what a truncated output
    # (the device tool keeps the last 12,000 characters) must still show.
    cat "$res/failures.txt"
    echo "=== gpu-run summary (all logs: $out/gpu-results.tar.gz)"
    cat "$summary"
    rm -rf "$scratch"
    ((${#failed_steps[@]} == 0)) && exit "$rc"
    exit 1
}
trap finish EXIT
trap 'echo "gpu-run: stopped by a signal after ${SECONDS}s" >>"$summary"; exit 143' TERM INT HUP

record() { # NAME STATUS SECONDS NOTE
    printf '%-26s %-9s %4ss  %s\n' "$1" "$2" "$3" "$4" | tee -a "$summary" >&2
}

# step NAME gpu|any SCALE [json|txt] -- COMMAND...: runs COMMAND in its own process group under
# `timeout -k`, for SCALE tenths of STEP_TIMEOUT (cut to the budget left); stdout to NAME.json
# or NAME.txt when asked, else with stderr to NAME.log.
step() {
    local name="$1" needs="$2" scale="$3" ext="" start rc left limit status
    shift 3
    if [[ "$1" == json || "$1" == txt ]]; then ext="$1"; shift; fi
    [[ "$1" == -- ]] && shift
    # (the environment always runs: every archive carries its environment.txt)
    if [[ -n "${GPU_RUN_STEPS:-}" && " $GPU_RUN_STEPS " != *" $name "* && "$name" != environment ]]; then return; fi
    if [[ "$needs" == gpu && "$have_gpu" == 0 ]]; then record "$name" skipped 0 "no GPU"; return; fi
    left=$((budget - SECONDS - reserve))
    if ((left < min_step)); then record "$name" skipped 0 "time budget spent (${SECONDS}s)"; return; fi
    limit=$((base * scale / 10))
    ((limit > left)) && limit=$left
    ((limit < 1)) && limit=1
    if [[ "${GPU_RUN_HANG:-}" == "$name" ]]; then
        set -- bash -c 'trap "" TERM; echo "simulated hang"; while :; do sleep 1; done'
    fi
    echo "== $name (limit ${limit}s): $*" >&2
    start=$SECONDS
    if [[ -n "$ext" ]]; then
        setsid timeout -k "$kill_after" "$limit" "$@" >"$res/$name.$ext" 2>"$res/$name.log" &
    else
        setsid timeout -k "$kill_after" "$limit" "$@" >"$res/$name.log" 2>&1 &
    fi
    child=$!
    wait "$child"
    rc=$?
    child=0
    case "$rc" in
    0) status=ok ;;
    124 | 137) status=TIMEOUT; failed_steps+=("$name") ;;
    *) status="FAILED"; failed_steps+=("$name") ;;
    esac
    record "$name" "$status" "$((SECONDS - start))" "rc=$rc"
    pack
}

pc="$here/bin/polycompute"
step environment any 5 txt -- bash "$here/gpu-run.sh" --environment
step probe any 5 -- "$pc" probe
step conformance gpu 15 -- "$here/tests/conformance" conformance::cuda
step cuda_gpu gpu 10 -- "$here/tests/cuda_gpu" --nocapture --test-threads=1
step examples gpu 5 -- env POLYCOMPUTE_REQUIRE=cuda "$here/tests/examples" cuda
step cuda_execute_validation gpu 5 -- "$here/tests/cuda_execute_validation" --nocapture
step cuda_gpu_views gpu 10 -- "$here/tests/cuda_gpu_views" --nocapture
step cuda_gpu_sizes gpu 5 -- "$here/tests/cuda_gpu_sizes" --nocapture
step demo_thread gpu 10 json -- "$pc" demo --json --devices cuda:0 --mode thread --tasks 256
step demo_process gpu 10 json -- "$pc" demo --json --devices cuda:0 --mode process --tasks 256
# copy, fused map, sum (GB/s); own/cuBLAS/default matmul (GFLOP/s), each beside its target.
step figures gpu 10 json -- "$here/bin/cuda_figures" --device 0
step bench gpu 10 json -- "$pc" bench --json --device cuda:0 "${quick[@]}"
step bench_matmul_own gpu 10 json -- env POLYCOMPUTE_CUDA_MATMUL=own \
    "$pc" bench --json --device cuda:0 --only matmul_f32_1024 --only matmul_f32_2048 "${quick[@]}"
step bench_matmul_cublas gpu 10 json -- env POLYCOMPUTE_CUDA_MATMUL=cublas \
    "$pc" bench --json --device cuda:0 --only matmul_f32_1024 --only matmul_f32_2048 "${quick[@]}"
# Half precision: the rows this build's bench has of map_axpy_f16 and matmul_bf16_4096
# (cuBLAS GemmEx by default), each beside its f32 row.
step bench_half gpu 10 json -- bash -c 'rows=(); for r in map_axpy_f16 matmul_bf16_4096; do
        "$1" bench --help 2>&1 | grep -q "$r" && rows+=(--only "$r"); done
    ((${#rows[@]})) || { echo "{\"skipped\": \"no half rows in this build'"'"'s bench\"}"; exit 0; }
    exec "$1" bench --json --device cuda:0 "${rows[@]}" --only map_axpy_f32 --only matmul_f32_2048 "${@:2}"' \
    _ "$pc" "${quick[@]}"

if [[ "${GPU_RUN_WGPU:-0}" == 1 ]]; then
    # The device machine's recipe: carried Vulkan/EGL loader packages unpacked into /, then the
    # NVIDIA ICD named explicitly when the loader finds no driver file of its own.
    if [[ "$have_gpu" == 1 && ! "${GPU_RUN_ASSUME_GPU:-0}" == 1 ]] && ! ldconfig -p | grep -q libvulkan.so.1; then
        step wgpu_loader gpu 5 -- bash -c 'shopt -s nullglob; debs=("$1"/gl/*.deb)
            ((${#debs[@]})) || { echo "no Vulkan loader packages in $1/gl (gpu-check.sh carries them)"; exit 1; }
            for f in "${debs[@]}"; do dpkg -x "$f" / || exit; done; ldconfig' _ "$here"
    fi
    icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    if [[ -z "${VK_DRIVER_FILES:-}" && -e "$icd" ]] &&
        ! ls /usr/share/vulkan/icd.d/nvidia* /etc/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
        export VK_DRIVER_FILES="$icd"
        export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    fi
    echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-(unset)}" >>"$res/environment.txt"
    step wgpu_probe gpu 5 -- env POLYCOMPUTE_REQUIRE=wgpu "$pc" probe
    step wgpu_conformance gpu 15 -- env POLYCOMPUTE_REQUIRE=wgpu "$here/tests/conformance" conformance::wgpu
    step wgpu_bench gpu 10 json -- env POLYCOMPUTE_REQUIRE=wgpu "$pc" bench --json --device wgpu:0 "${quick[@]}"
fi
exit 0
