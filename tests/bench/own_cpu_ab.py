#!/usr/bin/env python3
"""gilhost's own CPU a run, two builds of it in turn: what the orchestrator spends on a run besides the run.

    python3 tests/bench/own_cpu_ab.py OLD/gilhost NEW/gilhost [--python 3.14.7] [--runs 100] [--pairs 8]

Each pair runs a session of N no-op runs (tests/bench/noop_case.py) with each binary, in alternating order,
as bench.py's figure 1 runs its sessions. A session's own CPU is bench.own_cpu_ms's: its wait4 rusage less
its runs' own, start-up and report included. CPU time moves less with a drifting VM than wall time does,
so a change of a few per cent in the orchestrator's work shows in 8 pairs where the runs' wall time would
hide it. Each binary needs its gilhost-runner beside it (copy the build folder's two files).
docs/performance.md, "The orchestrator's own CPU".
"""
import argparse
import shutil
import statistics
import tempfile

import bench  # this folder: the same sessions and the same reading as figure 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--python", default="3.14.7", help="the build to run (a label gilhost pythons lists, or a path)")
    ap.add_argument("--runs", type=int, default=100, help="no-op runs a session")
    ap.add_argument("--pairs", type=int, default=8)
    args = ap.parse_args()
    binaries = (args.old, args.new)
    sides = ([], [])  # by position: the same binary twice is an A/A check
    ratios = []
    with tempfile.TemporaryDirectory(prefix="gilhost-own-cpu-") as work:
        shutil.copy(bench.NOOP, bench.script_of(work, "noop"))
        tools = [bench.Gilhost(b, work) for b in binaries]
        for g in tools:
            g.run(args.python, "noop", {})  # the .pyc and gilhost's caches are warm from here on
        for i in range(args.pairs):
            for side in bench.alternate(i, 0, 1):
                cpu = []
                wall, runs = tools[side].run(args.python, "noop", {}, repeat=args.runs, cpu=cpu)
                sides[side].append((bench.own_cpu_ms(cpu[0], runs), wall / args.runs * 1e3))
            ratios.append(sides[1][-1][0] / sides[0][-1][0])
    for binary, taken in zip(binaries, sides):
        print("%s: own CPU %.3f ms a run (median of %d sessions of %d runs: %s), wall %.2f ms a run"
              % (binary, statistics.median(t[0] for t in taken), args.pairs, args.runs,
                 " ".join("%.3f" % t[0] for t in taken), statistics.median(t[1] for t in taken)))
    print("new / old own CPU: median %.3f, pairs %s; load now %s"
          % (statistics.median(ratios), " ".join("%.3f" % r for r in sorted(ratios)), open("/proc/loadavg").read().split()[0]))


if __name__ == "__main__":
    main()
