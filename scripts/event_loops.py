"""Experiment 8 (event_loops): one asyncio event loop vs one event loop per thread.

32 tasks x 5 steps run either on a single loop (one thread) or spread round-robin over
one loop per thread (4 threads). A step is an I/O wait (asyncio.sleep), a pure-Python
CPU loop, or both. Under the GIL the CPU part cannot overlap, so per-thread loops only
help on a free-threaded build; I/O waits overlap in both layouts. A threading.Barrier
releases every thread at once so that thread start-up is outside the timing.

A second part measures cross-thread hand-offs between loops:
asyncio.run_coroutine_threadsafe (submit a coroutine to another thread's loop and await
the concurrent.futures.Future) and loop.call_soon_threadsafe (ping-pong of callbacks).

Call-mode functions (used by configs/event_loops.toml): run_loops, compare, handoff.
The config gives every case the same [params]; each function ignores the ones meant for
the others (**_other_params).
Standalone: python scripts/event_loops.py --help
"""

import argparse
import asyncio
import json
import sys
import sysconfig
import threading
import time

try:
    import gilhost
except ImportError:
    gilhost = None

WORKLOADS = ("io", "cpu", "mixed")
MODES = ("single", "per_thread")
# Generous bound for every wait, so a broken build or a deadlock ends as an error, not a hang.
JOIN_TIMEOUT_S = 120.0


def _build_info():
    """Free-threaded build or not, and whether the GIL is on right now (None if unknown)."""
    is_enabled = getattr(sys, "_is_gil_enabled", None)
    return {
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": bool(is_enabled()) if is_enabled is not None else True,
    }


def cpu_work(iters):
    """Pure-Python integer loop; holds the GIL (on GIL builds) for its whole duration."""
    total = 0
    for i in range(iters):
        total += i * i % 7
    return total


async def _task(task_id, steps, workload, io_s, cpu_iters, expected_cpu):
    """One task: `steps` steps of the chosen workload. Returns (steps done, CPU results ok)."""
    done = 0
    cpu_ok = 0
    for _ in range(steps):
        if workload in ("cpu", "mixed"):
            if cpu_work(cpu_iters) == expected_cpu:
                cpu_ok += 1
        if workload in ("io", "mixed"):
            await asyncio.sleep(io_s)
        done += 1
    return done, cpu_ok


def _loop_thread(index, task_ids, barrier, out, steps, workload, io_s, cpu_iters, expected_cpu):
    """Body of one thread: own event loop, wait at the barrier, run its share of tasks."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)

        async def main():
            coros = [_task(t, steps, workload, io_s, cpu_iters, expected_cpu) for t in task_ids]
            return await asyncio.gather(*coros)

        # The loop exists before the barrier; the clock of this thread starts after it.
        barrier.wait(timeout=JOIN_TIMEOUT_S)
        t0 = time.perf_counter()
        results = loop.run_until_complete(main())
        t1 = time.perf_counter()
        out[index] = {
            "start": t0,
            "end": t1,
            "tasks": len(task_ids),
            "steps_done": sum(r[0] for r in results),
            "cpu_ok": sum(r[1] for r in results),
            "thread_id": threading.get_ident(),
        }
    except BaseException as exc:  # reported by the caller, never lost in the thread
        out[index] = {"error": "%s: %s" % (type(exc).__name__, exc)}
        barrier.abort()
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def run_loops(mode="single", workload="mixed", tasks=32, steps=5, threads=4,
              io_ms=20.0, cpu_iters=50_000, **_other_params):
    """Run `tasks` tasks x `steps` steps on one loop ("single") or on `threads` loops ("per_thread").

    Returns wall_s (first thread start after the barrier -> last thread end), tasks, loops,
    steps_done / steps_expected, cpu_ok / cpu_expected and `correct`. Raises on a wrong count.
    """
    if mode not in MODES:
        raise ValueError("mode must be one of %s, not %r" % (MODES, mode))
    if workload not in WORKLOADS:
        raise ValueError("workload must be one of %s, not %r" % (WORKLOADS, workload))
    loops = 1 if mode == "single" else int(threads)
    # The reference CPU result, computed once before any timing, checks every CPU step.
    expected_cpu = cpu_work(cpu_iters)
    shares = [list(range(k, tasks, loops)) for k in range(loops)]
    out = [None] * loops
    # Main thread is one party too: the clock starts only once every thread exists.
    barrier = threading.Barrier(loops + 1)
    workers = [
        threading.Thread(
            target=_loop_thread,
            args=(k, shares[k], barrier, out, steps, workload, io_ms / 1000.0, cpu_iters, expected_cpu),
            name="loop-%d" % k,
            daemon=True,
        )
        for k in range(loops)
    ]
    for w in workers:
        w.start()
    try:
        barrier.wait(timeout=JOIN_TIMEOUT_S)
    except threading.BrokenBarrierError:
        pass  # a thread failed; its error is reported below
    for w in workers:
        w.join(JOIN_TIMEOUT_S)
        if w.is_alive():
            raise RuntimeError("event-loop thread %s did not finish in %.0f s" % (w.name, JOIN_TIMEOUT_S))
    errors = []
    for k, o in enumerate(out):
        if o is None:
            errors.append("loop %d gave no result" % k)
        elif "error" in o:
            errors.append("loop %d: %s" % (k, o["error"]))
    if errors:
        raise RuntimeError("event-loop thread failed: %s" % "; ".join(errors))

    steps_expected = tasks * steps
    cpu_expected = steps_expected if workload in ("cpu", "mixed") else 0
    steps_done = sum(o["steps_done"] for o in out)
    cpu_ok = sum(o["cpu_ok"] for o in out)
    correct = steps_done == steps_expected and cpu_ok == cpu_expected
    if not correct:
        raise RuntimeError("wrong counts: steps %d of %d, cpu results ok %d of %d"
                           % (steps_done, steps_expected, cpu_ok, cpu_expected))
    result = {
        "mode": mode,
        "workload": workload,
        "wall_s": round(max(o["end"] for o in out) - min(o["start"] for o in out), 6),
        "tasks": tasks,
        "steps": steps,
        "loops": loops,
        "threads_used": len({o["thread_id"] for o in out}),
        "tasks_per_loop": [o["tasks"] for o in out],
        "steps_done": steps_done,
        "steps_expected": steps_expected,
        "cpu_ok": cpu_ok,
        "cpu_expected": cpu_expected,
        "correct": correct,
        "io_ms": io_ms,
        "cpu_iters": cpu_iters,
    }
    result.update(_build_info())
    return result


def compare(workload="mixed", tasks=32, steps=5, threads=4, io_ms=20.0, cpu_iters=50_000,
            rounds=3, **_other_params):
    """Both layouts in one run; speedup = single wall / per-thread wall (the article's ratio).

    The layouts alternate for `rounds` rounds and each keeps its best (lowest) wall time, so
    that one scheduling hiccup on a busy machine cannot fake a speedup or a slowdown.
    """
    single_walls, per_thread_walls = [], []
    correct = True
    for _ in range(max(1, int(rounds))):
        single = run_loops("single", workload, tasks, steps, threads, io_ms, cpu_iters)
        per_thread = run_loops("per_thread", workload, tasks, steps, threads, io_ms, cpu_iters)
        single_walls.append(single["wall_s"])
        per_thread_walls.append(per_thread["wall_s"])
        correct = correct and single["correct"] and per_thread["correct"]
    best_single, best_per_thread = min(single_walls), min(per_thread_walls)
    speedup = best_single / best_per_thread if best_per_thread > 0 else None
    if gilhost is not None:
        gilhost.metric("single_wall_s", best_single)
        gilhost.metric("per_thread_wall_s", best_per_thread)
    result = {
        "workload": workload,
        "single_wall_s": best_single,
        "per_thread_wall_s": best_per_thread,
        "speedup": round(speedup, 3) if speedup is not None else None,
        "rounds": len(single_walls),
        "single_walls_s": single_walls,
        "per_thread_walls_s": per_thread_walls,
        "tasks": tasks,
        "steps": steps,
        "loops": per_thread["loops"],
        "correct": correct,
    }
    result.update(_build_info())
    return result


def _percentiles_ms(samples_s):
    """p50/p95/p99/max in milliseconds (nearest rank) of a list of durations in seconds."""
    if not samples_s:
        return {"p50": None, "p95": None, "p99": None, "max": None}
    s = sorted(samples_s)
    n = len(s)

    def rank(p):
        return s[min(n - 1, max(0, int(round(p / 100.0 * n + 0.5)) - 1))] * 1000.0

    return {"p50": round(rank(50), 4), "p95": round(rank(95), 4),
            "p99": round(rank(99), 4), "max": round(s[-1] * 1000.0, 4)}


class _WorkerLoop:
    """An event loop running forever in its own thread, until stop()."""

    def __init__(self, index):
        self.index = index
        self.loop = asyncio.new_event_loop()
        self.thread_id = None
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="worker-loop-%d" % index, daemon=True)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.thread_id = threading.get_ident()
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            asyncio.set_event_loop(None)

    def start(self):
        self.thread.start()
        if not self._ready.wait(JOIN_TIMEOUT_S):
            raise RuntimeError("worker loop %d did not start" % self.index)

    def stop(self):
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(JOIN_TIMEOUT_S)
        if not self.thread.is_alive() and not self.loop.is_closed():
            self.loop.close()


async def _echo(i):
    """Runs on a worker loop: proves where it ran and yields once, like real work would."""
    await asyncio.sleep(0)
    return i, threading.get_ident()


async def _handoffs(workers, handoffs, burst, timeout_s):
    main_loop = asyncio.get_running_loop()
    main_tid = threading.get_ident()
    n = len(workers)

    # 1. run_coroutine_threadsafe: main loop -> worker loop, one at a time (latency).
    rcs_lat = []
    rcs_ok = 0
    for i in range(handoffs):
        w = workers[i % n]
        t0 = time.perf_counter()
        cfut = asyncio.run_coroutine_threadsafe(_echo(i), w.loop)
        value, tid = await asyncio.wait_for(asyncio.wrap_future(cfut), timeout_s)
        rcs_lat.append(time.perf_counter() - t0)
        if value == i and tid == w.thread_id:
            rcs_ok += 1

    # 2. run_coroutine_threadsafe, `burst` submissions in flight at once (throughput).
    t0 = time.perf_counter()
    cfuts = [asyncio.run_coroutine_threadsafe(_echo(i), workers[i % n].loop) for i in range(burst)]
    burst_results = await asyncio.wait_for(
        asyncio.gather(*(asyncio.wrap_future(f) for f in cfuts)), timeout_s)
    burst_s = time.perf_counter() - t0
    burst_ok = sum(1 for i, (value, tid) in enumerate(burst_results)
                   if value == i and tid == workers[i % n].thread_id)

    # 3. call_soon_threadsafe ping-pong: main -> worker callback -> main callback.
    # Both legs are timed with the process-wide perf_counter clock.
    cst_there, cst_back, cst_round = [], [], []
    cst_ok = 0

    def pong(fut, t_sent, expect_tid):
        t_mid = time.perf_counter()
        main_loop.call_soon_threadsafe(_deliver, fut, (t_sent, t_mid, threading.get_ident(), expect_tid))

    def _deliver(fut, payload):
        if not fut.done():  # the waiter may have timed out
            fut.set_result(payload)

    for i in range(handoffs):
        w = workers[i % n]
        fut = main_loop.create_future()
        t_sent = time.perf_counter()
        w.loop.call_soon_threadsafe(pong, fut, t_sent, w.thread_id)
        t_s, t_mid, tid, expect_tid = await asyncio.wait_for(fut, timeout_s)
        t_end = time.perf_counter()
        cst_there.append(t_mid - t_s)
        cst_back.append(t_end - t_mid)
        cst_round.append(t_end - t_s)
        # The pong ran on the worker thread, the delivery back on the main loop's thread.
        if tid == expect_tid and threading.get_ident() == main_tid:
            cst_ok += 1

    return {
        "rcs": (rcs_lat, rcs_ok), "burst": (burst_s, burst_ok),
        "cst": (cst_there, cst_back, cst_round, cst_ok),
    }


def handoff(handoffs=2_000, threads=4, burst=2_000, timeout_s=30.0, **_other_params):
    """Cross-thread hand-offs between a main loop and `threads` worker loops (one thread each).

    Returns counts (each must equal the number attempted, else this raises) and latencies in
    ms: run_coroutine_threadsafe round trips (rcs_*), a burst of `burst` in flight at once
    (burst_per_s), and call_soon_threadsafe one-way legs and round trips (cst_*).
    """
    workers = [_WorkerLoop(k) for k in range(threads)]
    try:
        for w in workers:
            w.start()
        r = asyncio.run(_handoffs(workers, handoffs, burst, timeout_s))
    finally:
        for w in workers:
            w.stop()
    alive = [w.index for w in workers if w.thread.is_alive()]
    if alive:
        raise RuntimeError("worker loops still running after stop: %s" % alive)

    rcs_lat, rcs_ok = r["rcs"]
    burst_s, burst_ok = r["burst"]
    there, back, rnd, cst_ok = r["cst"]
    correct = rcs_ok == handoffs and burst_ok == burst and cst_ok == handoffs
    if not correct:
        raise RuntimeError("hand-offs lost or misrouted: rcs %d/%d, burst %d/%d, call_soon %d/%d"
                           % (rcs_ok, handoffs, burst_ok, burst, cst_ok, handoffs))
    rcs_p = _percentiles_ms(rcs_lat)
    p_there, p_back, p_round = _percentiles_ms(there), _percentiles_ms(back), _percentiles_ms(rnd)
    result = {
        "loops": threads,
        "handoffs": handoffs,
        "rcs_count": rcs_ok,
        "rcs_p50_ms": rcs_p["p50"],
        "rcs_p99_ms": rcs_p["p99"],
        "rcs_max_ms": rcs_p["max"],
        "burst": burst,
        "burst_count": burst_ok,
        "burst_s": round(burst_s, 6),
        "burst_per_s": round(burst / burst_s, 1) if burst_s > 0 else None,
        "cst_count": cst_ok,
        "cst_to_worker_p50_ms": p_there["p50"],
        "cst_to_main_p50_ms": p_back["p50"],
        "cst_round_p50_ms": p_round["p50"],
        "cst_round_p99_ms": p_round["p99"],
        "cst_round_max_ms": p_round["max"],
        "correct": correct,
    }
    result.update(_build_info())
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case", nargs="?", default="all",
                   choices=["all", "run", "compare", "handoff"],
                   help="run: one layout x workload; compare: both layouts, speedup; "
                        "handoff: cross-thread hand-offs; all: compare for every workload + handoff")
    p.add_argument("--mode", choices=MODES, default="single", help="layout for 'run'")
    p.add_argument("--workload", choices=WORKLOADS, default=None,
                   help="workload for 'run'/'compare' (default: mixed; 'all' runs every one)")
    p.add_argument("--tasks", type=int, default=32)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=4,
                   help="loops (threads) in per_thread mode, worker loops in 'handoff'")
    p.add_argument("--io-ms", type=float, default=20.0, help="asyncio.sleep per I/O step")
    p.add_argument("--cpu-iters", type=int, default=50_000, help="loop iterations per CPU step")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds per layout in 'compare' (best kept)")
    p.add_argument("--handoffs", type=int, default=2_000)
    p.add_argument("--burst", type=int, default=2_000)
    a = p.parse_args(argv)
    common = dict(tasks=a.tasks, steps=a.steps, threads=a.threads, io_ms=a.io_ms, cpu_iters=a.cpu_iters)
    results = {}
    if a.case == "run":
        results["run"] = run_loops(a.mode, a.workload or "mixed", **common)
    elif a.case == "compare":
        results["compare"] = compare(a.workload or "mixed", rounds=a.rounds, **common)
    elif a.case == "handoff":
        results["handoff"] = handoff(a.handoffs, a.threads, a.burst)
    else:
        for wl in ([a.workload] if a.workload else WORKLOADS):
            results["compare[%s]" % wl] = compare(wl, rounds=a.rounds, **common)
        results["handoff"] = handoff(a.handoffs, a.threads, a.burst)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
