#!/usr/bin/env bash
# A simulated two-node MPI run: two "hosts", nodeA and nodeB, on this machine, and
# `mpirun` with a hostfile of the two names starting ranks on both, as on a cluster.
#
# Each host is a network namespace (its own interfaces: only loopback and one end of a veth
# pair, 10.250.16.1 and .2/24) entered with its own UTS namespace (hostname nodeA or nodeB) and
# its own /etc/hosts naming both (`ip netns exec` bind-mounts /etc/netns/NS/hosts over
# /etc/hosts). mpirun runs on nodeA; a fake `ssh` (Open MPI's plm_rsh_agent) runs the daemon
# command it would send to nodeB in nodeB's namespaces instead. Nothing can leave the machine:
# the namespaces have no route out, and Open MPI is told so anyway (pml ob1, btl
# self,vader,tcp, TCP and the out-of-band channel pinned to the veth subnet; no UCX).
#
# Asserts, on 4 ranks (2 slots per host; rank 0 and worker rank 1 on nodeA, worker ranks 2
# and 3 on nodeB): that mpirun started nodeB through the fake ssh; from `polycompute probe
# --json` on rank 0, the two hosts, node-local ranks 0 and 1 on each (MPI_Comm_split_type
# (SHARED)) and the device rule by local rank: the CPU on these GPU-less hosts, and with
# POLYCOMPUTE_MPI_FAKE_GPUS (the rule's test hook: the node's CUDA GPU count, set per host)
# the one GPU of nodeA for its rank and GPU `local rank % 2` on nodeB; `polycompute demo`
# completing under the launch; and the MPI test's two-host case (tests/tests/mpi, MPI_TWO_HOSTS):
# the 10,000-task map identical to the local pool with every worker rank taking part, each
# task's rank on its own host and device, and (given MPI_DIGEST, a one-host run's `DIGEST`
# line, as scripts/mpi.sh does) the same outputs as on one host; and a SharedArray input reaching
# the rank on rank 0's node as its handle and the two on nodeB as copies of its data.
#
# Needs root (namespaces), iproute2, util-linux and Open MPI; builds polycompute and the MPI
# test with `--features mpi` unless POLYCOMPUTE_BIN and MPI_TEST_EXE name them. Idempotent
# (an interrupted run's namespaces are removed first; everything is removed on exit). The
# four launches take 2-4 s here (2 shared cores), the builds what they take.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
    echo "scripts/mpi-two-node.sh: $*" >&2
    exit 1
}
((EUID == 0)) || die "needs root (network and UTS namespaces)"

packages=(openmpi-bin libopenmpi-dev libclang1-14 libclang-common-14-dev iproute2 util-linux)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}"

started=$SECONDS
hosts=(nodeA nodeB)
declare -A ns=([nodeA]=pc2n-a [nodeB]=pc2n-b) addr=([nodeA]=10.250.16.1 [nodeB]=10.250.16.2)
subnet=10.250.16.0/24
remove_hosts() {
    for h in "${hosts[@]}"; do
        ip netns del "${ns[$h]}" 2>/dev/null || true
        rm -rf "/etc/netns/${ns[$h]}"
    done
    rmdir /etc/netns 2>/dev/null || true # when nothing else is there
}
remove_hosts # an interrupted run's
tmp="$(mktemp -d /tmp/mpi-two-node.XXXXXX)"
trap 'remove_hosts; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM # the EXIT trap cleans up after a signal too
unset FAKE_GPUS_nodeA FAKE_GPUS_nodeB

# `artifact NAME CARGO-ARGS...`: the executable cargo builds for target NAME.
artifact() {
    local name=$1
    shift
    echo "+ cargo $* --features mpi" >&2
    cargo "$@" --features mpi --message-format=json | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$name"
}
bin="${POLYCOMPUTE_BIN:-}"
if [[ -z "$bin" ]]; then
    # A private copy: the uplifted binary may be replaced by another build meanwhile.
    cp "$(artifact polycompute build -p polycompute-cli --features mpi-fake-gpus)" "$tmp/polycompute"
    bin="$tmp/polycompute"
fi
test_exe="${MPI_TEST_EXE:-}"
[[ -n "$test_exe" ]] || test_exe="$(artifact mpi test -p polycompute-conformance --test mpi --no-run)"
[[ -x "$bin" && -x "$test_exe" ]] || die "no polycompute binary ('$bin') or MPI test ('$test_exe')"
bin="$(realpath "$bin")" test_exe="$(realpath "$test_exe")"

for h in "${hosts[@]}"; do
    ip netns add "${ns[$h]}" || die "cannot create network namespaces (needs root with CAP_SYS_ADMIN)"
    mkdir -p "/etc/netns/${ns[$h]}"
    {
        echo "127.0.0.1 localhost"
        for o in "${hosts[@]}"; do echo "${addr[$o]} $o"; done
    } >"/etc/netns/${ns[$h]}/hosts"
done
ip link add pc2n-a0 netns pc2n-a type veth peer name pc2n-b0 netns pc2n-b
for h in "${hosts[@]}"; do
    n="${ns[$h]}"
    ip -n "$n" addr add "${addr[$h]}/24" dev "${n}0"
    ip -n "$n" link set lo up
    ip -n "$n" link set "${n}0" up
done

# `on-node HOST CMD...`: CMD on HOST (its network namespace, /etc/hosts and hostname). Per-host
# environment: FAKE_GPUS_<HOST> becomes POLYCOMPUTE_MPI_FAKE_GPUS there.
cat >"$tmp/on-node" <<EOF
#!/usr/bin/env bash
set -euo pipefail
host=\$1
shift
case \$host in
nodeA) n=pc2n-a ;;
nodeB) n=pc2n-b ;;
*) echo "on-node: no host \$host" >&2; exit 255 ;;
esac
gpus=FAKE_GPUS_\$host
if [[ -n "\${!gpus:-}" ]]; then export POLYCOMPUTE_MPI_FAKE_GPUS="\${!gpus}"; else unset POLYCOMPUTE_MPI_FAKE_GPUS; fi
exec ip netns exec "\$n" unshare --uts -- bash -c 'hostname "\$0" && exec "\$@"' "\$host" "\$@"
EOF
# The fake ssh: `ssh [options] HOST COMMAND...` runs COMMAND (a shell line, as ssh sends it)
# on HOST, and logs the call.
cat >"$tmp/ssh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
while [[ \$# -gt 0 && \$1 == -* ]]; do
    case \$1 in -[oplibcmFEJLRDW]) shift 2 ;; *) shift ;; esac
done
host=\${1#*@}
shift
echo "\$(hostname) -> \$host: \$*" >>"$tmp/ssh.log"
exec "$tmp/on-node" "\$host" bash -c "\$*"
EOF
chmod +x "$tmp/on-node" "$tmp/ssh"
printf '%s slots=2\n' "${hosts[@]}" >"$tmp/hostfile"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Off the machine's interfaces, asserted: only the veth subnet (and no UCX, which may open
# network devices of its own).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_osc='^ucx'
export OMPI_MCA_btl_tcp_if_include=$subnet OMPI_MCA_oob_tcp_if_include=$subnet
export OMPI_MCA_plm_rsh_agent="$tmp/ssh"
[[ "$OMPI_MCA_btl_tcp_if_include" == "$subnet" && "$OMPI_MCA_oob_tcp_if_include" == "$subnet" &&
    "$OMPI_MCA_pml" == ob1 ]] || die "MPI traffic must be pinned to the namespaces' subnet"

# `launch WHAT EXE ARGS...`: 4 ranks, 2 per host, from nodeA; stdout to $tmp/WHAT.out.
launch() {
    local what=$1
    shift
    echo "+ mpirun -n 4 --hostfile {nodeA,nodeB slots=2} $(basename "$1") ${*:2}"
    : >"$tmp/ssh.log"
    local rc=0
    timeout -k 5 60 "$tmp/on-node" nodeA mpirun --hostfile "$tmp/hostfile" -n 4 --map-by slot \
        "$@" >"$tmp/$what.out" 2>"$tmp/$what.err" || rc=$?
    if ((rc != 0)); then
        cat "$tmp/$what.err" "$tmp/$what.out" >&2
        die "mpirun ($what) exited with status $rc"
    fi
    grep -q -- "^nodeA -> nodeB: " "$tmp/ssh.log" || die "$what: mpirun did not start nodeB through the fake ssh"
}

# `check_probe FILE GPUS_A GPUS_B`: hosts, local ranks and devices (GPUS_X empty: none).
check_probe() {
    python3 - "$@" <<'EOF'
import json, sys
path, gpus = sys.argv[1], {"nodeA": sys.argv[2], "nodeB": sys.argv[3]}
world = json.load(open(path)).get("mpi")
assert world, "probe under mpirun shows no MPI world"
ranks = world["ranks"]
assert world["size"] == 4 and len(ranks) == 4, f"world size {world['size']}, {len(ranks)} ranks"
got = [(r["rank"], r["host"], r["local_rank"]) for r in ranks]
want = [(0, "nodeA", 0), (1, "nodeA", 1), (2, "nodeB", 0), (3, "nodeB", 1)]
assert got == want, f"(rank, host, local rank): {got}, want {want}"
for r in ranks[1:]:
    n = gpus[r["host"]]
    want = f"cuda:{r['local_rank'] % int(n)}" if n else "cpu:0"
    assert r["device"] == want, f"rank {r['rank']} on {r['host']} (local rank {r['local_rank']}, {n or 'no'} GPUs): {r['device']}, want {want}"
print("  " + ", ".join(f"rank {r['rank']} {r['host']}/local {r['local_rank']}: {r['device']}" for r in ranks))
EOF
}

runs=$SECONDS
# 1. GPU-less hosts: every worker rank falls back to the CPU.
launch probe "$bin" probe --json
check_probe "$tmp/probe.out" "" "" || die "probe on GPU-less hosts: see above"
# 2. The rule by local rank, per host: one GPU on nodeA (everyone's), two on nodeB (local
#    rank modulo 2). Per-host values also show each rank took its own host's setting.
FAKE_GPUS_nodeA=1 FAKE_GPUS_nodeB=2 launch probe-gpus "$bin" probe --json
check_probe "$tmp/probe-gpus.out" 1 2 || die "probe with 1 GPU on nodeA, 2 on nodeB: see above"
# 3. The demo's pool across the hosts, results cross-checked on the CPU (which ranks ran
#    tasks the demo does not say: step 4 checks that).
launch demo "$bin" demo --json --tasks 12 --samples 4096 --size 32
python3 - "$tmp/demo.out" <<'EOF' || die "demo across two hosts: see above"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "mpi", f"demo mode {r['mode']}"
assert r["succeeded"] == r["tasks"] == 12 and r["failed"] == 0, f"{r['succeeded']} of {r['tasks']} succeeded"
assert r["cross_check"]["ok"], f"cross-check: {r['cross_check']}"
assert sum(d["workers"] for d in r["devices"]) == 3, f"devices {r['devices']}"
print(f"  demo: {r['succeeded']} tasks on 3 worker ranks, cross-check ok")
EOF
# 4. The MPI test's two-host case: local ranks per host, the 10,000-task map identical to the
#    local pool with every rank taking part, each task's rank on its own host and device.
MPI_TWO_HOSTS=1 launch two-hosts "$test_exe"
sed 's/^/  /' "$tmp/two-hosts.out"
# The same seed, the same outputs: on two hosts as on one (MPI_DIGEST: a one-host run's).
digest="$(grep '^DIGEST ' "$tmp/two-hosts.out" || true)"
[[ -n "$digest" ]] || die "the two-host case printed no DIGEST"
[[ -z "${MPI_DIGEST:-}" || "$digest" == "$MPI_DIGEST" ]] ||
    die "two hosts gave '$digest', one host '$MPI_DIGEST': the same seed must give the same outputs"
echo "scripts/mpi-two-node.sh: two simulated hosts passed: 4 launches in $((SECONDS - runs)) s, $((SECONDS - started)) s in all"
