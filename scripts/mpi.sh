#!/usr/bin/env bash
# CI for the pool on MPI worker ranks (feature `mpi`, issue 16): installs Open MPI and
# libclang (the `mpi` crate's bindgen) when missing, builds the MPI test with
# `--features mpi`, and runs it under mpirun on 4 and on 2 ranks (the same seed must give
# the same outputs: the digests are compared) and once without a launcher (the local plan).
#
# All MPI traffic stays on this machine: shared memory only (`--mca pml ob1 --mca btl
# self,vader`: no UCX, no TCP between ranks) and Open MPI's own out-of-band channel pinned to
# loopback. Idempotent; run as root in CI (mpirun then needs --allow-run-as-root).
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
    echo "+ $*"
    "$@"
}

packages=(openmpi-bin libopenmpi-dev libclang1-14 libclang-common-14-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    run apt-get update -qq
    DEBIAN_FRONTEND=noninteractive run apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# bindgen finds libclang here when no libclang.so is on the default path.
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}"

# Loopback only, and asserted: Open MPI's TCP skips 127.0.0.0/8 unless told otherwise and
# would pick the machine's external address.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
[[ "$OMPI_MCA_btl_tcp_if_include" == lo && "$OMPI_MCA_oob_tcp_if_include" == lo ]] || {
    echo "scripts/mpi.sh: MPI traffic must be pinned to loopback" >&2
    exit 1
}

echo "+ cargo test -p polycompute --features mpi --test mpi --no-run"
exe="$(cargo test -p polycompute --features mpi --test mpi --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi" and m.get("executable"):
        print(m["executable"])')"
[[ -x "$exe" ]] || { echo "scripts/mpi.sh: the MPI test did not build" >&2; exit 1; }

# Without a launcher: the local plan, as without the feature.
run timeout -k 5 60 "$exe"

mpi() {
    local n=$1
    shift
    run timeout -k 10 180 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader -n "$n" "$@"
}
out4="$(mpi 4 "$exe" | tee /dev/stderr)"
out2="$(mpi 2 "$exe" | tee /dev/stderr)"
d4="$(grep '^DIGEST ' <<<"$out4")"
d2="$(grep '^DIGEST ' <<<"$out2")"
if [[ -z "$d4" || "$d4" != "$d2" ]]; then
    echo "scripts/mpi.sh: 4 ranks gave '$d4', 2 ranks '$d2': the same seed must give the same outputs" >&2
    exit 1
fi
# A worker rank SIGKILLed mid-run: with a default launcher the whole job must fail, quickly
# (not hang until the timeout, 124/137).
echo "+ MPI_DIE=1 mpirun -n 3 $exe (must fail within seconds)"
set +e
start=$SECONDS
MPI_DIE=1 timeout -k 10 60 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader -x MPI_DIE -n 3 "$exe" >/dev/null 2>&1
rc=$?
took=$((SECONDS - start))
set -e
# (mpirun passes on the killed rank's status, 137, so the time tells a hang from a kill.)
if ((rc == 0 || took >= 30)); then
    echo "scripts/mpi.sh: a killed worker rank gave mpirun status $rc after ${took}s; the job must fail at once" >&2
    exit 1
fi
echo "a killed worker rank ended the job in ${took}s (mpirun status $rc)"
echo "scripts/mpi.sh: MPI worker ranks passed on 4 and 2 ranks (same outputs as the local pool)"
MPI_TEST_EXE="$exe" MPI_DIGEST="$d4" scripts/mpi-two-node.sh # two simulated hosts (network namespaces, a fake ssh), ~5 s once built
