"""noguard: a process pool created at module top level WITHOUT an `if __name__ == "__main__"` guard.

This file is deliberately unguarded: everything below runs whenever the module is
executed or imported.  Run it as a program (gilhost runs it in main mode):

    python scripts/noguard.py --start-method spawn        # fails: BrokenProcessPool
    python scripts/noguard.py --start-method fork         # works
    python scripts/noguard.py --start-method forkserver   # fails like spawn (3.14: ConnectionResetError)
    python scripts/noguard.py --start-method default      # this version's default method

Why spawn fails: a spawned worker starts a fresh interpreter and re-runs this file as
`__mp_main__` to rebuild the parent's main module.  Without the guard that re-run
creates a pool of its own and submits to it, and multiprocessing refuses to start a
process from a child that is still bootstrapping ("An attempt has been made to start
a new process before the current process has finished its bootstrapping phase").
That worker dies, so the parent's futures fail with BrokenProcessPool.  forkserver
does the same in its server process (it preloads __main__).  fork copies the parent
instead of re-running the file, so it works.  Python 3.14 makes forkserver the Linux
default, so unguarded code that used to work starts failing there; and since 3.14's
forkserver authenticates each request with a challenge over its socket, the parent
meets the dead server in that handshake and submit() raises ConnectionResetError
instead of the futures failing with BrokenProcessPool.

Outcome: a one-line JSON summary on stdout (also gilhost.result); on failure the
pool's exception is re-raised so the run ends as an error of that type (exit status
1 under plain python); on success the exit status is 0.  Every wait is bounded by
--timeout, and a pool that neither finishes nor breaks has its workers terminated.
"""

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import sys
import time

try:
    import gilhost
except ImportError:
    gilhost = None


def square(x):
    return x * x


# Printed by the parent and by every re-run of this file, so the output shows the
# re-import: a spawned worker prints __name__=__mp_main__.
print("noguard: top level running as __name__=%s pid=%d" % (__name__, os.getpid()), flush=True)

_parser = argparse.ArgumentParser(description="Unguarded top-level ProcessPoolExecutor.")
_parser.add_argument("--start-method", default="spawn",
                     choices=["spawn", "fork", "forkserver", "default"],
                     help="multiprocessing start method (default: spawn; 'default' = this version's)")
_parser.add_argument("--workers", type=int, default=2)
_parser.add_argument("--tasks", type=int, default=4)
_parser.add_argument("--timeout", type=float, default=20.0,
                     help="seconds to wait for all results before giving up (default 20)")
_args = _parser.parse_args()

_method = multiprocessing.get_start_method() if _args.start_method == "default" else _args.start_method
_summary = {
    "start_method": _method,
    "requested": _args.start_method,
    "python": "%d.%d.%d" % sys.version_info[:3],
    "workers": _args.workers,
    "tasks": _args.tasks,
}
_error = None
_t0 = time.perf_counter()
_executor = concurrent.futures.ProcessPoolExecutor(
    max_workers=_args.workers, mp_context=multiprocessing.get_context(_method))
try:
    _futures = [_executor.submit(square, i) for i in range(_args.tasks)]
    _deadline = time.monotonic() + _args.timeout
    _results = [f.result(timeout=max(0.0, _deadline - time.monotonic())) for f in _futures]
    expected = [square(i) for i in range(_args.tasks)]
    if _results != expected:
        raise RuntimeError("wrong results %r, expected %r" % (_results, expected))
    _summary.update(ok=True, results=_results)
except BaseException as e:  # BrokenProcessPool, TimeoutError, RuntimeError, KeyboardInterrupt
    if __name__ != "__main__":
        # A re-imported copy (spawn worker, forkserver server): the bootstrapping
        # RuntimeError must kill it, exactly as it would without this try.
        raise
    _error = e
    _summary.update(ok=False, error=type(e).__name__, message=str(e))
    if isinstance(e, concurrent.futures.TimeoutError):
        # Neither finished nor broken: stop the workers so shutdown cannot wait on them.
        for _p in list((getattr(_executor, "_processes", None) or {}).values()):
            _p.terminate()
finally:
    _executor.shutdown(wait=True, cancel_futures=True)
_summary["wall_s"] = round(time.perf_counter() - _t0, 4)

if __name__ == "__main__":  # only reporting is guarded: a re-imported copy never gets here
    print("noguard: " + json.dumps(_summary), flush=True)
    if gilhost is not None:
        gilhost.result(_summary)
    if _error is not None:
        raise _error
    sys.exit(0)
