#!/usr/bin/env bash
# Prepares the GPU run: builds here (no GPU needed) release binaries of the CLI and of the tests
# that need a GPU, with feature cuda (and wgpu when the workspace has it), strips their debug
# info and packs them with scripts/gpu-run.sh into one git-ignored folder (default .gpu-bundle/,
# at most 64 MiB), with the Vulkan/EGL loader packages the wgpu steps unpack on the GPU machine
# (gl/, the device machine's recipe; skipped with a warning where apt-get cannot fetch them).
# Carry that folder to a GPU host (x86-64 Linux, NVIDIA driver, CUDA 13 NVRTC and cuBLAS from
# a toolkit or the Python wheels; no Rust needed) and run `./gpu-run.sh "$OUT"` there:
# docs/cuda.md gives the exact device call.
#
#   scripts/gpu-check.sh [BUNDLE_DIR]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bundle="${1:-$root/.gpu-bundle}"
limit=$((64 * 1024 * 1024))
target_dir="${CARGO_TARGET_DIR:-$root/target}"

eval "$(scripts/cuda-stub.sh --env)"
features="cuda"
if grep -qE '^wgpu = ' Cargo.toml; then
    features="cuda,wgpu"
fi
echo "gpu-check: building release binaries with --features $features" >&2

# Prints "name<TAB>path" for each test executable cargo builds for the given arguments.
test_executables() {
    cargo test --release --no-run --message-format=json "$@" 2>/dev/null |
        grep '"executable":"' | grep '"kind":\["test"\]' |
        sed -E 's/.*"target":\{[^}]*"name":"([^"]+)".*"executable":"([^"]+)".*/\1\t\2/'
}

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/tests"
# target/ is shared: another build may replace target/release/polycompute with other features,
# so copy it at once (and check below that it has the CUDA backend in it).
cargo build --release -p polycompute-cli --features "$features" --bin polycompute >&2
cp "$target_dir/release/polycompute" "$bundle/bin/polycompute"
cargo build --release -p polycompute-cuda --example cuda_figures >&2
cp "$target_dir/release/examples/cuda_figures" "$bundle/bin/cuda_figures"
mapfile -t facade < <(test_executables -p polycompute-conformance --features "$features" --test conformance --test examples)
# Only what needs the GPU: the CPU-side CUDA checks (the crate's unit tests: NVRTC compiles and
# host emulation; fake_driver, launch_limits, unavailable) already run in CI.
mapfile -t cuda < <(test_executables -p polycompute-cuda --test gpu --test execute_validation --test gpu_views --test gpu_sizes)
for line in "${facade[@]}"; do
    IFS=$'\t' read -r name path <<<"$line"
    cp "$path" "$bundle/tests/$name"
done
for line in "${cuda[@]}"; do
    IFS=$'\t' read -r name path <<<"$line"
    cp "$path" "$bundle/tests/cuda_$name"
done
for f in "$bundle"/bin/* "$bundle"/tests/*; do
    strip --strip-debug "$f" 2>/dev/null || objcopy --strip-debug "$f"
done
cp scripts/gpu-run.sh "$bundle/gpu-run.sh"
chmod +x "$bundle/gpu-run.sh"

# The Vulkan and EGL loaders for the wgpu steps (the device machine has the NVIDIA driver's
# ICD but may lack the loaders), fetched once for amd64 into target/gpu-gl/ and copied in.
gl_cache="$target_dir/gpu-gl"
gl_packages=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
if ! ls "$gl_cache"/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p "$gl_cache/lists/partial"
    o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$gl_cache/lists")
    if ! (timeout 300 apt-get "${o[@]}" update >&2 && cd "$gl_cache" && timeout 300 apt-get "${o[@]}" download "${gl_packages[@]}" >&2); then
        echo "gpu-check: WARNING: could not download the Vulkan loader packages: the wgpu steps will use the GPU host's own loader, if any" >&2
    fi
fi
mkdir -p "$bundle/gl"
cp "$gl_cache"/*.deb "$bundle/gl/" 2>/dev/null || true
{
    echo "polycompute GPU bundle"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
    echo "features: $features"
    echo "run: ./gpu-run.sh \"\$OUT\" (docs/cuda.md)"
} >"$bundle/MANIFEST"

mapfile -t wanted < <(scripts/gpu-run.sh --list)
for want in "${wanted[@]}"; do
    [[ -x "$bundle/$want" ]] || { echo "gpu-check: $want was not built" >&2; exit 1; }
    # (grep -c reads all of nm's output: grep -q would end nm with SIGPIPE under pipefail)
    if [[ "$(nm "$bundle/$want" 2>/dev/null | grep -c polycompute_cuda)" == 0 ]]; then
        echo "gpu-check: $want does not contain the CUDA backend (built without --features cuda?)" >&2
        exit 1
    fi
done
size=$(du -sb "$bundle" | cut -f1)
echo "gpu-check: $bundle is $((size / 1024 / 1024)) MiB:" >&2
ls -la "$bundle" "$bundle/bin" "$bundle/tests" "$bundle/gl" >&2
if ((size > limit)); then
    echo "gpu-check: the bundle is over 64 MiB" >&2
    exit 1
fi
echo "$bundle"
