"""primes: primality of `count` consecutive integers from `start` (10,000 from
10,000,000), sequentially, on a thread pool, on a process pool with
chunksize 1 and 200, and (3.14+) on an interpreter pool with the same chunks.

The point is per-task overhead: with chunksize=1 every number is one pickled
round trip to a worker, with chunksize=200 the same work travels in 50 batches.
The test is plain trial division by every d up to isqrt(n) without stopping at
the first divisor, so each number costs the same ~3,160 steps: chunks are evenly
loaded and the chunksize effect is overhead alone, not load imbalance.

Every mode's answers are compared number by number with a segmented sieve (a
different algorithm, computed outside the timing), so the prime count is the
same in every mode or the run raises.
"""

import math
import os
import sys
import time

try:
    import gilhost
except ImportError:
    gilhost = None


def preload(**_params):
    """The cases' `setup` (docs/config.md): imports what the pools need before the host's clock starts,
    so the host's case time (the call only) holds no imports. Not at module level: an interpreter pool's
    workers import this module, and would pay for these inside the timing."""
    import multiprocessing  # noqa: F401
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor  # noqa: F401
    if sys.version_info >= (3, 14):
        from concurrent.futures import InterpreterPoolExecutor  # noqa: F401
        import interpreter_pool  # noqa: F401  (scripts/interpreter_pool.py)


# Bound on the whole map, so a broken pool never hangs a standalone run.
WAIT_TIMEOUT_S = 600.0


def is_prime(n):
    if n < 2:
        return False
    divisors = 0
    for d in range(2, math.isqrt(n) + 1):
        if n % d == 0:
            divisors += 1
    return divisors == 0


def sieve_flags(start, count):
    """Primality of start .. start+count-1 by a segmented sieve (the reference)."""
    stop = start + count
    root = math.isqrt(max(stop - 1, 0))
    small = bytearray([1]) * (root + 1)    # small[p]: p <= root is prime
    flags = bytearray([1]) * count         # flags[i]: start + i is prime
    for p in range(2, root + 1):
        if not small[p]:
            continue
        small[p * p::p] = bytes(len(small[p * p::p]))
        # Cross off multiples of p from p*p on (smaller ones have a smaller factor).
        first = max(p * p, -(-start // p) * p)
        if first < stop:
            flags[first - start::p] = bytes(len(flags[first - start::p]))
    for v in range(start, min(stop, 2)):   # 0 and 1 are not prime
        flags[v - start] = 0
    return [bool(f) for f in flags]


def _cpu_times():
    """CPU seconds of this process plus reaped children (pool workers are
    reaped by shutdown(wait=True) before we read the end value)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _measure(mode, start, count, run, **extra):
    numbers = range(start, start + count)
    c0 = _cpu_times()
    t0 = time.perf_counter()
    flags = run(numbers)
    wall = time.perf_counter() - t0
    cpu = _cpu_times() - c0

    reference = sieve_flags(start, count)
    if flags != reference:
        wrong = [n for n, a, b in zip(numbers, flags, reference) if a != b][:5]
        raise RuntimeError("%s: %d answers, wrong for e.g. %r"
                           % (mode, len(flags), wrong))
    res = {"mode": mode, "start": start, "count": count,
           "primes": sum(flags), "wall_s": round(wall, 6),
           "cpu_s": round(cpu, 6),
           "parallelism": round(cpu / wall, 3) if wall > 0 else None}
    res.update(extra)
    if gilhost is not None:
        gilhost.metric("primes", res["primes"])
    return res


def sequential(start, count):
    return _measure("sequential", start, count,
                    lambda numbers: [is_prime(n) for n in numbers])


def threads(start, count, workers=8):
    from concurrent.futures import ThreadPoolExecutor

    def run(numbers):
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(is_prime, numbers, timeout=WAIT_TIMEOUT_S))

    return _measure("threads", start, count, run, workers=workers)


def processes(start, count, workers=8, chunksize=1, start_method="spawn"):
    """ProcessPoolExecutor.map; pool creation and shutdown are timed."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    def run(numbers):
        # Explicit context: the default start method differs by OS and version.
        ctx = multiprocessing.get_context(start_method)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        try:
            flags = list(pool.map(is_prime, numbers, chunksize=chunksize,
                                  timeout=WAIT_TIMEOUT_S))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return flags

    return _measure("processes", start, count, run, workers=workers,
                    chunksize=chunksize, tasks=-(-count // chunksize),
                    start_method=start_method)


def primes_in(first, count):
    """is_prime of first .. first+count-1: one interpreter-pool task."""
    return [is_prime(n) for n in range(first, first + count)]



def interpreters(start, count, workers=8, chunksize=1):
    """InterpreterPoolExecutor (3.14+): like the process pool, every task is
    pickled to a worker and its answer back -- but the workers are interpreters
    with their own GIL in this process, not processes. Tasks of `chunksize`
    numbers; pool creation and shutdown are timed."""
    from interpreter_pool import interpreter_pool  # scripts/interpreter_pool.py

    def run(numbers):
        pool = interpreter_pool(workers)
        try:
            firsts = range(numbers.start, numbers.stop, chunksize)
            futures = [pool.submit(primes_in, f, min(chunksize, numbers.stop - f))
                       for f in firsts]
            flags = [flag for fut in futures for flag in fut.result(timeout=WAIT_TIMEOUT_S)]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return flags

    return _measure("interpreters", start, count, run, workers=workers,
                    chunksize=chunksize, tasks=-(-count // chunksize))


def main(argv=None):
    import argparse
    import json

    ap = argparse.ArgumentParser(
        description="Primality of COUNT integers from START: sequential, "
                    "thread pool, process pool and (3.14+) interpreter pool "
                    "with each --chunksize.")
    ap.add_argument("--case", choices=("sequential", "threads", "processes", "interpreters", "all"),
                    default="all")
    ap.add_argument("--start", type=int, default=10_000_000)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--chunksize", type=int, nargs="+", default=[1, 200],
                    help="process-pool chunk sizes to run (1 200)")
    ap.add_argument("--start-method", default="spawn",
                    choices=("spawn", "fork", "forkserver"))
    ap.add_argument("--quick", action="store_true", help="count = 1,000")
    a = ap.parse_args(argv)
    count = 1_000 if a.quick else a.count

    out = []
    if a.case in ("sequential", "all"):
        out.append({"case": "sequential", "result": sequential(a.start, count)})
    if a.case in ("threads", "all"):
        out.append({"case": "threads", "result": threads(a.start, count, a.workers)})
    if a.case in ("processes", "all"):
        for c in a.chunksize:
            out.append({"case": "processes[chunksize=%d]" % c,
                        "result": processes(a.start, count, a.workers, c,
                                            a.start_method)})
    if a.case in ("interpreters", "all") and sys.version_info >= (3, 14):
        for c in a.chunksize:
            out.append({"case": "interpreters[chunksize=%d]" % c,
                        "result": interpreters(a.start, count, a.workers, c)})
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
