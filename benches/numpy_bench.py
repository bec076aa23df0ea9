"""Every row of `polycompute bench --device cpu:0` beside numpy's equivalent, in one command.

For each round and each row, numpy's equivalent runs, then `polycompute bench --only ROW`
(a fresh process), so a change in machine load during the run touches both sides alike.
Each side's figure is the median over all rounds (each round's own figure being a median of
several repetitions). Run through numpy_bench.sh, which sets up the virtual environment and
unsets the OpenBLAS variables this machine sets.

Rows and numpy's equivalents (f32 throughout):
  map_axpy_f32     a*x + y on 2^24 elements               GB/s (2 reads + 1 write)
  sum_f32          x.sum() on 2^24 elements               GB/s read
  sum_rows_f32     x.sum(axis=1) on [200000, 8]           GB/s read
  argmin_rows_f32  x.argmin(axis=1) on [200000, 8]        GB/s read
  matmul_f32_1024  a @ b, 1024³                           GFLOP/s
  matmul_f32_2048  a @ b, 2048³                           GFLOP/s
  uniform_f32      Generator.random(2^24, float32)        GB/s written
  normal_f32       Generator.standard_normal(2^24, f32)   GB/s written
  map_small_f32    a*x + y on 1,024 elements              µs per call
  sort_f32         np.sort(x), 2^24 uniform f32           Melem/s
  argsort_f32      np.argsort(x, kind="stable"), 2^24     Melem/s
  sort_f64/_f16    np.sort of 2^24 uniform f64 / f16      Melem/s
  sort_i32/_u32    np.sort of 2^24 random 32-bit ints     Melem/s
  sort_rows_f32    np.sort(x, axis=1) on [200000, 8]      Melem/s
  argsort_rows_f32 np.argsort(x, axis=1, kind="stable")   Melem/s

`ratio` is polycompute's speed over numpy's: above 1 means polycompute is faster (for
µs/call, numpy's time over polycompute's).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

A = np.float32(1.5)
STREAM = 1 << 24
SMALL = 1024
SMALL_CALLS = 1000
F32 = 4
SHORT_ROWS = (200_000, 8)

# Row -> (numpy figure's unit, goal for polycompute / numpy).
ROWS = {
    "map_axpy_f32": ("GB/s", 1.1),
    "sum_f32": ("GB/s", 1.2),
    "sum_rows_f32": ("GB/s", 1.0),
    "argmin_rows_f32": ("GB/s", 1.0),
    "matmul_f32_1024": ("GFLOP/s", 1.0),
    "matmul_f32_2048": ("GFLOP/s", 1.0),
    "uniform_f32": ("GB/s", 1.5),
    "normal_f32": ("GB/s", 2.0),
    "map_small_f32": ("us/call", 1.0),
    "sort_f32": ("Melem/s", 1.0),
    "argsort_f32": ("Melem/s", 1.0),
    "sort_f64": ("Melem/s", 1.0),
    "sort_i32": ("Melem/s", 1.0),
    "sort_u32": ("Melem/s", 1.0),
    "sort_f16": ("Melem/s", 1.0),
    "sort_rows_f32": ("Melem/s", 1.0),
    "argsort_rows_f32": ("Melem/s", 1.0),
}


def blas_description():
    """Which BLAS numpy calls, with how many threads and which kernel (threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return "; ".join(
                f"{i.get('internal_api')} {i.get('version')} (kernel {i.get('architecture')}, "
                f"{i.get('num_threads')} threads)"
                for i in infos
            )
    except ImportError:
        pass
    return "unknown (threadpoolctl missing)"


def median_secs(f, reps, warmup=1):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class NumpyRows:
    """numpy's side of every row, inputs made once."""

    def __init__(self, reps):
        rng = np.random.default_rng(1)
        self.reps = reps
        self.x = rng.random(STREAM, dtype=np.float32)
        self.y = rng.random(STREAM, dtype=np.float32)
        self.xs = self.x[:SMALL].copy()
        self.rows = rng.random(SHORT_ROWS, dtype=np.float32)
        self.ys = self.y[:SMALL].copy()
        self.mats = {n: (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)) for n in (1024, 2048)}
        self.gen = np.random.default_rng(5)
        self.sorts = {
            "sort_f32": self.x,
            "sort_f64": rng.random(STREAM),
            "sort_f16": rng.random(STREAM, dtype=np.float32).astype(np.float16),
            "sort_i32": rng.integers(-(2**31), 2**31, STREAM, dtype=np.int32),
            "sort_u32": rng.integers(0, 2**32, STREAM, dtype=np.uint32),
        }

    def figure(self, name):
        reps = self.reps
        if name == "map_axpy_f32":
            return 3 * F32 * STREAM / median_secs(lambda: A * self.x + self.y, reps) / 1e9
        if name == "sum_f32":
            return F32 * STREAM / median_secs(lambda: self.x.sum(), reps) / 1e9
        if name == "sum_rows_f32":
            return F32 * self.rows.size / median_secs(lambda: self.rows.sum(axis=1), reps) / 1e9
        if name == "argmin_rows_f32":
            return F32 * self.rows.size / median_secs(lambda: self.rows.argmin(axis=1), reps) / 1e9
        if name.startswith("matmul_f32_"):
            n = int(name.rsplit("_", 1)[1])
            a, b = self.mats[n]
            return 2 * n**3 / median_secs(lambda: a @ b, max(3, reps // 2)) / 1e9
        if name == "uniform_f32":
            return F32 * STREAM / median_secs(lambda: self.gen.random(STREAM, dtype=np.float32), reps) / 1e9
        if name == "normal_f32":
            return F32 * STREAM / median_secs(lambda: self.gen.standard_normal(STREAM, dtype=np.float32), reps) / 1e9
        if name == "map_small_f32":
            xs, ys = self.xs, self.ys

            def batch():
                for _ in range(SMALL_CALLS):
                    A * xs + ys

            return median_secs(batch, reps) / SMALL_CALLS * 1e6
        if name in self.sorts:
            v = self.sorts[name]
            return v.size / median_secs(lambda: np.sort(v), reps) / 1e6
        if name == "argsort_f32":
            return STREAM / median_secs(lambda: np.argsort(self.x, kind="stable"), reps) / 1e6
        if name == "sort_rows_f32":
            return self.rows.size / median_secs(lambda: np.sort(self.rows, axis=1), reps) / 1e6
        if name == "argsort_rows_f32":
            return self.rows.size / median_secs(lambda: np.argsort(self.rows, axis=1, kind="stable"), reps) / 1e6
        raise ValueError(name)


def polycompute_row(binary, name, quick):
    cmd = [binary, "bench", "--device", "cpu:0", "--json", "--only", name] + (["--quick"] if quick else [])
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rows = json.loads(done.stdout) if done.stdout.strip() else []
    row = rows[0] if rows else {"name": name, "error": f"polycompute bench exited with {done.returncode}"}
    return row


def ratio(name, ours, theirs):
    if ROWS[name][0] == "us/call":
        return theirs / ours
    return ours / theirs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--polycompute", required=True, help="path to the polycompute binary")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (numpy, polycompute) per row")
    parser.add_argument("--only", action="append", choices=list(ROWS), help="run only this row (repeatable)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions per round, both sides")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args()
    names = args.only or list(ROWS)

    print(f"numpy {np.__version__}; BLAS {blas_description()}", flush=True)
    unset = [v for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ]
    if unset:
        print(f"warning: {', '.join(unset)} set for numpy (run through numpy_bench.sh)", flush=True)
    load_before = os.getloadavg()[0]
    numpy_side = NumpyRows(reps=3 if args.quick else 7)
    theirs = {n: [] for n in names}
    ours = {n: [] for n in names}
    baseline = {n: [] for n in names}
    errors = {}
    for r in range(args.rounds):
        for name in names:
            print(f"round {r + 1}/{args.rounds} {name}: numpy", end="", flush=True)
            theirs[name].append(numpy_side.figure(name))
            print(f" {theirs[name][-1]:.3f}, polycompute", end="", flush=True)
            row = polycompute_row(args.polycompute, name, args.quick)
            if row.get("value") is None:
                errors[name] = row.get("error", "no result")
                print(" failed", flush=True)
                continue
            ours[name].append(row["value"])
            if row.get("baseline") is not None:
                baseline[name].append((row["baseline"], row.get("baseline_name", "")))
            print(f" {row['value']:.3f}", flush=True)

    print()
    print(f"{os.cpu_count()} logical cores, shared; 1-minute load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after. Medians of {args.rounds} rounds.")
    head = f"{'benchmark':<16} {'unit':>8} {'numpy':>9} {'polycompute':>12} {'ratio':>6} {'goal':>6}  rounds (ratio)    vs hand loop"
    print(head)
    ok = not errors
    for name in names:
        unit, goal = ROWS[name]
        if name in errors and not ours[name]:
            print(f"{name:<16} failed: {errors[name]}")
            continue
        mt, mo = statistics.median(theirs[name]), statistics.median(ours[name])
        rt = ratio(name, mo, mt)
        per_round = ", ".join(f"{ratio(name, o, t):.2f}" for o, t in zip(ours[name], theirs[name]))
        hand = ""
        if baseline[name]:
            b = statistics.median(v for v, _ in baseline[name])
            hand = f"{ratio(name, mo, b):.2f} ({baseline[name][0][1]})"
        met = rt >= goal
        ok &= met
        print(f"{name:<16} {unit:>8} {mt:>9.2f} {mo:>12.2f} {rt:>6.2f} {'≥' + str(goal):>6} "
              f"{'met' if met else 'MISSED':<7}[{per_round}]  {hand}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
