#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 660) at low priority, JOBS at a time (default 2),
# from the binaries `cargo +nightly fuzz build -a` made; logs in logs/<target>.log, new inputs
# in corpus/<target>/, findings in artifacts/<target>/. Usage: fuzz/run.sh [SECONDS] [JOBS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-660}"; jobs="${2:-2}"; shift 2 || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(frames to_worker from_worker payload_ref shared_handle segment_header)
bin="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release"
mkdir -p logs
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    while [[ $(jobs -r | wc -l) -ge $jobs ]]; do sleep 5; done
    # -malloc_limit_mb: any single allocation over 128 MiB is a finding (unbounded allocation);
    # -timeout: an input taking over 5 s is a finding (hang).
    nice -n 15 "$bin/$t" "corpus/$t" "seeds/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$secs" -timeout=5 -malloc_limit_mb=128 -rss_limit_mb=2048 \
        -print_final_stats=1 >"logs/$t.log" 2>&1 &
done
wait
