#!/usr/bin/env bash
# A user's first snapshot run, the sequence docs/testing.md ("The first run") gives, on a tiny
# project with one `backend_tests!(f, snapshot)`:
#
#   0. before any snapshot exists, the enforced run (CI) fails: a snapshot not committed is
#      not silently created in CI;
#   1. `INSTA_UPDATE=always cargo test` creates tests/snapshots/<test>__<f>__<f>.snap;
#   2. it is committed (git);
#   3. `CI=true INSTA_UPDATE=no cargo test` passes and writes nothing;
#   4. a changed value fails the enforced run, which still writes nothing.
#
# Idempotent (the project is made afresh under target/first-snapshot/). CPU only; reuses the
# workspace's build: the project depends on this checkout by path with the features the
# downstream example's tests use, and pins the downstream example's Cargo.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TARGET_DIR="$target"
work="$target/first-snapshot"

run() {
    echo "+ $*"
    "$@"
}
fail() {
    echo "scripts/first-snapshot.sh: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work/src" "$work/tests"
cp examples/downstream/Cargo.lock "$work/"
cat >"$work/Cargo.toml" <<EOF
[package]
name = "first-snapshot"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
polycompute = { path = "$root" }

[dev-dependencies]
polycompute = { path = "$root", features = ["testing"] }

[workspace]
EOF
cat >"$work/src/lib.rs" <<'EOF'
//! The project's pipeline: a scaled ramp.

use polycompute::{Device, DeviceArray, Result};

/// How much the ramp is scaled by.
pub const FACTOR: f32 = 2.0;

/// `FACTOR * [0, 1, ..., 7]` on `dev`.
pub fn scaled_ramp(dev: &Device) -> Result<DeviceArray<f32>> {
    dev.arange(0.0f32, 8.0, 1.0)?.map(|x| x * FACTOR)
}
EOF
cat >"$work/tests/ramp.rs" <<'EOF'
//! One test per backend and one snapshot shared by them.

use polycompute::testing::backend_tests;

backend_tests!(scaled_ramp, snapshot);

fn scaled_ramp(dev: &polycompute::Device) -> polycompute::Result<polycompute::DeviceArray<f32>> {
    first_snapshot::scaled_ramp(dev)
}
EOF
cd "$work"
snap=tests/snapshots/ramp__scaled_ramp__scaled_ramp.snap
# Every run is the CPU's alone (`env -u POLYCOMPUTE_REQUIRE`): test.sh's wgpu requirement is
# not this project's.

# 0. Nothing committed yet: CI must fail, not create the snapshot.
echo "+ CI=true INSTA_UPDATE=no cargo test   # no snapshot yet: must fail"
if env -u POLYCOMPUTE_REQUIRE CI=true INSTA_UPDATE=no cargo test --quiet >enforced-missing.log 2>&1; then
    cat enforced-missing.log
    fail "the enforced run passed without a snapshot"
fi
grep -q "snapshot assertion for 'scaled_ramp' failed" enforced-missing.log ||
    { cat enforced-missing.log; fail "the enforced run failed, but not on the missing snapshot"; }
[[ ! -e tests/snapshots ]] || fail "the enforced run wrote $(ls tests/snapshots)"

# 1. The first run creates the snapshot.
run env -u POLYCOMPUTE_REQUIRE -u CI INSTA_UPDATE=always cargo test --quiet
[[ -f "$snap" ]] || fail "INSTA_UPDATE=always did not create $snap (tests/snapshots: $(ls tests/snapshots 2>&1))"
echo "+ cat $snap"
cat "$snap"

# 2. It is committed with the project.
run git init --quiet
run git add Cargo.toml Cargo.lock src tests
run git -c user.name=first-snapshot -c user.email=first-snapshot@localhost commit --quiet -m "the first snapshot"

# 3. CI enforces it: passes, and writes nothing.
run env -u POLYCOMPUTE_REQUIRE CI=true INSTA_UPDATE=no cargo test --quiet
[[ -z "$(git status --porcelain --untracked-files=all -- tests)" ]] || fail "the enforced run wrote: $(git status --porcelain -- tests)"

# 4. A changed value fails the enforced run, with nothing written.
run sed -i 's/^pub const FACTOR: f32 = 2.0;/pub const FACTOR: f32 = 3.0;/' src/lib.rs
git diff --quiet -- src/lib.rs && fail "the value was not changed"
echo "+ CI=true INSTA_UPDATE=no cargo test   # a changed value: must fail"
if env -u POLYCOMPUTE_REQUIRE CI=true INSTA_UPDATE=no cargo test --quiet >enforced-changed.log 2>&1; then
    cat enforced-changed.log
    fail "the enforced run passed with a changed value"
fi
grep -q 'check "scaled_ramp": cpu:0 disagrees with the snapshot' enforced-changed.log ||
    { cat enforced-changed.log; fail "the enforced run failed, but not on the changed value"; }
[[ -z "$(git status --porcelain --untracked-files=all -- tests)" ]] || fail "the failing enforced run wrote: $(git status --porcelain -- tests)"
echo "scripts/first-snapshot.sh: created with INSTA_UPDATE=always, committed, enforced with CI=true INSTA_UPDATE=no (a missing snapshot and a changed value fail)"
