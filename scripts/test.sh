#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this). Idempotent; needs a Rust
# toolchain (rustup), gcc and python3. Prints each command before running it.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
    echo "+ $*"
    "$@"
}

# rustfmt and clippy are rustup components a minimal toolchain may lack.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    run rustup component add rustfmt clippy
fi

# The workspace has the CUDA backend, whose driver crate (cust) links libcuda at build time:
# without a CUDA toolkit, build against the repository's link stub (see docs/cuda.md).
echo "+ eval \"\$(scripts/cuda-stub.sh --env)\""
eval "$(scripts/cuda-stub.sh --env)"

run cargo fmt --all -- --check
run cargo clippy --workspace --all-targets -- -D warnings
run cargo test --workspace

# The README's example must be examples/quickstart.rs word for word (which the build checks).
echo "+ diff <README.md's rust block> examples/quickstart.rs"
diff <(awk '/^```rust$/ {on = 1; next} /^```$/ && on {exit} on' README.md) examples/quickstart.rs
run cargo run --quiet --example quickstart

# --- wgpu step: added by the lead (Mesa lavapipe via scripts/setup-lavapipe.sh, then the
# --- tests with `--features wgpu` and POLYCOMPUTE_REQUIRE=wgpu). Not here yet.

# --- cuda step: added by the lead. Not here yet.

echo "scripts/test.sh: all steps passed"
