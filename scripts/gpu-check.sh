#!/usr/bin/env bash
# Prepares the GPU run: builds here (no GPU needed) release binaries of the CLI and of the tests
# that need a GPU, with feature cuda (and wgpu when the workspace has it), strips their debug
# info and packs them with scripts/gpu-run.sh into one git-ignored folder (default .gpu-bundle/,
# at most 64 MiB). Copy that folder to a GPU host (x86-64 Linux, NVIDIA driver and CUDA 13.0
# toolkit, no Rust needed) and run `./gpu-run.sh RESULTS_DIR` there.
#
#   scripts/gpu-check.sh [BUNDLE_DIR]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bundle="${1:-$root/.gpu-bundle}"
limit=$((64 * 1024 * 1024))

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
cargo build --release --features "$features" --bin polycompute >&2
cp target/release/polycompute "$bundle/bin/polycompute"
cargo build --release -p polycompute-cuda --example cuda_figures >&2
cp target/release/examples/cuda_figures "$bundle/bin/cuda_figures"
mapfile -t facade < <(test_executables --features "$features" --test conformance)
mapfile -t cuda < <(test_executables -p polycompute-cuda --test gpu --test unavailable --test nvrtc_compile --test fake_driver)
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
{
    echo "polycompute GPU bundle"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
    echo "features: $features"
    echo "run: ./gpu-run.sh RESULTS_DIR"
} >"$bundle/MANIFEST"

for want in bin/polycompute bin/cuda_figures tests/conformance tests/cuda_gpu tests/cuda_unavailable tests/cuda_nvrtc_compile; do
    [[ -x "$bundle/$want" ]] || { echo "gpu-check: $want was not built" >&2; exit 1; }
    # (grep -c reads all of nm's output: grep -q would end nm with SIGPIPE under pipefail)
    if [[ "$(nm "$bundle/$want" 2>/dev/null | grep -c polycompute_cuda)" == 0 ]]; then
        echo "gpu-check: $want does not contain the CUDA backend (built without --features cuda?)" >&2
        exit 1
    fi
done
size=$(du -sb "$bundle" | cut -f1)
echo "gpu-check: $bundle is $((size / 1024 / 1024)) MiB:" >&2
ls -la "$bundle" "$bundle/bin" "$bundle/tests" >&2
if ((size > limit)); then
    echo "gpu-check: the bundle is over 64 MiB" >&2
    exit 1
fi
echo "$bundle"
