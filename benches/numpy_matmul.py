"""numpy's f32 matmul beside polycompute's, measured in one process tree.

The two alternate for several rounds (numpy, then `polycompute bench`, again and again) and
each side's figure is the median over all rounds, so a change in machine load during the
run does not favour either side. Run through numpy_matmul.sh, which sets up the virtual
environment.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = (1024, 2048)
ROUNDS = 3
REPS = {1024: 5, 2048: 3}  # per round
MATMUL_TARGET = 0.9  # polycompute / numpy
SMALL_MAP_TARGET_US = 10.0


def blas_description():
    """Which BLAS numpy calls, and with how many threads."""
    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return "; ".join(
                f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')}, "
                f"{i.get('num_threads')} threads, {i.get('filepath')})"
                for i in infos
            )
    except ImportError:
        pass
    np.show_config()
    return "see numpy.show_config() above"


def numpy_seconds(n, reps):
    """Median seconds of one `a @ b` on n×n f32 matrices, after one warm-up."""
    rng = np.random.default_rng(n)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    a @ b
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return times


def run_polycompute(binary):
    cmd = [
        binary, "bench", "--device", "cpu:0", "--json",
        "--only", "matmul_f32_1024", "--only", "matmul_f32_2048", "--only", "map_small_f32",
    ]
    print("+ " + " ".join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    rows = json.loads(done.stdout) if done.stdout.strip() else []
    if done.returncode != 0:
        print(f"polycompute bench exited with {done.returncode}", file=sys.stderr)
    return {r["name"]: r for r in rows}, done.returncode


def median_row(rows):
    """One row whose value and baseline are the medians over the rounds (or the error)."""
    good = [r for r in rows if r.get("value") is not None]
    if not good:
        return rows[-1]
    row = dict(good[0])
    row["value"] = statistics.median(r["value"] for r in good)
    if all(r.get("baseline") is not None for r in good):
        row["baseline"] = statistics.median(r["baseline"] for r in good)
    row["rounds"] = [r["value"] for r in good]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--polycompute", required=True, help="path to the polycompute binary")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    print(f"numpy {np.__version__}, BLAS: {blas_description()}", flush=True)
    load_before = os.getloadavg()[0]
    times = {n: [] for n in SIZES}
    ours = {}  # name -> the value of each round
    code = 0
    for r in range(ROUNDS):
        print(f"round {r + 1}/{ROUNDS}: numpy", flush=True)
        for n in SIZES:
            times[n] += numpy_seconds(n, REPS[n])
        rows, c = run_polycompute(args.polycompute)
        code = code or c
        for name, row in rows.items():
            ours.setdefault(name, []).append(row)
    rows = {name: median_row(rs) for name, rs in ours.items()}

    ok = code == 0
    print()
    # Both sides share the cores with whatever else runs; the load says how far to trust it.
    print(f"{os.cpu_count()} logical cores; 1-minute load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after")
    for n in SIZES:
        per_round = [2 * n**3 / statistics.median(times[n][i * REPS[n]:(i + 1) * REPS[n]]) / 1e9 for i in range(ROUNDS)]
        theirs = ", ".join(f"{g:.1f}" for g in per_round)
        mine = ", ".join(f"{g:.1f}" for g in rows.get(f"matmul_f32_{n}", {}).get("rounds", []))
        print(f"rounds at {n}³: numpy {theirs}; polycompute {mine} GFLOP/s")
    print(f"{'matmul f32':<12} {'numpy GFLOP/s':>14} {'polycompute GFLOP/s':>20} {'ratio':>7}  target")
    for n in SIZES:
        numpy_gflops = 2 * n**3 / statistics.median(times[n]) / 1e9
        row = rows.get(f"matmul_f32_{n}", {})
        value = row.get("value")
        if value is None:
            print(f"{n}³{'':<7} {numpy_gflops:>14.1f} {'failed':>20} {'-':>7}  {row.get('error', 'no result')}")
            ok = False
            continue
        ratio = value / numpy_gflops
        met = ratio >= MATMUL_TARGET
        ok &= met
        print(f"{n}³{'':<7} {numpy_gflops:>14.1f} {value:>20.1f} {ratio:>7.2f}  "
              f"≥ {MATMUL_TARGET} {'met' if met else 'MISSED'}")

    small = rows.get("map_small_f32", {})
    if small.get("value") is None:
        print(f"map of 1,024 f32: failed: {small.get('error', 'no result')}")
        ok = False
    else:
        met = small["value"] <= SMALL_MAP_TARGET_US
        ok &= met
        print(f"map of 1,024 f32: {small['value']:.2f} us/call (single-threaded loop: {small['baseline']:.3f}); "
              f"≤ {SMALL_MAP_TARGET_US} us {'met' if met else 'MISSED'}")
    if args.check and not ok:
        sys.exit(1)
    if code != 0:
        sys.exit(code)


if __name__ == "__main__":
    main()
