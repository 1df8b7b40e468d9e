#!/usr/bin/env python3
"""Interleaved A/B of commands started and reaped: which costs less, per spawn, on a machine that drifts.

    python3 tests/bench/spawn_ab.py N 'CMD0' 'CMD1' ...   # each CMD split as a shell would (shlex)

Each of N rounds runs every command once, in a fresh random order (posix_spawnp: PATH is searched, stdout to /dev/null,
waitpid); prints each command's median time and the median of its per-round ratios to CMD0, with a
bootstrap 95 % interval. docs/performance.md uses it to compare a runner against the previous commit's,
beside `python -c pass` and the bare C embedding.
"""
import os
import random
import shlex
import statistics
import sys
import time


def spawn_ms(argv):
    t0 = time.monotonic_ns()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    os.waitpid(pid, 0)
    return (time.monotonic_ns() - t0) / 1e6


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, commands = int(sys.argv[1]), [shlex.split(c) for c in sys.argv[2:]]
    for argv in commands:  # caches warm (page cache, .pyc, gilhost's bootstrap cache)
        spawn_ms(argv)
    ms = [[] for _ in commands]
    for _ in range(rounds):
        for k in random.sample(range(len(commands)), len(commands)):
            ms[k].append(spawn_ms(commands[k]))
    rng = random.Random(1)
    for k, argv in enumerate(commands):
        ratios = [a / b for a, b in zip(ms[k], ms[0])]
        meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
        print("%8.2f ms  %.3fx (%.3f-%.3f)  %s" % (statistics.median(ms[k]), statistics.median(ratios),
                                                   meds[50], meds[1949], " ".join(argv)[:100]))


if __name__ == "__main__":
    main()
