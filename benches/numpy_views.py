"""numpy beside polycompute's CPU for the ops of issue 14, in one process tree, on 2^24 f32.

Rows: np.sort, np.argsort(kind='stable'), np.cumsum, np.take with random indices,
np.concatenate of two halves (against numpy's own copy bandwidth), a map over a step-2
slice (against the same map over a contiguous array of as many elements), and a 1024^3
matmul of a transposed view `a.T @ b` (against `a @ b` of contiguous operands: no copy). numpy and
`polycompute bench --only ...` alternate for a few rounds; each figure is the median over
all rounds. Run through numpy_views.sh, which sets up the virtual environment.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 1 << 24
ROUNDS = 3
REPS = 3  # per round, after one warm-up
NAMES = ["sort_f32", "argsort_f32", "cumsum_f32", "take_f32", "concat_f32", "map_step2_f32",
         "matmul_t_f32_1024"]
# polycompute / numpy, as issue 14 states them (step-2 map: against polycompute's own
# contiguous map; concat: against the copy of the whole array on the same side).
TARGETS = {"sort_f32": 0.8, "argsort_f32": 0.8, "cumsum_f32": 1.0, "take_f32": 1.0,
           "concat_f32": 0.8, "map_step2_f32": 0.7, "matmul_t_f32_1024": 0.9}
M = 1024


def timed(f):
    f()
    times = []
    for _ in range(REPS):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_round(rng):
    """numpy's figures in polycompute's units (Melem/s; concat and its copy in GB/s)."""
    x = rng.random(N, dtype=np.float32)
    idx = rng.integers(0, N, N, dtype=np.uint32)
    a, b = x[: N // 2].copy(), x[N // 2:].copy()
    wide = rng.random(2 * N, dtype=np.float32)
    dense = rng.random(N, dtype=np.float32)
    at, bt = rng.random((M, M), dtype=np.float32), rng.random((M, M), dtype=np.float32)
    melem = lambda t: N / t / 1e6
    gflops = lambda t: 2 * M ** 3 / t / 1e9
    gbs = lambda t: 2 * 4 * N / t / 1e9
    return {
        "sort_f32": melem(timed(lambda: np.sort(x))),
        "argsort_f32": melem(timed(lambda: np.argsort(x, kind="stable"))),
        "cumsum_f32": melem(timed(lambda: np.cumsum(x))),
        "take_f32": melem(timed(lambda: np.take(x, idx))),
        "concat_f32": gbs(timed(lambda: np.concatenate([a, b]))),
        "concat_copy": gbs(timed(lambda: x.copy())),
        "map_step2_f32": melem(timed(lambda: wide[::2] * np.float32(1.5) + np.float32(1.0))),
        "map_dense": melem(timed(lambda: dense * np.float32(1.5) + np.float32(1.0))),
        "matmul_t_f32_1024": gflops(timed(lambda: at.T @ bt)),
        "matmul_contiguous": gflops(timed(lambda: at @ bt)),
    }


def run_polycompute(binary):
    cmd = [binary, "bench", "--device", "cpu:0", "--json"]
    for name in NAMES:
        cmd += ["--only", name]
    print("+ " + " ".join(cmd), flush=True)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    rows = json.loads(done.stdout) if done.stdout.strip() else []
    if done.returncode != 0:
        print(f"polycompute bench exited with {done.returncode}", file=sys.stderr)
    return {r["name"]: r for r in rows}, done.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--polycompute", required=True, help="path to the polycompute binary")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    print(f"numpy {np.__version__}; {os.cpu_count()} logical cores; load {os.getloadavg()[0]:.2f}", flush=True)
    rng = np.random.default_rng(14)
    theirs, ours, code = {}, {}, 0
    for r in range(ROUNDS):
        print(f"round {r + 1}/{ROUNDS}: numpy", flush=True)
        for k, v in numpy_round(rng).items():
            theirs.setdefault(k, []).append(v)
        rows, c = run_polycompute(args.polycompute)
        code = code or c
        for name, row in rows.items():
            ours.setdefault(name, []).append(row)
    med = lambda vs: statistics.median(vs)
    ok = code == 0
    print(f"\nload after {os.getloadavg()[0]:.2f} (the machine is shared: figures are noisy)")
    print(f"{'op (2^24 f32)':<16} {'numpy':>10} {'polycompute':>12} {'unit':>8} {'ratio':>7}  target")
    for name in NAMES:
        rows = [r for r in ours.get(name, []) if r.get("value") is not None]
        if not rows:
            print(f"{name:<16} failed: {(ours.get(name) or [{}])[-1].get('error', 'no result')}")
            ok = False
            continue
        value, unit = med([r["value"] for r in rows]), rows[0]["unit"]
        base = med([r["baseline"] for r in rows])
        if name == "concat_f32":
            # polycompute's concat against polycompute's copy; numpy's pair shown beside it.
            ratio = value / base
            extra = f" (numpy concat/copy {med(theirs['concat_f32']) / med(theirs['concat_copy']):.2f})"
            np_value = med(theirs[name])
        elif name == "map_step2_f32":
            ratio = value / base
            extra = f" (numpy step-2/contiguous {med(theirs['map_step2_f32']) / med(theirs['map_dense']):.2f})"
            np_value = med(theirs[name])
        elif name == "matmul_t_f32_1024":
            # polycompute's a.T @ b against its own contiguous a @ b (no hidden copy).
            ratio = value / base
            extra = f" (numpy a.T@b / a@b {med(theirs[name]) / med(theirs['matmul_contiguous']):.2f})"
            np_value = med(theirs[name])
        else:
            np_value = med(theirs[name])
            ratio = value / np_value
            extra = ""
        met = ratio >= TARGETS[name]
        ok &= met
        print(f"{name:<16} {np_value:>10.1f} {value:>12.1f} {unit:>8} {ratio:>7.2f}  "
              f">= {TARGETS[name]} {'met' if met else 'MISSED'}{extra}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
