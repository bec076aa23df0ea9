#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this). Idempotent; needs a Rust
# toolchain (rustup), gcc and python3. Prints each command before running it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each `run` is a step: its time is recorded, and the table of step times is printed at the end,
# also when a step fails (with the target folder's size, the other number CI must keep within
# bounds: 25 minutes and 15 GB from a clean clone).
step_names=()
step_secs=()
step_sizes=()
# Nothing before the first build makes target/: then the size is empty, and not a failure
# (under set -e and pipefail, a failing du would end the run).
target_size() {
    du -sh "${CARGO_TARGET_DIR:-target}" 2>/dev/null | cut -f1 || true
}
run() {
    echo "+ $*"
    local t0=$SECONDS rc=0
    "$@" || rc=$?
    step_names+=("$*")
    step_secs+=($((SECONDS - t0)))
    step_sizes+=("$(target_size)")
    return "$rc"
}
# CI (.ci/run sets POLYCOMPUTE_CI_PRUNE=1) removes what a step built that no later step reads,
# so that the target folder's peak stays within bounds; a developer's run keeps it all for the
# next incremental run.
prune() {
    [[ "${POLYCOMPUTE_CI_PRUNE:-}" == 1 ]] || return 0
    echo "+ rm -rf $* (no later step reads it)"
    rm -rf "$@"
}
summary() {
    local i steps=0
    echo "+ du -sh target"
    du -sh "${CARGO_TARGET_DIR:-target}" || true
    echo "step times (and target/'s size after each):"
    for i in "${!step_names[@]}"; do
        printf '  %3dm%02ds  %5s  %s\n' $((step_secs[i] / 60)) $((step_secs[i] % 60)) "${step_sizes[i]}" "${step_names[i]:0:100}"
        steps=$((steps + step_secs[i]))
    done
    printf '  %3dm%02ds  %5s  %s\n' $(((SECONDS - steps) / 60)) $(((SECONDS - steps) % 60)) "" "the rest (setup, README diffs)"
    printf '  %3dm%02ds  %5s  %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "" "total"
}
trap summary EXIT

# The build needs disk (about 10 GB for target/ from a clean clone): say what there is, so that
# a linker killed by a full disk (SIGBUS) is recognised as that.
echo "+ df -h ."
df -h . || true

# rustfmt and clippy are rustup components a minimal toolchain may lack.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    run rustup component add rustfmt clippy
fi

# wgpu runs here on Mesa's software Vulkan (lavapipe): install it when it is missing.
run scripts/setup-lavapipe.sh
# Mesa's GL driver (the second wgpu adapter) complains on every probe without a runtime dir.
if [[ -z "${XDG_RUNTIME_DIR:-}" || ! -d "${XDG_RUNTIME_DIR:-}" ]]; then
    XDG_RUNTIME_DIR="$(mktemp -d)"
    export XDG_RUNTIME_DIR
fi

# The workspace has the CUDA backend, whose driver crate (cust) links libcuda at build time:
# without a CUDA toolkit, build against the repository's link stub (see docs/cuda.md).
echo "+ eval \"\$(scripts/cuda-stub.sh --env)\""
eval "$(scripts/cuda-stub.sh --env)"

# NVRTC needs no GPU: every generated CUDA kernel is compiled for sm_80 and sm_90 by the
# pinned wheel from PyPI; a missing library fails the check instead of skipping it.
echo "+ export POLYCOMPUTE_NVRTC_LIB=\"\$(scripts/nvrtc-wheel.sh)\""
POLYCOMPUTE_NVRTC_LIB="$(scripts/nvrtc-wheel.sh)"
export POLYCOMPUTE_NVRTC_LIB POLYCOMPUTE_REQUIRE_NVRTC=1

run scripts/mpi.sh # MPI + libclang (before --all-features builds), the pool on 4 and 2 MPI ranks (~1 min)
run scripts/slurm.sh # the MPI test under a one-node Slurm on loopback: srun --mpi=pmix, sbatch --wait, a killed rank (~1 min)
run cargo fmt --all -- --check
run cargo clippy --workspace --all-targets --all-features -- -D warnings
# The API docs build without a warning (broken intra-doc links included).
RUSTDOCFLAGS="-D warnings" run cargo doc --workspace --no-deps --all-features

# The workspace's rust-version is a promise: build everything with exactly that toolchain
# (rustup fetches it once, minimal profile). clippy's incompatible_msrv lint above checks the
# standard-library API we use against the same number.
msrv="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)"
if rustup toolchain list | grep -q "^$msrv[-.]" || timeout 300 rustup toolchain install "$msrv" --profile minimal; then
    run cargo "+$msrv" check --workspace --all-targets --all-features
else
    echo "scripts/test.sh: NOT CHECKED: rustup could not install Rust $msrv (the workspace's rust-version)"
fi

# Default features: the CPU-only build that any machine with just Rust gets.
run cargo test -p polycompute -p polycompute-core -p polycompute-pool -p polycompute-cpu -p polycompute-testing \
    -p polycompute-conformance -p polycompute-cli

# Everything compiled in. wgpu must really run (lavapipe is there), so a missing adapter is a
# failure, not a skip; CUDA has no driver here and reports itself unavailable.
export POLYCOMPUTE_REQUIRE=wgpu
run cargo test --workspace --all-features

# The per-OS code (worker start, parent-death detection, shared memory, the socket) must at
# least compile for macOS and Windows: `cargo check` of the CPU build for each, with the
# target's standard library from rustup. A machine whose rustup cannot fetch it says so.
for target in aarch64-apple-darwin x86_64-pc-windows-gnu; do
    if rustup target list --installed | grep -qx "$target" || timeout 300 rustup target add "$target"; then
        run cargo check -p polycompute -p polycompute-core -p polycompute-pool -p polycompute-cpu --target "$target"
    else
        echo "scripts/test.sh: NOT CHECKED: rustup could not install the $target standard library"
    fi
done

# The README's example must be examples/quickstart.rs word for word (which the build checks).
echo "+ diff <README.md's rust block> examples/quickstart.rs"
diff <(awk '/^```rust$/ {on = 1; next} /^```$/ && on {exit} on' README.md) examples/quickstart.rs
run cargo run --quiet --example quickstart
# The README's array tour must be examples/arrays.rs word for word.
echo "+ diff <README.md's Arrays rust block> examples/arrays.rs"
diff <(awk '/^## Arrays/ {sec = 1} sec && /^```rust$/ {on = 1; next} /^```$/ && on {exit} on' README.md) examples/arrays.rs
run cargo run --quiet --example arrays

run scripts/wine.sh # the CPU build for Windows under Wine: unit, API, conformance, pool tests (~5-6 min)
prune "${CARGO_TARGET_DIR:-target}/x86_64-pc-windows-gnu" "${CARGO_TARGET_DIR:-target}/wine-prefix"
run scripts/gpu-dry-run.sh # the GPU bundle's run script without a GPU: results back, steps bounded (~25 s)
# A user's project (examples/downstream/) as docs/testing.md's CI template runs it: cpu, wgpu, cuda stub.
run scripts/downstream.sh
run scripts/package.sh # every crate packaged, a local registry of them, the CLI installed and the downstream example built from it
prune "${CARGO_TARGET_DIR:-target}/package" "${CARGO_TARGET_DIR:-target}/local-registry"
run scripts/first-snapshot.sh # docs/testing.md's first snapshot run: created, committed, then enforced
run scripts/fuzz-replay.sh

trap - EXIT
summary
echo "scripts/test.sh: all steps passed"
