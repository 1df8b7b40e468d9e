"""taskgroup: what happens to sibling tasks when one of three fails.

Three tasks: "fast" finishes after fast_s (0.1 s), "failing" raises ValueError after
fail_s (0.2 s), "slow" would finish after slow_s (1.0 s).
  gather            asyncio.gather raises the ValueError at ~0.2 s but leaves "slow"
                    running; the result says so, then lets it finish (it completes).
  taskgroup         asyncio.TaskGroup (3.11+) cancels "slow" and raises an
                    ExceptionGroup, caught with except*, at ~0.2 s.  The code lives in
                    taskgroup_tg.py, imported inside the call: on 3.9/3.10 that import is
                    a SyntaxError, which is the outcome the experiment records there.
  taskgroup_plain   the same TaskGroup without except* (plain `except Exception`): it
                    compiles everywhere, so 3.9/3.10 fail at run time with AttributeError
                    (asyncio has no TaskGroup).

Standalone:  python scripts/taskgroup.py [--case gather|taskgroup|taskgroup_plain|all]
"""

import asyncio
import json
import sys
import time

try:
    import gilhost
except ImportError:
    gilhost = None


async def _job(name, delay_s, fail, log):
    """Sleep, then succeed or raise; log records how the task ended."""
    try:
        await asyncio.sleep(delay_s)
    except asyncio.CancelledError:
        log[name] = "cancelled"
        raise
    if fail:
        log[name] = "failed"
        raise ValueError("%s failed after %.1f s" % (name, delay_s))
    log[name] = "completed"
    return name


def gather(fast_s=0.1, fail_s=0.2, slow_s=1.0):
    async def main():
        log = {}
        t0 = time.perf_counter()
        tasks = [asyncio.ensure_future(_job("fast", fast_s, False, log)),
                 asyncio.ensure_future(_job("failing", fail_s, True, log)),
                 asyncio.ensure_future(_job("slow", slow_s, False, log))]
        error = None
        try:
            await asyncio.gather(*tasks)
        except ValueError as e:
            error = e
        error_at = time.perf_counter() - t0
        # The point of the case: gather propagated the error but did not cancel "slow".
        third_running = not tasks[2].done()
        # Let the orphan finish by itself (bounded, so a bug cannot hang the run).
        await asyncio.wait([tasks[2]], timeout=slow_s * 2 + 1.0)
        third_done_at = time.perf_counter() - t0
        if not tasks[2].done():
            tasks[2].cancel()
        return {
            "error": type(error).__name__ if error is not None else None,
            "error_at_s": round(error_at, 4),
            "first_outcome": log.get("fast"),
            "third_running_after_error": third_running,
            "third_outcome": log.get("slow"),
            "third_done_at_s": round(third_done_at, 4),
        }

    res = asyncio.run(main())
    if gilhost is not None:
        gilhost.metric("error_at_s", res["error_at_s"])
    return res


def taskgroup(fast_s=0.1, fail_s=0.2, slow_s=1.0):
    # Imported here, not at the top: a SyntaxError on <3.11 must fail this case only.
    import taskgroup_tg

    res = asyncio.run(taskgroup_tg.run(_job, fast_s, fail_s, slow_s))
    if gilhost is not None:
        gilhost.metric("elapsed_s", res["elapsed_s"])
    return res


def taskgroup_plain(fast_s=0.1, fail_s=0.2, slow_s=1.0):
    async def main():
        log = {}
        t0 = time.perf_counter()
        tasks = []
        caught = None
        try:
            # AttributeError here on 3.9/3.10: the module compiles, the feature is missing.
            async with asyncio.TaskGroup() as tg:
                tasks.append(tg.create_task(_job("fast", fast_s, False, log)))
                tasks.append(tg.create_task(_job("failing", fail_s, True, log)))
                tasks.append(tg.create_task(_job("slow", slow_s, False, log)))
        except Exception as e:  # ExceptionGroup is an Exception subclass (3.11+)
            if isinstance(e, AttributeError):
                raise
            caught = e
        return {
            "elapsed_s": round(time.perf_counter() - t0, 4),
            "caught_with": "except Exception",
            "group_type": type(caught).__name__ if caught is not None else None,
            "exceptions": [type(x).__name__ + ": " + str(x)
                           for x in getattr(caught, "exceptions", ())],
            "first_outcome": log.get("fast"),
            "third_outcome": log.get("slow"),
            "third_cancelled": tasks[2].cancelled(),
        }

    return asyncio.run(main())


CASES = {"gather": gather, "taskgroup": taskgroup, "taskgroup_plain": taskgroup_plain}


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=sorted(CASES) + ["all"], default="all")
    args = p.parse_args(argv)
    names = list(CASES) if args.case == "all" else [args.case]
    failed = 0
    for name in names:
        try:
            res = CASES[name]()
        except Exception as e:  # SyntaxError / AttributeError before 3.11 are results here
            failed += 1
            res = {"error": type(e).__name__, "message": str(e)}
        print(json.dumps({name: res}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
