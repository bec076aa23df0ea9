#!/usr/bin/env bash
# CI for the downstream example (examples/downstream/, a project that depends on polycompute
# by path and tests its own pipeline with `polycompute::testing`), run the way a user's CI
# would. Each step here is a step of the CI template in docs/testing.md, so it cannot rot:
#
#   1. CPU only:          cargo test
#   2. wgpu on lavapipe:  POLYCOMPUTE_REQUIRE=wgpu cargo test --features wgpu
#   3. --features cuda without CUDA: install the polycompute CLI, then with nothing but
#      `eval "$(polycompute cuda-stub)"` in a clean environment, cargo build + test
#      --features cuda (the CUDA tests skip visibly: there is no driver).
#   (4. the self-hosted GPU job is `POLYCOMPUTE_REQUIRE=cuda cargo test --features cuda`: it
#      needs a GPU, so scripts/gpu-check.sh covers our own suite on one instead.)
#
# Idempotent. Needs what scripts/test.sh sets up (Rust, a C compiler, lavapipe); reuses the
# workspace's build (run it after the workspace's tests, as scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
# The downstream project builds into the workspace's target folder: its dependencies are the
# same crates at the same versions (its Cargo.lock), so nothing is compiled twice.
export CARGO_TARGET_DIR="$target"

run() {
    echo "+ $*"
    "$@"
}

# Its Cargo.lock pins what the workspace's pins; cargo adds what the workspace has added since.
cd examples/downstream

# 1. CPU only. POLYCOMPUTE_REQUIRE is cleared: test.sh's "wgpu" must not apply here.
run env -u POLYCOMPUTE_REQUIRE cargo test

# 2. wgpu on Mesa's software Vulkan (scripts/setup-lavapipe.sh installed it): a required
#    backend, so a missing adapter fails instead of skipping.
run env POLYCOMPUTE_REQUIRE=wgpu cargo test --features wgpu

# 3. The polycompute CLI as a user installs it (`cargo install polycompute-cli`; here from this
#    checkout), built without the cuda feature: it needs no CUDA.
tools="$target/downstream-tools"
run cargo install --quiet --locked --debug --path "$root/cli" --root "$tools" --target-dir "$target"
# A clean environment: no CUDA_LIBRARY_PATH or LD_LIBRARY_PATH from our own stub. The stub goes
# to a folder of its own, so cust's build script (which reruns when CUDA_LIBRARY_PATH changes)
# links against what the documented command made, and nothing else; the rest of the build is
# shared with the workspace's.
stub="$target/downstream-cuda-stub"
clean=(env -u CUDA_LIBRARY_PATH -u CUDA_PATH -u CUDA_ROOT -u CUDA_TOOLKIT_ROOT_DIR -u LD_LIBRARY_PATH
    -u POLYCOMPUTE_REQUIRE "PATH=$tools/bin:$PATH" "STUB=$stub")
echo "+ ${clean[*]} bash -c 'eval \"\$(polycompute cuda-stub \$STUB)\" && cargo test --features cuda'"
"${clean[@]}" bash -euo pipefail -c '
    eval "$(polycompute cuda-stub "$STUB")"
    env | grep -E "^(CUDA_LIBRARY_PATH|LD_LIBRARY_PATH)=" | sed "s/^/  from cuda-stub: /"
    cargo test --features cuda
'
echo "scripts/downstream.sh: the downstream example passed on cpu, on wgpu and built with --features cuda"
