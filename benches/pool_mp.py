#!/usr/bin/env python3
"""The pool workloads of benches/pool.rs through Python's multiprocessing.Pool (spawn,
2 workers), printed as JSON for the Rust bench to compare against in the same command.

  python3 benches/pool_mp.py [--quick]
"""
import json
import multiprocessing as mp
import statistics
import sys
import time


def noop(x):
    return x


def main():
    quick = "--quick" in sys.argv
    ctx = mp.get_context("spawn")
    n_map = 20_000 if quick else 100_000

    starts = []
    for _ in range(3 if quick else 5):
        t0 = time.perf_counter()
        with ctx.Pool(2) as pool:
            pool.apply(noop, (0,))
            starts.append(time.perf_counter() - t0)

    with ctx.Pool(2) as pool:
        pool.map(noop, range(1000))  # warm both workers
        trips = []
        for i in range(500 if quick else 2000):
            t0 = time.perf_counter()
            pool.apply(noop, (i,))
            trips.append(time.perf_counter() - t0)

        def rate(chunksize, n):
            t0 = time.perf_counter()
            out = pool.map(noop, range(n), chunksize=chunksize)
            dt = time.perf_counter() - t0
            assert len(out) == n
            return n / dt

        unbatched = statistics.median(rate(1, n_map // 5) for _ in range(3))
        batched = statistics.median(rate(256, n_map) for _ in range(3))

    print(json.dumps({
        "python": sys.version.split()[0],
        "create_to_first_result_s": statistics.median(starts),
        "round_trip_s": statistics.median(trips),
        "map_unbatched_per_s": unbatched,
        "map_batched_per_s": batched,
    }))


if __name__ == "__main__":
    main()
