#!/usr/bin/env bash
# The pool on MPI worker ranks started by a real Slurm (`srun`, `sbatch`), as on a cluster:
# installs Debian's slurm-wlm and munge when missing, writes a munge key and a slurm.conf for a
# one-node cluster on 127.0.0.1 (4 CPUs' worth of slots on any machine, no cgroups), starts
# munged, slurmctld and slurmd, waits for the node to be idle, and then, under
# `srun --mpi=pmix` (the plugin both Debian's Slurm and Open MPI are built with; `pmi2` is
# there too, but Open MPI 4.1 from Debian talks PMIx natively):
#   1. the MPI test's normal run on 4 ranks (tests/tests/mpi: the 10,000-task map identical to
#      the local pool, in-process), its DIGEST equal to mpirun's on the same binary;
#   2. examples/slurm/job.sbatch (the README's job script) through `sbatch --wait`, the same
#      program and DIGEST;
#   3. a worker rank SIGKILLed under a plain srun: the step fails within seconds naming the
#      killed task (Slurm's PMIx plugin cancels the step), and the journal's rerun runs exactly
#      the missing tasks.
# Everything stays on this machine: the daemons listen on 127.0.0.1, Open MPI uses shared
# memory (pml ob1, btl self,vader) and its TCP pinned to loopback. The daemons are stopped on
# exit, also on failure; nothing is left running (asserted). Idempotent (an interrupted run's
# daemons, found by their pid files, are stopped first). Needs root. Reuses the MPI test that
# scripts/mpi.sh builds (MPI_TEST_EXE, else scripts/mpi-test-exe.sh: a no-op build after mpi.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
    echo "scripts/slurm.sh: $*" >&2
    exit 1
}
run() {
    echo "+ $*"
    "$@"
}
((EUID == 0)) || die "needs root (installs packages, runs slurmd)"

packages=(slurm-wlm munge openmpi-bin libopenmpi-dev libclang1-14 libclang-common-14-dev)
missing=()
for p in "${packages[@]}"; do
    # (`dpkg -s` also succeeds for a removed package whose config files are left.)
    [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
    run apt-get update -qq
    # The packages' own services must not start (this script runs its daemons itself, with
    # its own config): policy-rc.d refuses them for the install.
    # A machine's own policy-rc.d (Docker images have one that refuses every service) is
    # set aside for the install and put back after it.
    policy=/usr/sbin/policy-rc.d
    saved=""
    if [[ -e $policy ]]; then
        saved="$(mktemp)"
        cp -p "$policy" "$saved"
    fi
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    rc=0
    DEBIAN_FRONTEND=noninteractive run apt-get install -y -qq --no-install-recommends "${missing[@]}" || rc=$?
    if [[ -n $saved ]]; then
        cp -p "$saved" "$policy" && rm -f "$saved"
    else
        rm -f "$policy"
    fi
    ((rc == 0)) || die "apt-get install ${missing[*]} failed ($rc)"
fi
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}"

# Loopback only, and asserted.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
[[ "$OMPI_MCA_btl_tcp_if_include" == lo && "$OMPI_MCA_oob_tcp_if_include" == lo ]] ||
    die "MPI traffic must be pinned to loopback"

exe="${MPI_TEST_EXE:-$(scripts/mpi-test-exe.sh)}"
[[ -x "$exe" ]] || die "no MPI test executable ('$exe')"
exe="$(realpath "$exe")"

# The cluster's files, in one fixed place (so that a later run finds an interrupted one's pid
# files): config, munge key and socket, state, spool, logs.
dir=/tmp/polycompute-slurm
pidfiles=("$dir/munged.pid" "$dir/slurmctld.pid" "$dir/slurmd.pid")
stop_daemons() {
    local f pid i
    for f in "${pidfiles[@]}"; do
        pid="$(cat "$f" 2>/dev/null || true)"
        [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
    done
    for f in "${pidfiles[@]}"; do
        pid="$(cat "$f" 2>/dev/null || true)"
        [[ -n "$pid" ]] || continue
        for i in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
}
stop_daemons # an interrupted run's
rm -rf "$dir"
# munged wants its socket's folder searchable by all; its key stays private (0400).
mkdir -m 755 -p "$dir"/{state,spool,log,munge,job}
cleanup() {
    local rc=$?
    if ((rc != 0)); then
        for f in "$dir"/log/*; do
            echo "--- $f (last lines)" >&2
            tail -n 20 "$f" >&2 || true
        done
    fi
    stop_daemons
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up after a signal too

# Munge: a fresh key of its own, and a socket only this cluster uses.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
socket="$dir/munge/munge.socket"
run munged --force --key-file="$dir/munge/munge.key" --socket="$socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"

node=pcnode
export SLURM_CONF="$dir/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=polycompute
SlurmctldHost=$(hostname -s)(127.0.0.1)
MailProg=/bin/true
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=30 OverSubscribe=FORCE:4 State=UP
EOF
run slurmctld -i
run slurmd -N "$node"

# Up when the node is idle (slurmd registered with slurmctld).
state=""
for _ in $(seq 100); do
    state="$(timeout 5 sinfo -h -N -n "$node" -o %T 2>/dev/null || true)"
    [[ "$state" == idle ]] && break
    sleep 0.2
done
[[ "$state" == idle ]] || die "node $node is '$state' after 20 s, not idle"
echo "one-node cluster up: $(sinfo -h -N -o '%N %T %c CPUs')"
srun --mpi=list 2>&1 | grep -qw pmix || die "this Slurm has no PMIx plugin (srun --mpi=list)"

# The reference: mpirun on the same binary (scripts/mpi.sh compares the same line).
ref="$(timeout -k 10 180 mpirun --allow-run-as-root --oversubscribe -n 2 "$exe" | grep '^DIGEST ' || true)"
[[ -n "$ref" ]] || die "mpirun printed no DIGEST"

# 1. The normal run on 4 ranks under srun.
echo "+ srun --mpi=pmix -n 4 $exe"
out="$(timeout -k 10 180 srun --mpi=pmix -n 4 --time=5 "$exe" | tee >(cat >&2))"
digest="$(grep '^DIGEST ' <<<"$out" || true)"
[[ -n "$digest" && "$digest" == "$ref" ]] || die "srun gave '$digest', mpirun '$ref': the same seed must give the same outputs"

# 2. The README's job script through sbatch, run to its end (--wait: sbatch exits with the job's status).
echo "+ APP=$exe sbatch --wait examples/slurm/job.sbatch"
timeout -k 10 240 sbatch --wait --export=ALL,APP="$exe" --chdir="$dir/job" --output="$dir/job/job.out" \
    examples/slurm/job.sbatch || {
    cat "$dir/job/job.out" >&2 || true
    die "the sbatch job failed"
}
sed 's/^/  job: /' "$dir/job/job.out"
digest="$(grep '^DIGEST ' "$dir/job/job.out" || true)"
[[ "$digest" == "$ref" ]] || die "the sbatch job gave '$digest', mpirun '$ref'"

# 3. A worker rank SIGKILLed under a plain srun (no --kill-on-bad-exit): the PMIx plugin's error
#    handler cancels the step at once (the pool's promise under a default launcher: the job
#    fails); its journal lets the rerun run exactly the tasks that did not finish.
jdir="$dir/journal"
mkdir -p "$jdir"
echo "+ MPI_JOURNAL=$jdir MPI_JOURNAL_DIE=1 srun -n 3 $exe (must fail within seconds)"
set +e
start=$SECONDS
died="$(MPI_JOURNAL="$jdir" MPI_JOURNAL_DIE=1 timeout -k 10 60 srun --mpi=pmix -n 3 --time=2 "$exe" 2>&1)"
rc=$?
took=$((SECONDS - start))
set -e
# (srun passes on the killed task's status, 137, as a timeout would: the time tells them apart.)
if ((rc == 0 || took >= 30)) || ! grep -qiE "task [0-9]+: Killed" <<<"$died"; then
    echo "$died" >&2
    die "a killed worker rank gave srun status $rc after ${took}s; the step must fail at once, naming the task"
fi
echo "a killed worker rank ended the step in ${took}s (srun status $rc): $(grep -m1 -iE "task [0-9]+: Killed" <<<"$died")"
MPI_JOURNAL="$jdir" timeout -k 10 120 srun --mpi=pmix -n 3 --time=2 "$exe"

# Nothing of the cluster or its jobs may outlive the script: stop the daemons here and check.
trap - EXIT
stop_daemons
rm -rf "$dir"
sleep 0.5
left="$(pgrep -a -f "slurmctld|slurmd|slurmstepd|munged|$exe" || true)"
[[ -z "$left" ]] || die "left running after the daemons stopped: $left"
echo "scripts/slurm.sh: srun (4 ranks, same outputs as mpirun), sbatch --wait and a killed rank passed on a one-node Slurm"
