#!/usr/bin/env bash
# CI for the pool on MPI worker ranks (feature `mpi`): installs Open MPI and
# libclang (the `mpi` crate's bindgen) when missing, builds the MPI test with
# `--features mpi`, and runs it under mpirun on 4 and on 2 ranks (the same seed must give
# the same outputs: the digests are compared; input shared arrays reach the ranks, all on this node, as handles) and once
# without a launcher (the local plan);
# then a rank SIGKILLed under a default launcher (the job fails; its result journal lets the
# rerun skip every finished task) and under `--enable-recovery` (the job goes on).
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

exe="$(scripts/mpi-test-exe.sh)"
[[ -x "$exe" ]] || { echo "scripts/mpi.sh: the MPI test did not build" >&2; exit 1; }

# Without a launcher: the local plan, as without the feature.
run timeout -k 5 60 "$exe"

mpi() {
    local n=$1
    shift
    run timeout -k 10 180 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader -n "$n" "$@"
}
# Shown through a pipe to stderr: `tee /dev/stderr` would reopen a redirected log file and
# truncate it.
out4="$(mpi 4 "$exe" | tee >(cat >&2))"
out2="$(mpi 2 "$exe" | tee >(cat >&2))"
d4="$(grep '^DIGEST ' <<<"$out4")"
d2="$(grep '^DIGEST ' <<<"$out2")"
if [[ -z "$d4" || "$d4" != "$d2" ]]; then
    echo "scripts/mpi.sh: 4 ranks gave '$d4', 2 ranks '$d2': the same seed must give the same outputs" >&2
    exit 1
fi
# Two inputs of one chunk hang (10 s) under a 500 ms timeout: each must start exactly once
# (the rank freed from the first skips the rest of its job, which other ranks took over),
# and the launch must end within a bound of rank 0's end (a worker rank busy in a task is
# ended after a grace period), long before the hung inputs would finish.
hdir="$(mktemp -d)"
echo "+ MPI_HUNG=$hdir mpirun -n 4 $exe (must end within 8 s)"
t0=$(date +%s%N)
MPI_HUNG="$hdir" mpi 4 -x MPI_HUNG "$exe"
took_ms=$((($(date +%s%N) - t0) / 1000000))
runs60="$(grep -cx 60 "$hdir/log" || true)"
runs61="$(grep -cx 61 "$hdir/log" || true)"
if [[ "$runs60" != 1 || "$runs61" != 1 ]]; then
    echo "scripts/mpi.sh: the hung inputs started $runs60 and $runs61 times; each must start once" >&2
    exit 1
fi
# ... and so must every other input: the ones finished before a hung input are not run again.
again="$(sort -n "$hdir/log" | uniq -d | tr '\n' ' ')"
if [[ "$(sort -un "$hdir/log" | wc -l)" != 300 || -n "$again" ]]; then
    echo "scripts/mpi.sh: of the 300 inputs, $(sort -un "$hdir/log" | wc -l) ran, these more than once: $again" >&2
    exit 1
fi
if ((took_ms >= 8000)); then
    echo "scripts/mpi.sh: the launch with hung inputs took ${took_ms} ms; its ranks must exit within a bound of rank 0's end" >&2
    exit 1
fi
echo "hung inputs: each of the 300 inputs started once; the launch ended ${took_ms} ms after it began (the inputs hang 10 s)"
rm -rf "$hdir"

# A worker rank SIGKILLed mid-run under a default launcher: the whole job must fail, fast
# (not hang until the timeout, 124/137), with mpirun naming the killed rank. Its journal
# keeps what finished: the rerun gives every result once and runs no finished task again
# (the test counts executions through a file).
jdir="$(mktemp -d)"
trap 'rm -rf "$jdir"' EXIT
echo "+ MPI_JOURNAL=$jdir MPI_JOURNAL_DIE=1 mpirun -n 3 $exe (must fail within seconds)"
set +e
start=$SECONDS
died="$(MPI_JOURNAL="$jdir" MPI_JOURNAL_DIE=1 timeout -k 10 60 mpirun --allow-run-as-root --oversubscribe \
    --mca pml ob1 --mca btl self,vader -x MPI_JOURNAL -x MPI_JOURNAL_DIE -n 3 "$exe" 2>&1)"
rc=$?
took=$((SECONDS - start))
set -e
# (mpirun passes on the killed rank's status, 137, so the time tells a hang from a kill.)
if ((rc == 0 || took >= 30)) || ! grep -q "exited on signal 9" <<<"$died"; then
    echo "$died" >&2
    echo "scripts/mpi.sh: a killed worker rank gave mpirun status $rc after ${took}s; the job must fail at once, naming the rank" >&2
    exit 1
fi
echo "a killed worker rank ended the job in ${took}s (mpirun status $rc): $(grep -m1 "exited on signal 9" <<<"$died")"
MPI_JOURNAL="$jdir" mpi 3 -x MPI_JOURNAL "$exe"
# Under --enable-recovery (Open MPI) the job outlives a SIGKILLed rank: the pool marks it
# lost after its lease, retries its task on another rank, and (opted in) rank 0 exits
# with status 3 — which mpirun does not pass on (it exits 0), so rank 0 runs under a shell
# that records it (MPMD: `-n 1 sh -c ... : -n 3 exe`).
# Rank 0 and the worker ranks left give MPI_Finalize a bounded time after a loss (its fence
# over the job sometimes never completes with a dead rank): several launches in a row must
# each end well within the timeout (MPI_RECOVERY_RUNS, default 3; 20 were run by hand).
for run_no in $(seq 1 "${MPI_RECOVERY_RUNS:-3}"); do
    status="$jdir/status.$run_no"
    echo "+ MPI_RECOVER=3 mpirun --enable-recovery -n 1 sh -c '$exe; echo \$? > status' : -n 3 $exe (launch $run_no)"
    set +e
    start=$SECONDS
    MPI_RECOVER=3 timeout -k 10 60 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader \
        --enable-recovery -x MPI_RECOVER -n 1 sh -c "\"$exe\"; echo \$? > \"$status\"" : -n 3 "$exe"
    rc=$?
    took=$((SECONDS - start))
    set -e
    if ((rc != 0)); then
        # mpirun's own status is not what is tested (rank 0's is), but a hang is: see below.
        echo "scripts/mpi.sh: WARNING: mpirun --enable-recovery exited with $rc (timeout: 124/137) after rank 0 wrote status '$(cat "$status" 2>/dev/null)'" >&2
        ps -eo pid,etimes,args | grep -E "mpirun|orted|$(basename "$exe")" | grep -v grep >&2 || true
    fi
    if [[ "$(cat "$status" 2>/dev/null)" != 3 ]] || ((took >= 30)); then
        echo "scripts/mpi.sh: rank 0 exited with status '$(cat "$status" 2>/dev/null)' after losing a rank (want 3), launch $run_no took ${took}s" >&2
        exit 1
    fi
    echo "recovery launch $run_no ended in ${took}s"
done
echo "scripts/mpi.sh: MPI worker ranks passed on 4 and 2 ranks (same outputs as the local pool), journal and recovery"
MPI_TEST_EXE="$exe" MPI_DIGEST="$d4" scripts/mpi-two-node.sh # two simulated hosts (network namespaces, a fake ssh), ~5 s once built
