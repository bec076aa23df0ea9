"""The baseline for the MPI pool's figures (issue 16): mpi4py.futures' MPIPoolExecutor on
the same ranks, measured like tests/mpi/main.rs's MPI_BENCH case. Run by scripts/mpi-bench.sh:
    mpirun -n 3 benches/.venv/bin/python -m mpi4py.futures benches/mpi4py_pool.py
"""
import statistics
import time

from mpi4py.futures import MPIPoolExecutor


def noop(x):
    return x


def main():
    t0 = time.perf_counter()
    with MPIPoolExecutor() as ex:
        ex.submit(noop, 0).result()
        first = time.perf_counter() - t0
        trips = []
        for _ in range(2000):
            t = time.perf_counter()
            ex.submit(noop, 0).result()
            trips.append(time.perf_counter() - t)
        n = 20_000
        t = time.perf_counter()
        list(ex.map(noop, range(n)))
        unbatched = n / (time.perf_counter() - t)
        n = 1_000_000
        t = time.perf_counter()
        list(ex.map(noop, range(n), chunksize=256))
        batched = n / (time.perf_counter() - t)
    print(f"BENCH start-to-first-result {first * 1e3:.1f}ms, round trip median {statistics.median(trips) * 1e6:.1f}µs, "
          f"unbatched map {unbatched:.0f} tasks/s, batched (256) {batched:.0f} tasks/s")


if __name__ == "__main__":
    main()
