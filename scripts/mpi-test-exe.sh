#!/usr/bin/env bash
# Builds the MPI test (tests/tests/mpi, `--features mpi`) when it is not built yet and prints
# its executable's path: for scripts that launch it (scripts/slurm.sh; a no-op build after
# scripts/mpi.sh). Needs libclang (LIBCLANG_PATH) and an MPI library, as scripts/mpi.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "+ cargo test -p polycompute-conformance --features mpi --test mpi --no-run" >&2
cargo test -p polycompute-conformance --features mpi --test mpi --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi" and m.get("executable"):
        print(m["executable"])'
