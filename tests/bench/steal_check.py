#!/usr/bin/env python3
"""What a virtual machine's host takes from a running thread, against what its counters show.

    python3 tests/bench/steal_check.py [--cpu 1] [--seconds 5] [--rounds 3]

Spins one thread pinned to one CPU and compares, each round, the wall time with the thread's schedstat
(CPU time and run delay) and with that CPU's steal in /proc/stat. On a VM whose host takes CPUs away, the
time missing from the counters follows the steal: the kernel's task clock leaves stolen time out, and the
run delay does not hold it either (docs/performance.md, "The host's steal"). /proc/stat counts in 10 ms ticks.
"""
import argparse
import os
import time


def steal_ms(cpu):
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu%d " % cpu):
                return int(line.split()[8]) * 1000 // os.sysconf("SC_CLK_TCK")
    raise SystemExit("no cpu%d in /proc/stat" % cpu)


def schedstat_ms():
    with open("/proc/thread-self/schedstat") as f:
        cpu_ns, delay_ns = f.read().split()[:2]
    return int(cpu_ns) / 1e6, int(delay_ns) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    print(f"{'wall ms':>8} {'cpu ms':>8} {'runq ms':>8} {'missing':>8} {'steal cpu%d' % args.cpu:>11}")
    for _ in range(args.rounds):
        s0, (c0, d0), t0 = steal_ms(args.cpu), schedstat_ms(), time.monotonic()
        while time.monotonic() - t0 < args.seconds:
            pass
        s1, (c1, d1), t1 = steal_ms(args.cpu), schedstat_ms(), time.monotonic()
        wall = (t1 - t0) * 1e3
        print(f"{wall:8.0f} {c1 - c0:8.0f} {d1 - d0:8.0f} {wall - (c1 - c0) - (d1 - d0):8.0f} {s1 - s0:11d}")


if __name__ == "__main__":
    main()
