#!/usr/bin/env bash
# Every row of `polycompute bench --device cpu:0` beside numpy's equivalent, interleaved, in
# one command (numpy_bench.py says how).
#
#   benches/numpy_bench.sh [--rounds N] [--only ROW ...] [--quick] [--check]
#
# Creates benches/.venv (git-ignored) and installs numpy and threadpoolctl there from PyPI
# when missing, builds the release binary, then runs numpy_bench.py.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=benches/.venv
if [ ! -x "$venv/bin/python" ]; then
    echo "+ python3 -m venv $venv"
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import numpy, threadpoolctl" 2>/dev/null; then
    echo "+ $venv/bin/pip install numpy threadpoolctl"
    "$venv/bin/python" -m pip install --quiet numpy threadpoolctl
fi

echo "+ cargo build --release --bin polycompute"
cargo build --release --bin polycompute
# A private copy: a target directory shared with other worktrees may get another build of
# the binary while the rounds run.
bin="$(mktemp -d)/polycompute"
cp "${CARGO_TARGET_DIR:-target}/release/polycompute" "$bin"

# This machine pins OpenBLAS to a core type and cache size (OPENBLAS_CORETYPE,
# OPENBLAS_L2_SIZE), which slows current numpy; numpy gets OpenBLAS's own detection, as on
# any other machine. Unset for this command only.
echo "+ env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $venv/bin/python benches/numpy_bench.py $*"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$venv/bin/python" benches/numpy_bench.py \
    --polycompute "$bin" "$@"
