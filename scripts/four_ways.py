"""four_ways: 8 tasks, CPU-bound or I/O-bound, run four ways -- sequentially,
on threads, on processes and as asyncio coroutines -- with the build recorded;
and a fifth way from 3.14 on, an InterpreterPoolExecutor (one interpreter with
its own GIL per worker thread).

CPU task: sum of squares of range(n) (n = 3,000,000), pure Python.
I/O task: sleep `sleep_s` (0.5 s): time.sleep, or asyncio.sleep in the asyncio mode.

On a GIL build only processes speed up CPU work; on a free-threaded build threads
do too. asyncio gives no CPU parallelism anywhere: its coroutines never await,
so they run one after another. For I/O everything but sequential overlaps.
Each result records whether this is a free-threaded build (sysconfig
Py_GIL_DISABLED) and whether the GIL is on now (sys._is_gil_enabled(), before
and after the run): importing an extension that is not marked free-threading
safe turns the GIL back on in a free-threaded build.
"""

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
    import asyncio  # noqa: F401
    import sysconfig  # noqa: F401
    import multiprocessing  # noqa: F401
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor  # noqa: F401
    if sys.version_info >= (3, 14):
        from concurrent.futures import InterpreterPoolExecutor  # noqa: F401
        import interpreter_pool  # noqa: F401  (scripts/interpreter_pool.py)


# Bound on any one wait, so a broken pool never hangs a standalone run.
WAIT_TIMEOUT_S = 600.0

FAMILIES = ("cpu", "io")
MODES = ("sequential", "threads", "processes", "asyncio", "interpreters")


def build_info():
    import sysconfig

    is_enabled = getattr(sys, "_is_gil_enabled", None)
    return {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        # Before 3.13 there is no way to turn the GIL off: it is always on.
        "gil_enabled": bool(is_enabled()) if is_enabled is not None else True,
    }


def cpu_task(n):
    return sum(i * i for i in range(n))


def expected_cpu(n):
    # Sum of i*i for i in 0..n-1.
    return (n - 1) * n * (2 * n - 1) // 6


def io_task(index, sleep_s):
    time.sleep(sleep_s)
    return index


async def cpu_coro(n):
    # No await inside: the loop cannot switch, so coroutines run back to back.
    return cpu_task(n)


async def io_coro(index, sleep_s):
    import asyncio

    await asyncio.sleep(sleep_s)
    return index


def _cpu_times():
    """CPU seconds of this process plus reaped children (pool workers are
    reaped by shutdown(wait=True) before the end value is read)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _jobs(family, tasks, n, sleep_s):
    """(function, args) per task for the blocking modes."""
    if family == "cpu":
        return [(cpu_task, (n,)) for _ in range(tasks)]
    return [(io_task, (i, sleep_s)) for i in range(tasks)]


def _run_pool(pool, jobs):
    try:
        futures = [pool.submit(fn, *args) for fn, args in jobs]
        values = [f.result(timeout=WAIT_TIMEOUT_S) for f in futures]
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return values



def _execute(family, mode, tasks, n, sleep_s, workers, start_method):
    if mode == "sequential":
        return [fn(*args) for fn, args in _jobs(family, tasks, n, sleep_s)]
    if mode == "threads":
        from concurrent.futures import ThreadPoolExecutor

        return _run_pool(ThreadPoolExecutor(max_workers=workers),
                         _jobs(family, tasks, n, sleep_s))
    if mode == "processes":
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # Explicit context: the default start method differs by OS and version.
        ctx = multiprocessing.get_context(start_method)
        return _run_pool(ProcessPoolExecutor(max_workers=workers, mp_context=ctx),
                         _jobs(family, tasks, n, sleep_s))
    if mode == "interpreters":
        # 3.14+: a thread pool whose workers each run their own interpreter (own GIL).
        from interpreter_pool import interpreter_pool  # scripts/interpreter_pool.py

        return _run_pool(interpreter_pool(workers), _jobs(family, tasks, n, sleep_s))
    if mode == "asyncio":
        import asyncio

        async def main():
            if family == "cpu":
                coros = [cpu_coro(n) for _ in range(tasks)]
            else:
                coros = [io_coro(i, sleep_s) for i in range(tasks)]
            return await asyncio.wait_for(asyncio.gather(*coros), WAIT_TIMEOUT_S)

        return list(asyncio.run(main()))
    raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))


def run(family, mode, tasks=8, n=3_000_000, sleep_s=0.5, workers=8,
        start_method="spawn"):
    """Run `tasks` tasks of `family` ("cpu" or "io") the `mode` way, timed."""
    if family not in FAMILIES:
        raise ValueError("family must be cpu or io, not %r" % (family,))
    before = build_info()
    # Imports happen before the clock starts, so no mode pays for its modules.
    if mode == "asyncio":
        import asyncio  # noqa: F401
    elif mode in ("threads", "processes"):
        # concurrent.futures loads its executors lazily: name them to load them.
        from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor  # noqa: F401
        import multiprocessing  # noqa: F401
    elif mode == "interpreters":
        from concurrent.futures import InterpreterPoolExecutor  # noqa: F401
        import interpreter_pool  # noqa: F401
    c0 = _cpu_times()
    t0 = time.perf_counter()
    values = _execute(family, mode, tasks, n, sleep_s, workers, start_method)
    wall = time.perf_counter() - t0
    cpu = _cpu_times() - c0

    want = [expected_cpu(n)] * tasks if family == "cpu" else list(range(tasks))
    if values != want:
        raise RuntimeError("%s/%s returned %r, expected %r" % (family, mode, values, want))

    res = {"family": family, "mode": mode, "tasks": tasks,
           "wall_s": round(wall, 6), "cpu_s": round(cpu, 6),
           # CPU time / wall: how many cores the run kept busy on average.
           "parallelism": round(cpu / wall, 3) if wall > 0 else None}
    if family == "cpu":
        res["n"] = n
    else:
        res["sleep_s"] = sleep_s
        # Requested sleep in total / wall: 1 = no overlap, `tasks` = perfect overlap.
        # Sleeps never end early, so sequential stays <= 1.
        res["overlap_x"] = round(tasks * sleep_s / wall, 3) if wall > 0 else None
    if mode in ("threads", "processes", "interpreters"):
        res["workers"] = workers
    if mode == "processes":
        res["start_method"] = start_method
    res.update(before)
    res["gil_enabled_after"] = build_info()["gil_enabled"]
    if gilhost is not None:
        gilhost.metric("wall_s", res["wall_s"])
    return res


def main(argv=None):
    import argparse
    import json

    ap = argparse.ArgumentParser(
        description="8 CPU or I/O tasks run sequentially, on threads, on "
                    "processes, with asyncio and (3.14+) on an interpreter pool; "
                    "prints JSON results.")
    ap.add_argument("--family", choices=FAMILIES + ("all",), default="all")
    ap.add_argument("--mode", choices=MODES + ("all",), default="all")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("-n", "--n", type=int, default=3_000_000,
                    help="CPU task: sum of squares of range(N) (3,000,000)")
    ap.add_argument("--sleep-s", type=float, default=0.5, help="I/O task sleep (0.5)")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--start-method", default="spawn",
                    choices=("spawn", "fork", "forkserver"))
    ap.add_argument("--quick", action="store_true", help="n = 300,000, sleep 0.1 s")
    a = ap.parse_args(argv)
    n, sleep_s = (300_000, 0.1) if a.quick else (a.n, a.sleep_s)

    b = build_info()
    # The build goes to stderr so stdout stays pure JSON.
    print("Python %s, free-threaded build: %s, GIL enabled: %s"
          % (b["version"], b["free_threaded"], b["gil_enabled"]), file=sys.stderr)
    out = []
    for family in FAMILIES if a.family == "all" else (a.family,):
        for mode in MODES if a.mode == "all" else (a.mode,):
            if mode == "interpreters" and sys.version_info < (3, 14):
                continue  # InterpreterPoolExecutor is new in 3.14
            r = run(family, mode, a.tasks, n, sleep_s, a.workers, a.start_method)
            out.append({"case": "%s_%s" % (family, mode), "result": r})
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
