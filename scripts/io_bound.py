"""io_bound: N simulated requests that each wait `delay_s` (100 ms by default).

Four ways to wait for N requests:
  sequential       one after the other, time.sleep (the N x delay baseline)
  thread_pool      ThreadPoolExecutor with its default worker count, min(32, cpus + 4)
  thread_per_task  one threading.Thread per request, all started, then all joined
  asyncio_gather   one coroutine per request (asyncio.sleep), awaited with asyncio.gather

Waiting releases the GIL (time.sleep) or never needs a thread (asyncio.sleep), so
the interesting figures are how close each mode gets to a single `delay_s`, and what
it costs in memory: under gilhost every run is a fresh process, so the sampled peak
RSS belongs to one mode.  Each result also carries the kernel high-water mark of
this process (`maxrss_mb`), and every mode checks that all N requests completed.

Standalone:  python scripts/io_bound.py --mode asyncio_gather --n 10000
             python scripts/io_bound.py             (all modes, each in its own process)
"""

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time

try:
    import gilhost
except ImportError:
    gilhost = None

try:
    import resource
except ImportError:  # not on Windows; the figure is optional
    resource = None


def _maxrss_mb():
    """Kernel high-water RSS of this process (ru_maxrss is KiB on Linux)."""
    if resource is None:
        return None
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _result(mode, n, delay_s, completed, workers, wall_s):
    # A lost request would make any timing meaningless, so it is an error, not a figure.
    if completed != n:
        raise RuntimeError("%s: %d of %d requests completed" % (mode, completed, n))
    ideal_serial_s = n * delay_s
    res = {
        "mode": mode,
        "wall_s": round(wall_s, 6),
        "tasks": n,
        "completed": completed,
        "workers": workers,
        "delay_s": delay_s,
        # How many requests were waiting at once, on average: n*delay / wall.
        # sequential is ~1, a pool is ~workers, one-thread-per-task and asyncio approach n.
        "speedup": round(ideal_serial_s / wall_s, 3) if wall_s > 0 else None,
        "maxrss_mb": _maxrss_mb(),
    }
    if gilhost is not None:
        gilhost.metric("wall_s", res["wall_s"])
        if res["maxrss_mb"] is not None:
            gilhost.metric("maxrss_mb", res["maxrss_mb"])
    return res


class _Counter:
    """Completed-request counter; the lock keeps the count exact on every build."""

    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()

    def add(self):
        with self._lock:
            self.value += 1


def _blocking_request(delay_s, counter):
    time.sleep(delay_s)
    counter.add()


def sequential(n=100, delay_s=0.1):
    counter = _Counter()
    t0 = time.perf_counter()
    for _ in range(n):
        _blocking_request(delay_s, counter)
    return _result("sequential", n, delay_s, counter.value, 1, time.perf_counter() - t0)


def _default_pool_workers():
    # What ThreadPoolExecutor(max_workers=None) picks: min(32, cpus + 4), where 3.13+
    # counts the CPUs this process may use (os.process_cpu_count) and older versions
    # all CPUs (os.cpu_count).
    count = getattr(os, "process_cpu_count", os.cpu_count)() or 1
    return min(32, count + 4)


def thread_pool(n=100, delay_s=0.1, workers=None):
    """ThreadPoolExecutor; workers=None keeps the library default (that is the experiment)."""
    counter = _Counter()
    t0 = time.perf_counter()  # pool creation and teardown are part of the cost
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        # _max_workers is private but present on 3.9-3.14; fall back to the documented rule.
        used = getattr(pool, "_max_workers", None) or workers or _default_pool_workers()
        futures = [pool.submit(_blocking_request, delay_s, counter) for _ in range(n)]
        for f in futures:
            f.result()  # re-raises a worker's exception here instead of losing it
    return _result("thread_pool", n, delay_s, counter.value, used, time.perf_counter() - t0)


def thread_per_task(n=100, delay_s=0.1):
    counter = _Counter()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=_blocking_request, args=(delay_s, counter))
               for _ in range(n)]
    started = []
    try:
        for t in threads:
            t.start()  # RuntimeError "can't start new thread" past the OS thread limit
            started.append(t)
    finally:
        # Join what was started even on failure, so no thread outlives the run.
        for t in started:
            t.join()
    return _result("thread_per_task", n, delay_s, counter.value, n, time.perf_counter() - t0)


def asyncio_gather(n=100, delay_s=0.1):
    async def request(state):
        await asyncio.sleep(delay_s)
        state[0] += 1  # single event-loop thread: no lock needed

    async def main():
        state = [0]
        await asyncio.gather(*(request(state) for _ in range(n)))
        return state[0]

    t0 = time.perf_counter()  # loop creation is part of the cost, like pool creation
    completed = asyncio.run(main())
    return _result("asyncio_gather", n, delay_s, completed, 1, time.perf_counter() - t0)


# Standalone defaults: sequential is N x delay (10 s at N=100) and the pool N x delay / workers
# (about 167 s at N=10,000 with 6 workers on 2 CPUs), so those two stop early.
DEFAULT_NS = {
    "sequential": [100],
    "thread_pool": [100, 1000],
    "thread_per_task": [100, 1000, 10000],
    "asyncio_gather": [100, 1000, 10000],
}

MODES = {
    "sequential": sequential,
    "thread_pool": thread_pool,
    "thread_per_task": thread_per_task,
    "asyncio_gather": asyncio_gather,
}


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=sorted(MODES) + ["all"], default="all")
    p.add_argument("--n", type=int, nargs="+", default=None,
                   help="request counts (default per mode: sequential 100, thread_pool 100 1000, others 100 1000 10000)")
    p.add_argument("--delay-s", type=float, default=0.1, help="wait per request (default 0.1)")
    p.add_argument("--workers", type=int, default=None, help="thread_pool workers (default: library default)")
    args = p.parse_args(argv)

    if args.mode != "all":
        for n in args.n or [100]:
            kwargs = {"n": n, "delay_s": args.delay_s}
            if args.mode == "thread_pool" and args.workers:
                kwargs["workers"] = args.workers
            print(json.dumps(MODES[args.mode](**kwargs)), flush=True)
        return 0

    # All modes: each (mode, n) in a fresh process of this interpreter, so that
    # maxrss_mb is that mode's own peak, as under gilhost.
    for mode in MODES:
        ns = args.n or DEFAULT_NS[mode]
        for n in ns:
            cmd = [sys.executable, os.path.abspath(__file__), "--mode", mode,
                   "--n", str(n), "--delay-s", str(args.delay_s)]
            if mode == "thread_pool" and args.workers:
                cmd += ["--workers", str(args.workers)]
            rc = subprocess.call(cmd)
            if rc != 0:
                return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
