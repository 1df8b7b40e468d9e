#!/usr/bin/env python3
"""gilhost's own CPU a run, two builds of it in turn: what the orchestrator spends on a run besides the run.

    python3 tests/bench/own_cpu_ab.py OLD/gilhost NEW/gilhost [--python 3.14.7] [--runs 100] [--pairs 8]

Each pair runs a session of N no-op runs (tests/bench/noop_case.py) with each binary, in alternating order.
A session's own CPU is its wait4 rusage (user + system, its reaped children's included) less the CPU of
its runs (each record's `tree_cpu_ns`, the child's own wait4 rusage): what gilhost itself did, start-up and
report included, over the runs. CPU time moves less with a drifting VM than wall time does, so a change of
a few per cent in the orchestrator's work shows in 8 pairs where the runs' wall time would hide it. Each
binary needs its gilhost-runner beside it (copy the build folder's two files). docs/performance.md, "The
orchestrator's own CPU".
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def session(binary, config, results, python):
    """(own CPU ms a run, wall ms a run) of one session."""
    t0 = time.monotonic()
    proc = subprocess.Popen([binary, "run", config, "-p", python, "-o", results, "--no-details"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    runs = [r for r in map(json.loads, open(results)) if r.get("type") == "run"]
    os.unlink(results)
    if os.waitstatus_to_exitcode(status) != 0 or not runs or any(r["status"] != "ok" for r in runs):
        raise SystemExit("%s: the session failed (exit %d)" % (binary, os.waitstatus_to_exitcode(status)))
    own = usage.ru_utime + usage.ru_stime - sum(r["tree_cpu_ns"] for r in runs) / 1e9
    return own / len(runs) * 1e3, wall / len(runs) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--python", default="3.14.7", help="the build to run (a label gilhost pythons lists)")
    ap.add_argument("--runs", type=int, default=100, help="no-op runs a session")
    ap.add_argument("--pairs", type=int, default=8)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "noop.toml")
        with open(config, "w") as f:
            f.write('[experiment]\nname = "own_cpu"\nscript = %s\nrepeat = %d\nwarmup = 0\n\n'
                    '[[case]]\nname = "noop"\ncall = "noop"\n' % (json.dumps(os.path.join(HERE, "noop_case.py")), args.runs))
        results = os.path.join(work, "runs.jsonl")
        sides = {args.old: [], args.new: []}
        ratios = []
        for i in range(args.pairs):
            for binary in (args.old, args.new) if i % 2 == 0 else (args.new, args.old):
                sides[binary].append(session(binary, config, results, args.python))
            ratios.append(sides[args.new][-1][0] / sides[args.old][-1][0])
    for binary, taken in sides.items():
        print("%s: own CPU %.3f ms a run (median of %d sessions of %d runs: %s), wall %.2f ms a run"
              % (binary, statistics.median(t[0] for t in taken), args.pairs, args.runs,
                 " ".join("%.3f" % t[0] for t in taken), statistics.median(t[1] for t in taken)))
    print("new / old own CPU: median %.3f, pairs %s; load now %s"
          % (statistics.median(ratios), " ".join("%.3f" % r for r in sorted(ratios)), open("/proc/loadavg").read().split()[0]))


if __name__ == "__main__":
    main()
