"""cpu_bound: 8 equal pure-Python CPU jobs, run sequentially, on thread pools,
on process pools, on interpreter pools (3.14+) and (under gilhost) in N
subinterpreters.

Each job is ``sum(i * i % 7 for i in range(n))``. Pool creation is inside the
timing, as in the article. Every job's value is checked against the exact
closed form of that sum (i*i % 7 repeats with period 7), which is what the
sequential loop computes -- the ``sequential`` case checks its own loop against
it too -- so a wrong or missing result in any mode raises instead of being timed.

Under gilhost each function is called with the merged [params] as keyword
arguments; standalone: ``python cpu_bound.py --help``.
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
    import multiprocessing  # noqa: F401
    from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor  # noqa: F401
    if sys.version_info >= (3, 14):
        from concurrent.futures import InterpreterPoolExecutor  # noqa: F401
        import interpreter_pool  # noqa: F401  (scripts/interpreter_pool.py)


# A generous bound on any one wait, so a broken pool never hangs a standalone run
# (under gilhost the run's own timeout kills the whole process group anyway).
WAIT_TIMEOUT_S = 600.0

# i*i % 7 for i = 0..6; the sequence repeats with period 7.
_RESIDUES = [i * i % 7 for i in range(7)]


def job(n):
    """The measured unit of work: a pure-Python loop of n iterations."""
    return sum(i * i % 7 for i in range(n))


def expected_job(n):
    """Exact value of job(n) without the loop, to verify every mode cheaply."""
    full, rest = divmod(n, 7)
    return full * sum(_RESIDUES) + sum(_RESIDUES[:rest])


def empty_task():
    return None


def _cpu_times():
    """CPU seconds of this process (all threads) plus reaped children.

    Pool workers are reaped by shutdown(wait=True), so their CPU shows up in the
    children fields by the time we read the end value.
    """
    t = os.times()
    return time.process_time(), t.children_user + t.children_system


def _check(values, jobs, n):
    if len(values) != jobs:
        raise RuntimeError("expected %d results, got %d" % (jobs, len(values)))
    want = expected_job(n)
    bad = [i for i, v in enumerate(values) if v != want]
    if bad:
        raise RuntimeError("jobs %r returned %r, expected %d"
                           % (bad, [values[i] for i in bad], want))
    return sum(values)


def _result(mode, values, jobs, n, wall, cpu0, cpu1, **extra):
    checksum = _check(values, jobs, n)
    self_cpu = cpu1[0] - cpu0[0]
    child_cpu = cpu1[1] - cpu0[1]
    res = {
        "mode": mode,
        "jobs": jobs,
        "n": n,
        "wall_s": round(wall, 6),
        "cpu_s": round(self_cpu + child_cpu, 6),
        "children_cpu_s": round(child_cpu, 6),
        # CPU time / wall time: ~1 means one core busy, the GIL signature for threads.
        "parallelism": round((self_cpu + child_cpu) / wall, 3) if wall > 0 else None,
        "checksum": checksum,
        "expected_checksum": jobs * expected_job(n),
    }
    res.update(extra)
    if gilhost is not None:
        gilhost.metric("wall_s", res["wall_s"])
    return res


def _collect(futures):
    """Results in submission order; the first failure (or a timeout) is raised."""
    return [f.result(timeout=WAIT_TIMEOUT_S) for f in futures]


def sequential(jobs, n):
    """The reference: all jobs one after another in this thread."""
    cpu0 = _cpu_times()
    t0 = time.perf_counter()
    values = [job(n) for _ in range(jobs)]
    wall = time.perf_counter() - t0
    cpu1 = _cpu_times()
    return _result("sequential", values, jobs, n, wall, cpu0, cpu1)


def threads(jobs, n, workers):
    """ThreadPoolExecutor with `workers` threads; pool start and stop are timed."""
    from concurrent.futures import ThreadPoolExecutor

    cpu0 = _cpu_times()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        values = _collect([pool.submit(job, n) for _ in range(jobs)])
    wall = time.perf_counter() - t0
    cpu1 = _cpu_times()
    return _result("threads", values, jobs, n, wall, cpu0, cpu1, workers=workers)


def _process_pool_factory(workers, start_method):
    """A no-argument pool constructor, imported and configured before the clock
    starts, so the timing holds pool creation but not module imports."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Explicit context: the default differs by OS and version (fork on Linux up
    # to 3.13, forkserver from 3.14, spawn on macOS where the article ran).
    ctx = multiprocessing.get_context(start_method)
    return lambda: ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def _run_pool(pool, fn, args_list):
    try:
        values = _collect([pool.submit(fn, *args) for args in args_list])
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return values


def processes(jobs, n, workers, start_method="spawn"):
    """ProcessPoolExecutor with `workers` processes; pool start and stop are timed."""
    make_pool = _process_pool_factory(workers, start_method)
    cpu0 = _cpu_times()
    t0 = time.perf_counter()
    pool = make_pool()
    values = _run_pool(pool, job, [(n,)] * jobs)
    wall = time.perf_counter() - t0
    cpu1 = _cpu_times()
    return _result("processes", values, jobs, n, wall, cpu0, cpu1,
                   workers=workers, start_method=start_method)


def empty_pool(workers=8, tasks=8, start_method="spawn", jobs=None, n=None):
    """Fixed cost of a process pool: start `workers`, run `tasks` empty tasks, stop.

    jobs/n are accepted (and ignored) so the shared [params] can be merged in.
    """
    make_pool = _process_pool_factory(workers, start_method)
    t0 = time.perf_counter()
    pool = make_pool()
    values = _run_pool(pool, empty_task, [()] * tasks)
    wall = time.perf_counter() - t0
    if values != [None] * tasks:
        raise RuntimeError("empty tasks returned %r" % (values,))
    return {"mode": "empty_pool", "workers": workers, "tasks": tasks,
            "start_method": start_method, "wall_s": round(wall, 6)}



def _interpreter_pool_factory(workers):
    """A no-argument InterpreterPoolExecutor constructor (3.14+: PEP 734's
    concurrent.interpreters under concurrent.futures), imported before the
    clock starts. Each worker is an OS thread running its own interpreter with
    its own GIL; `job` reaches it pickled by reference (cpu_bound.job), so the
    worker imports this module once."""
    from concurrent.futures import InterpreterPoolExecutor  # noqa: F401

    from interpreter_pool import interpreter_pool as make_pool  # scripts/interpreter_pool.py

    return lambda: make_pool(workers)


def interpreter_pool(jobs, n, workers):
    """InterpreterPoolExecutor with `workers` interpreters; pool start (each
    worker's interpreter creation and its import of this module) and stop are
    timed, as for the thread and process pools."""
    make_pool = _interpreter_pool_factory(workers)
    cpu0 = _cpu_times()
    t0 = time.perf_counter()
    pool = make_pool()
    values = _run_pool(pool, job, [(n,)] * jobs)
    wall = time.perf_counter() - t0
    cpu1 = _cpu_times()
    return _result("interpreter_pool", values, jobs, n, wall, cpu0, cpu1, workers=workers)


def empty_interpreter_pool(workers=8, tasks=8, jobs=None, n=None):
    """Fixed cost of an interpreter pool: create `workers` interpreters, run
    `tasks` empty tasks, stop -- the counterpart of empty_pool's processes."""
    make_pool = _interpreter_pool_factory(workers)
    t0 = time.perf_counter()
    pool = make_pool()
    values = _run_pool(pool, empty_task, [()] * tasks)
    wall = time.perf_counter() - t0
    if values != [None] * tasks:
        raise RuntimeError("empty tasks returned %r" % (values,))
    return {"mode": "empty_interpreter_pool", "workers": workers, "tasks": tasks,
            "wall_s": round(wall, 6)}


def share(jobs, n, subinterpreters):
    """One subinterpreter's share of the jobs: jobs / subinterpreters of them.

    gilhost calls this once in each of N subinterpreters, one OS thread each
    (own GIL by default, gil = "shared" for the contrast), so N of these
    together run all `jobs`. Only builtins are used here: a subinterpreter
    with its own GIL cannot import single-phase-init extension modules.
    """
    if subinterpreters < 1 or jobs % subinterpreters:
        raise ValueError("jobs=%d is not divisible by subinterpreters=%d"
                         % (jobs, subinterpreters))
    mine = jobs // subinterpreters
    t0 = time.perf_counter()
    c0 = time.thread_time()
    values = [job(n) for _ in range(mine)]
    cpu = time.thread_time() - c0
    wall = time.perf_counter() - t0
    checksum = _check(values, mine, n)
    return {"mode": "subinterpreter_share", "jobs": mine, "n": n,
            "subinterpreters": subinterpreters, "wall_s": round(wall, 6),
            "thread_cpu_s": round(cpu, 6), "checksum": checksum,
            "expected_checksum": mine * expected_job(n)}


CASES = ("sequential", "threads", "processes", "empty_pool", "share",
         "interpreter_pool", "empty_interpreter_pool")


def main(argv=None):
    import argparse
    import json

    ap = argparse.ArgumentParser(
        description="8 equal CPU-bound jobs: sequential, thread pool, process "
                    "pool, interpreter pool (3.14+), empty-pool fixed costs, or one "
                    "subinterpreter's share.")
    ap.add_argument("--case", choices=CASES + ("all",), default="all",
                    help="what to run (default: all; 'all' sweeps workers over --workers)")
    ap.add_argument("--jobs", type=int, default=8, help="number of equal jobs (8)")
    ap.add_argument("-n", "--n", type=int, default=3_000_000,
                    help="loop iterations per job (3,000,000)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8],
                    help="pool sizes to sweep (1 2 4 8)")
    ap.add_argument("--start-method", default="spawn",
                    choices=("spawn", "fork", "forkserver"))
    ap.add_argument("--subinterpreters", type=int, default=1,
                    help="for --case share: the N whose 1/N share is run here "
                         "(standalone runs just this one share, in this interpreter)")
    ap.add_argument("--quick", action="store_true", help="n = 200,000")
    a = ap.parse_args(argv)
    n = 200_000 if a.quick else a.n

    out = []
    todo = CASES if a.case == "all" else (a.case,)
    for case in todo:
        if case == "sequential":
            out.append({"case": case, "result": sequential(a.jobs, n)})
        elif case in ("threads", "processes", "interpreter_pool"):
            if case == "interpreter_pool" and sys.version_info < (3, 14):
                continue  # InterpreterPoolExecutor is new in 3.14
            for w in a.workers:
                if case == "threads":
                    r = threads(a.jobs, n, w)
                elif case == "processes":
                    r = processes(a.jobs, n, w, a.start_method)
                else:
                    r = interpreter_pool(a.jobs, n, w)
                out.append({"case": "%s[workers=%d]" % (case, w), "result": r})
        elif case == "empty_pool":
            out.append({"case": case, "result": empty_pool(8, 8, a.start_method)})
        elif case == "empty_interpreter_pool" and sys.version_info >= (3, 14):
            out.append({"case": case, "result": empty_interpreter_pool(8, 8)})
        elif case == "share":
            out.append({"case": case, "result": share(a.jobs, n, a.subinterpreters)})
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
