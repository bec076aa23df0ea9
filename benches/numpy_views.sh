#!/usr/bin/env bash
# polycompute's CPU sort, argsort, cumsum, take, concat and step-2 map beside numpy's,
# in one command (2^24 f32 elements).
#
#   benches/numpy_views.sh [--check]     (--check: exit 1 when a target is missed)
#
# Creates benches/.venv (git-ignored) and installs numpy there from PyPI, builds the release
# binary, then runs numpy and `polycompute bench --json` side by side (numpy_views.py).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=benches/.venv
if [ ! -x "$venv/bin/python" ]; then
    echo "+ python3 -m venv $venv"
    python3 -m venv "$venv"
fi
echo "+ $venv/bin/pip install numpy threadpoolctl"
"$venv/bin/python" -m pip install --quiet numpy threadpoolctl

echo "+ cargo build --release --bin polycompute"
cargo build --release --bin polycompute

# This machine may pin OpenBLAS to a core type or cache size; numpy gets its own defaults,
# as on any other machine. Unset for this command only.
echo "+ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $venv/bin/python benches/numpy_views.py $*"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$venv/bin/python" benches/numpy_views.py \
    --polycompute "${CARGO_TARGET_DIR:-target}/release/polycompute" "$@"
