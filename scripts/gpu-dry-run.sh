#!/usr/bin/env bash
# The GPU bundle's dry run, on a machine without a GPU (CI): runs scripts/gpu-run.sh from a
# bundle of fake executables (one per file `gpu-run.sh --list` names) with a fake $OUT, and
# checks the mechanics the one real GPU run depends on: the results come back as at most 8
# files (one archive and the summary) even when a step fails, hangs (ignoring TERM), the time
# budget runs out, or the run is stopped by a signal; the summary is printed (per step status
# and seconds, the failed steps' log tails); the run ends within its budget; no step is left
# running; without a GPU the GPU steps are skipped as "no GPU". Takes about 25 s.
#
#   scripts/gpu-dry-run.sh [BUNDLE_DIR]   (default: a fake bundle; a real one from gpu-check.sh
#                                          also works: without a GPU its GPU steps are skipped)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/gpu-dry-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
    echo "gpu-dry-run: FAILED: $*" >&2
    failures=$((failures + 1))
}

# The bundle: a real one, or fakes that print their arguments and fail when FAKE_FAIL names them.
bundle="$work/bundle"
if [[ -n "${1:-}" ]]; then
    cp -r "$1" "$bundle"
    fake=0
else
    mkdir -p "$bundle"
    cp "$root/scripts/gpu-run.sh" "$bundle/gpu-run.sh"
    echo "polycompute GPU bundle (fake, for the dry run)" >"$bundle/MANIFEST"
    while read -r file; do
        mkdir -p "$bundle/$(dirname "$file")"
        printf '#!/bin/sh\necho "fake %s $*"\nif [ "$FAKE_FAIL" = "%s" ]; then echo "line one of the failure"; echo "boom: the last line"; exit 3; fi\n' \
            "$file" "$file" >"$bundle/$file"
        chmod +x "$bundle/$file"
    done < <("$bundle/gpu-run.sh" --list)
    fake=1
fi

# run NAME [ENV=VALUE...]: runs the bundle's script with a fresh fake $OUT, under an outer
# bound; sets rc, took (seconds), out, text (stdout).
run() {
    local name="$1" start
    shift
    out="$work/$name/out"
    mkdir -p "$out"
    start=$(date +%s)
    set +e
    env "$@" OUT="$out" timeout -k 5 120 "$bundle/gpu-run.sh" >"$work/$name/stdout" 2>"$work/$name/stderr"
    rc=$?
    set -e
    took=$(($(date +%s) - start))
    text="$(cat "$work/$name/stdout")"
    echo "gpu-dry-run: $name: rc=$rc in ${took}s" >&2
}

# What the device tool can bring back: at most 8 files, at most 2 folders down, plain names.
check_out() {
    local name="$1" n bad
    n=$(find "$out" -type f | wc -l)
    ((n >= 1 && n <= 8)) || fail "$name: $n files in \$OUT (1 to 8 expected)"
    bad=$(find "$out" -mindepth 1 | sed "s|^$out/||" | grep -Ev '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+){0,2}$' || true)
    [[ -z "$bad" ]] || fail "$name: names or depths the device tool would not bring back: $bad"
    [[ -s "$out/gpu-results.tar.gz" ]] || { fail "$name: no gpu-results.tar.gz in \$OUT"; return; }
    [[ -s "$out/summary.txt" ]] || fail "$name: no summary.txt in \$OUT"
    tar -xzf "$out/gpu-results.tar.gz" -C "$work/$name" || fail "$name: the archive does not unpack"
    [[ -s "$work/$name/gpu-results/summary.txt" ]] || fail "$name: the archive has no summary.txt"
    [[ -s "$work/$name/gpu-results/environment.txt" ]] || fail "$name: the archive has no environment.txt"
}

expect() { # NAME PATTERN WHAT: the printed summary must match PATTERN (extended regex)
    grep -Eq -- "$2" <<<"$text" || fail "$1: the summary lacks $3 (/$2/); it was:"$'\n'"$text"
}

# 1. A failing step, a hang that ignores TERM, and a budget that runs out, on an assumed GPU.
#    Budget 26 s with 10 s kept for packing: the hang's limit is cut to what is left, the steps
#    after it are skipped for time, and the whole run ends within the budget.
if ((fake)); then
    run hang GPU_RUN_ASSUME_GPU=1 GPU_RUN_BUDGET=26 STEP_TIMEOUT=60 GPU_RUN_MIN_STEP=3 GPU_RUN_KILL_AFTER=1 \
        GPU_RUN_HANG=conformance FAKE_FAIL=bin/polycompute
    ((rc == 1)) || fail "hang: exit status $rc (1 expected: steps failed)"
    ((took <= 26)) || fail "hang: took ${took}s, over its 26 s budget"
    check_out hang
    expect hang '^probe +FAILED' "the failed probe"
    expect hang '^conformance +TIMEOUT' "the hung conformance step as TIMEOUT"
    expect hang '^cuda_gpu +skipped .*time budget' "the steps after the hang skipped for time"
    expect hang '^--- probe: last lines of probe.log' "the failed step's log tail"
    expect hang 'boom: the last line' "the failed step's last log line"
    expect hang 'simulated hang' "the hung step's log tail"
    expect hang '^total [0-9]+s of a 26s budget' "the total time"
    grep -q '== os-release' "$work/hang/gpu-results/environment.txt" || fail "hang: environment.txt lacks the OS release"
    grep -q '== glibc' "$work/hang/gpu-results/environment.txt" || fail "hang: environment.txt lacks glibc"
    if pgrep -f 'echo "simulated hang"' >/dev/null; then fail "hang: the hung step is still running"; fi

    # 2. Everything passes (the wgpu set too): exit 0, every step ok.
    run pass GPU_RUN_ASSUME_GPU=1 GPU_RUN_WGPU=1 GPU_RUN_BUDGET=60 STEP_TIMEOUT=20
    ((rc == 0)) || fail "pass: exit status $rc (0 expected)"
    check_out pass
    for s in environment probe conformance cuda_gpu cuda_execute_validation demo_thread demo_process figures \
        bench bench_matmul_own bench_matmul_cublas wgpu_probe wgpu_conformance wgpu_bench; do
        expect pass "^$s +ok " "step $s ok"
    done
    [[ -s "$work/pass/gpu-results/figures.json" ]] || fail "pass: the archive has no figures.json"

    # A rerun of chosen steps: those, and the environment.
    run rerun GPU_RUN_ASSUME_GPU=1 GPU_RUN_STEPS="figures bench" GPU_RUN_BUDGET=60 STEP_TIMEOUT=20
    check_out rerun
    [[ "$(grep -cE '^[a-z_]+ +(ok|FAILED|TIMEOUT|skipped) ' "$work/rerun/gpu-results/summary.txt")" == 3 ]] ||
        fail "rerun: not exactly environment, figures and bench ran: $(cat "$work/rerun/gpu-results/summary.txt")"
    expect rerun '^figures +ok ' "the chosen step"

    # 3. Stopped by a signal mid-step (as a limit would stop it): it ends at once, with results.
    mkdir -p "$work/term/out"
    out="$work/term/out"
    GPU_RUN_ASSUME_GPU=1 GPU_RUN_HANG=cuda_gpu STEP_TIMEOUT=60 OUT="$out" \
        "$bundle/gpu-run.sh" >"$work/term/stdout" 2>/dev/null &
    pid=$!
    for _ in $(seq 50); do grep -q '^conformance' "$out/summary.txt" 2>/dev/null && break; sleep 0.2; done
    sleep 1
    kill -TERM "$pid"
    start=$(date +%s)
    wait "$pid" && rc=0 || rc=$?
    ((rc != 0)) || fail "term: exit status 0 after TERM"
    (($(date +%s) - start <= 3)) || fail "term: took over 3 s to end after TERM"
    text="$(cat "$work/term/stdout")"
    check_out term
    expect term 'stopped by a signal' "the signal"
    expect term '^conformance +ok' "the steps done before the signal"
    if pgrep -f 'echo "simulated hang"' >/dev/null; then fail "term: the hung step is still running"; fi
fi

# 4. No GPU here: the GPU steps are skipped as "no GPU"; environment and probe still run.
if [[ -e /dev/nvidia0 ]] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "gpu-dry-run: NOT CHECKED: a GPU is present, so the no-GPU skips cannot be seen" >&2
else
    run nogpu GPU_RUN_BUDGET=120 STEP_TIMEOUT=30
    check_out nogpu
    expect nogpu '^environment +ok' "the environment step"
    expect nogpu '^conformance +skipped .*no GPU' "conformance skipped as no GPU"
    expect nogpu '^bench_matmul_cublas +skipped .*no GPU' "the last step skipped as no GPU"
    ((took <= 60)) || fail "nogpu: took ${took}s"
fi

if ((failures)); then
    echo "gpu-dry-run: $failures check(s) failed" >&2
    exit 1
fi
echo "gpu-dry-run: the bundle's run script returns its results within its limits"
