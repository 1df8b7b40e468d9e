"""stall: one blocking call freezes every coroutine on the event loop.

A heartbeat coroutine wants to wake every `tick_ms` (10 ms) while a handler waits
`wait_s` (0.5 s) in one of three ways:
  blocking   time.sleep inside the coroutine: the loop cannot run anything else
  asyncio    await asyncio.sleep: the loop keeps serving the heartbeat
  to_thread  await asyncio.to_thread(time.sleep, ...): the wait moves to a worker thread
The result is the heartbeat's largest gap between two wake-ups (max_gap_ms) and how
many times it woke (ticks) over the handler's wait plus a short tail.

A fourth case, debug, shows asyncio's own detector: in debug mode the loop logs any
callback that runs longer than loop.slow_callback_duration (here 0.1 s); a 0.3 s
blocking callback is scheduled and the asyncio logger's record is captured.

Standalone:  python scripts/stall.py [--case blocking|asyncio|to_thread|debug|all]
"""

import asyncio
import json
import logging
import re
import sys
import time

try:
    import gilhost
except ImportError:
    gilhost = None


async def _heartbeat(tick_s, stats):
    """Wake every tick_s and record the real gap between consecutive wake-ups."""
    last = time.perf_counter()
    while True:
        await asyncio.sleep(tick_s)
        now = time.perf_counter()
        stats["max_gap_s"] = max(stats["max_gap_s"], now - last)
        stats["ticks"] += 1
        last = now


async def _handler(how, wait_s):
    if how == "blocking":
        time.sleep(wait_s)  # the bug being demonstrated: blocks the whole loop
    elif how == "asyncio":
        await asyncio.sleep(wait_s)
    elif how == "to_thread":
        await asyncio.to_thread(time.sleep, wait_s)  # 3.9+
    else:
        raise ValueError("unknown handler %r" % (how,))


def _measure(how, wait_s, tick_ms, tail_ms):
    tick_s = tick_ms / 1000.0

    async def main():
        stats = {"max_gap_s": 0.0, "ticks": 0}
        beat = asyncio.ensure_future(_heartbeat(tick_s, stats))
        await asyncio.sleep(0)  # let the heartbeat take its first timestamp
        t0 = time.perf_counter()
        await _handler(how, wait_s)
        handler_s = time.perf_counter() - t0
        # A blocking handler returns without ever yielding, so the heartbeat has not yet
        # seen its long gap; the tail lets it wake and record it.
        await asyncio.sleep(tail_ms / 1000.0)
        beat.cancel()
        try:
            await beat
        except asyncio.CancelledError:
            pass
        return stats, handler_s

    stats, handler_s = asyncio.run(main())
    res = {
        "handler": how,
        "max_gap_ms": round(stats["max_gap_s"] * 1000.0, 2),
        "ticks": stats["ticks"],
        # Ticks an unblocked heartbeat would get in wait + tail.
        "ideal_ticks": int((wait_s * 1000.0 + tail_ms) // tick_ms),
        "handler_s": round(handler_s, 4),
        "tick_ms": tick_ms,
    }
    if gilhost is not None:
        gilhost.metric("max_gap_ms", res["max_gap_ms"])
        gilhost.metric("ticks", res["ticks"])
    return res


def blocking(wait_s=0.5, tick_ms=10.0, tail_ms=50.0):
    return _measure("blocking", wait_s, tick_ms, tail_ms)


def with_asyncio_sleep(wait_s=0.5, tick_ms=10.0, tail_ms=50.0):
    return _measure("asyncio", wait_s, tick_ms, tail_ms)


def with_to_thread(wait_s=0.5, tick_ms=10.0, tail_ms=50.0):
    return _measure("to_thread", wait_s, tick_ms, tail_ms)


class _ListHandler(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self, level=logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


# base_events logs: 'Executing %s took %.3f seconds' (same text on 3.9-3.14).
_SLOW_RE = re.compile(r"Executing .* took (\d+(?:\.\d+)?) seconds")


def debug_slow_callback(block_s=0.3, slow_callback_s=0.1):
    """Run a block_s blocking callback on a debug-mode loop and capture asyncio's warning."""
    log = logging.getLogger("asyncio")
    handler = _ListHandler()
    old_level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)  # whatever the root config, let WARNING records through

    def blocking_callback(fut):
        time.sleep(block_s)
        fut.set_result(None)

    async def main():
        loop = asyncio.get_running_loop()
        loop.slow_callback_duration = slow_callback_s
        fut = loop.create_future()
        loop.call_soon(blocking_callback, fut)
        await fut
        return loop.get_debug()

    try:
        debug_on = asyncio.run(main(), debug=True)
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)

    messages = [r.getMessage() for r in handler.records]
    slow = [m for m in messages if _SLOW_RE.search(m) and "blocking_callback" in m]
    reported = float(_SLOW_RE.search(slow[0]).group(1)) if slow else None
    res = {
        "debug": debug_on,
        "logged": bool(slow),
        "reported_s": reported,
        "block_s": block_s,
        "slow_callback_s": slow_callback_s,
        "message": slow[0] if slow else None,
        "asyncio_records": len(messages),
    }
    if gilhost is not None and reported is not None:
        gilhost.metric("reported_s", reported)
    return res


CASES = {
    "blocking": blocking,
    "asyncio": with_asyncio_sleep,
    "to_thread": with_to_thread,
    "debug": debug_slow_callback,
}


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", choices=sorted(CASES) + ["all"], default="all")
    p.add_argument("--wait-s", type=float, default=0.5)
    p.add_argument("--tick-ms", type=float, default=10.0)
    args = p.parse_args(argv)
    names = list(CASES) if args.case == "all" else [args.case]
    for name in names:
        if name == "debug":
            res = debug_slow_callback()
        else:
            res = CASES[name](wait_s=args.wait_s, tick_ms=args.tick_ms)
        print(json.dumps({name: res}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
