"""TaskGroup + except* half of the taskgroup experiment (Python 3.11+ only).

Kept apart from taskgroup.py on purpose: `except*` is new syntax, so on 3.9/3.10 this
file cannot even be compiled.  taskgroup.taskgroup() imports it inside the call, so
the run records the SyntaxError the experiment is about, while the gather case in
taskgroup.py still runs on every version.
"""

import asyncio
import time


async def run(job, fast_s, fail_s, slow_s):
    """Three tasks in a TaskGroup; the failing one must cancel the slow one."""
    log = {}
    t0 = time.perf_counter()
    tasks = []
    caught = None
    try:
        async with asyncio.TaskGroup() as tg:
            tasks.append(tg.create_task(job("fast", fast_s, False, log)))
            tasks.append(tg.create_task(job("failing", fail_s, True, log)))
            tasks.append(tg.create_task(job("slow", slow_s, False, log)))
    except* ValueError as eg:
        # `return` is not allowed inside except*, so keep the group for afterwards.
        caught = eg
    elapsed = time.perf_counter() - t0
    return {
        "elapsed_s": round(elapsed, 4),
        "caught_with": "except*" if caught is not None else None,
        "group_type": type(caught).__name__ if caught is not None else None,
        "exceptions": [type(e).__name__ + ": " + str(e) for e in caught.exceptions] if caught else [],
        "first_outcome": log.get("fast"),
        "third_outcome": log.get("slow"),
        "third_cancelled": tasks[2].cancelled(),
    }
