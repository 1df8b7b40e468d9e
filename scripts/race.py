"""race: several threads add 1 to one shared global counter, with and without a lock.

Whether updates are lost depends on where the interpreter may switch threads: 3.9 can switch
between the read and the write of `counter += 1`; 3.10+ only switches at calls and backward jumps,
so the plain increment survives there, but a function call between the read and the write does not.
Free-threaded builds run the threads truly in parallel and lose far more.

Run standalone: python scripts/race.py [--threads 4] [--n 1000000] [--case plain|call|locked|all]
"""
import argparse
import json
import sys
import threading

counter = 0


def _reset():
    global counter
    counter = 0


def _together(start, target, n):
    start.wait()  # every thread begins at once: a race needs them running at the same time
    target(n)


def _run_threads(target, threads, n):
    _reset()
    start = threading.Barrier(threads)
    workers = [threading.Thread(target=_together, args=(start, target, n)) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {"counter": counter, "expected": threads * n, "lost": threads * n - counter,
            "lost_pct": round(100.0 * (threads * n - counter) / (threads * n), 2)}


def _plain(n):
    global counter
    for _ in range(n):
        counter += 1


def _identity(x):
    return x


def _through_call(n):
    global counter
    for _ in range(n):
        # The call between the read of `counter` and its write gives every version a switch point.
        counter = _identity(counter) + 1


_lock = threading.Lock()


def _locked(n):
    global counter
    for _ in range(n):
        with _lock:
            counter += 1


def plain_increment(threads=4, n=1_000_000):
    return _run_threads(_plain, threads, n)


def call_increment(threads=4, n=1_000_000):
    return _run_threads(_through_call, threads, n)


def locked_increment(threads=4, n=1_000_000):
    return _run_threads(_locked, threads, n)


CASES = {"plain": plain_increment, "call": call_increment, "locked": locked_increment}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--n", type=int, default=1_000_000, help="increments per thread")
    parser.add_argument("--case", choices=sorted(CASES) + ["all"], default="all")
    args = parser.parse_args(argv)
    names = sorted(CASES) if args.case == "all" else [args.case]
    out = {name: CASES[name](threads=args.threads, n=args.n) for name in names}
    out["python"] = "%d.%d.%d" % sys.version_info[:3]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
