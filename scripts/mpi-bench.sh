#!/usr/bin/env bash
# The MPI pool's figures beside mpi4py.futures, in one command: on 3 ranks
# (rank 0 schedules, 2 worker ranks), shared memory only, each side run ROUNDS times
# alternately (default 3); prints every run, then the medians and the ratios.
#   scripts/mpi-bench.sh [ROUNDS] [--loaded]
# --loaded: one busy loop runs beside both for the whole command (a machine shared with
# another job: on 2 cores, rank 0 and the worker rank it waits on then share one core).
# Not run by CI (figures only). Needs what scripts/mpi.sh installs, and mpi4py (installed
# into benches/.venv with pip when missing: a wheel that loads the system Open MPI).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
loaded="${2:-}"
export LIBCLANG_PATH="${LIBCLANG_PATH:-/usr/lib/llvm-14/lib}"
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

py=benches/.venv/bin/python
if ! "$py" -c 'import mpi4py' 2>/dev/null; then
    python3 -m venv benches/.venv
    "$py" -m pip install -q mpi4py
fi
exe="$(cargo test --release -p polycompute-conformance --features mpi --test mpi --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi" and m.get("executable"):
        print(m["executable"])')"

mpi() {
    timeout -k 10 300 mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader "$@"
}
out="$(mktemp)"
spinner=
trap 'rm -f "$out"; [ -z "$spinner" ] || kill "$spinner" 2>/dev/null' EXIT
if [ "$loaded" = --loaded ]; then
    sh -c 'while :; do :; done' &
    spinner=$!
fi
for ((i = 1; i <= rounds; i++)); do
    MPI_BENCH=1 mpi -x MPI_BENCH -n 3 "$exe" | grep '^BENCH' | sed 's/^BENCH/polycompute/' | tee -a "$out"
    mpi -n 3 "$py" -m mpi4py.futures benches/mpi4py_pool.py | grep '^BENCH' | sed 's/^BENCH/mpi4py/' | tee -a "$out"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores${spinner:+, one busy loop beside} (shared machine: figures scatter)"
python3 - "$out" <<'EOF'
import re, statistics, sys
runs = {"polycompute": [], "mpi4py": []}
for line in open(sys.argv[1]):
    who = line.split()[0]
    first = re.search(r"first-result ([\d.]+)(µs|ms|s)", line)
    trip = re.search(r"round trip median ([\d.]+)(ns|µs|ms)", line)
    unb = re.search(r"unbatched map (\d+)", line)
    bat = re.search(r"batched \(256\) (\d+)", line)
    scale = {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}
    runs[who].append((float(first[1]) * scale[first[2]], float(trip[1]) * scale[trip[2]], int(unb[1]), int(bat[1])))
med = {w: [statistics.median(r[k] for r in rs) for k in range(4)] for w, rs in runs.items()}
p, m = med["polycompute"], med["mpi4py"]
print(f"medians of {len(runs['polycompute'])} runs each   polycompute   mpi4py.futures   ratio")
print(f"start to first result        {p[0]/1e3:9.1f} ms   {m[0]/1e3:9.1f} ms   {m[0]/p[0]:7.1f}x")
print(f"round trip (median)          {p[1]:9.1f} µs   {m[1]:9.1f} µs   {m[1]/p[1]:7.1f}x")
print(f"map, unbatched               {p[2]/1e3:9.0f} k/s  {m[2]/1e3:9.1f} k/s  {p[2]/m[2]:7.1f}x")
print(f"map, batched (256)           {p[3]/1e6:9.2f} M/s  {m[3]/1e6:9.2f} M/s  {p[3]/m[3]:7.1f}x")
EOF
