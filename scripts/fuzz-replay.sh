#!/usr/bin/env bash
# The short fuzz step of CI (seconds): every checked-in seed and regression input under
# fuzz/ (seeds/, regressions/) through every decoder that reads another process's bytes,
# then POLYCOMPUTE_FUZZ_CASES (default 50000) fixed-seed mutations of them per decoder.
# The long runs are cargo-fuzz's (fuzz/README.md); this replays what they found and keeps
# the decoders honest on a plain stable toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
export POLYCOMPUTE_FUZZ_CASES="${POLYCOMPUTE_FUZZ_CASES:-50000}"
echo "+ POLYCOMPUTE_FUZZ_CASES=$POLYCOMPUTE_FUZZ_CASES cargo test -p polycompute-pool --lib fuzzing::"
cargo test -p polycompute-pool --lib fuzzing::
