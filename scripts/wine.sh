#!/usr/bin/env bash
# Runs the CPU build's tests for Windows (x86_64-pc-windows-gnu) under Wine: the core and CPU
# backend unit tests, the CPU conformance suite, the API and bad-input tests, and the pool's
# test binary (thread and process workers, shared arrays included). Idempotent: installs what
# is missing (wine, wine64, MinGW; the rustup target), makes a private Wine prefix under the
# target dir once, and reuses both afterwards. Needs root (or sudo) and apt for the install.
#
# Wine 8 workaround: Wine 8.0 (Debian 12) has no bcryptprimitives.dll, whose ProcessPrng the
# Rust standard library needs (every program exits with code 53 without it). When Wine lacks
# it, scripts/wine/bcryptprimitives.c is built with MinGW into the prefix. Wine 9 has it.
#
# Where Wine differs from Windows, the test shows the difference and checks the rest
# (docs/windows.md lists them); the conformance goldens are Linux's (see below).
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-pc-windows-gnu
run() {
    echo "+ $*"
    "$@"
}

sudo=""
[[ $(id -u) == 0 ]] || sudo="sudo"
missing=()
dpkg-query -W -f='${Status}' wine 2>/dev/null | grep -q "ok installed" || missing+=(wine)
dpkg-query -W -f='${Status}' wine64 2>/dev/null | grep -q "ok installed" || missing+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
if ((${#missing[@]})); then
    run $sudo timeout -k 10 300 apt-get -o DPkg::Lock::Timeout=120 update -qq
    DEBIAN_FRONTEND=noninteractive run $sudo timeout -k 10 600 apt-get -o DPkg::Lock::Timeout=120 \
        install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! rustup target list --installed | grep -qx "$target"; then
    run timeout -k 10 300 rustup target add "$target"
fi

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
export WINEPREFIX="$target_dir/wine-prefix"
# No display, no debug chatter, no offer to install Mono or Gecko.
export WINEDEBUG=-all DISPLAY="" WINEDLLOVERRIDES="mscoree,mshtml="
if [[ ! -f "$WINEPREFIX/system.reg" ]]; then
    mkdir -p "$WINEPREFIX"
    run timeout -k 10 120 wineboot --init
    run timeout -k 10 60 wineserver -w
fi
system32="$WINEPREFIX/drive_c/windows/system32"
stand_in="$system32/bcryptprimitives.dll"
if ! compgen -G "/usr/lib/*/wine/x86_64-windows/bcryptprimitives.dll" >/dev/null \
    && [[ ! "$stand_in" -nt scripts/wine/bcryptprimitives.c ]]; then
    run timeout -k 10 60 x86_64-w64-mingw32-gcc -O2 -shared -s -o "$stand_in" \
        scripts/wine/bcryptprimitives.c -ladvapi32
fi

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
# Wine passes this environment on: the Windows build is the CPU build, with no GPU backend for
# scripts/test.sh's POLYCOMPUTE_REQUIRE=wgpu to require, and no device or worker override.
unset POLYCOMPUTE_REQUIRE POLYCOMPUTE_BACKEND POLYCOMPUTE_WORKERS
# Build first (its own time limit), then run each binary under a limit of its own.
cargo_test() {
    run timeout -k 10 "$1" cargo test --target "$target" "${@:2}"
}
cargo_test 900 --no-run -p polycompute-core -p polycompute-pool -p polycompute-cpu --lib
cargo_test 900 --no-run -p polycompute-conformance --test conformance --test api --test bad_input --test pool
cargo_test 300 -p polycompute-core -p polycompute-pool -p polycompute-cpu --lib
cargo_test 300 -p polycompute-conformance --test api --test bad_input
# Every case's device-against-reference comparison runs; the golden snapshots do not: they
# pin the f64 reference as Linux computes it, and the reference's sin/exp/pow come from the
# platform's C library, whose last bits differ on Windows (Linux's run checks the goldens).
cargo_test 300 -p polycompute-conformance --test conformance -- --skip conformance::golden::
cargo_test 600 -p polycompute-conformance --test pool
run timeout -k 10 60 wineserver -k || true
echo "scripts/wine.sh: the Windows tests passed under Wine"
