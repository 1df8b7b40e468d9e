#!/usr/bin/env python3
"""What moving a process into a cgroup costs, by how far apart the moves come (needs root and cgroup v2).

    sudo python3 tests/bench/cgroup_move.py [N] [GAP_MS ...]   # default: 30 moves, 15 20 25 40 ms apart

A forked child writes "0" to a scratch cgroup's cgroup.procs and reports how long the write took. The kernel
takes cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period unless a move came less than
one before: the wait a run paid when its child joined the session's cgroup after vfork, before gilhost made
children in the cgroup with clone3 (docs/performance.md, "The cgroup move").
"""
import os
import statistics
import sys
import time


def own_cgroup_dir():
    rel = next(line[3:].strip() for line in open("/proc/self/cgroup") if line.startswith("0::"))
    for line in open("/proc/self/mountinfo"):
        head, _, tail = line.partition(" - ")
        if tail.startswith("cgroup2 "):
            root, mount = head.split()[3:5]
            return mount + rel[len(root):] if root != "/" else mount + (rel if rel != "/" else "")
    sys.exit("no cgroup v2 hierarchy is mounted")


def move_us(procs):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        t0 = time.monotonic_ns()
        with open(procs, "w") as f:
            f.write("0")
        os.write(w, str((time.monotonic_ns() - t0) // 1000).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    us = int(os.read(r, 64))
    os.close(r)
    return us


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    gaps = [float(g) for g in sys.argv[2:]] or [15, 20, 25, 40]
    scratch = os.path.join(own_cgroup_dir(), "gilhost-move-bench-%d" % os.getpid())
    os.mkdir(scratch)
    try:
        for gap in gaps:
            us = []
            for _ in range(n):
                us.append(move_us(os.path.join(scratch, "cgroup.procs")))
                time.sleep(gap / 1000)
            slow = [u for u in us if u > 1000]
            print("%5.0f ms apart: median %7.0f us; %2d of %d moves over 1 ms (%s)" % (
                gap, statistics.median(us), len(slow), n,
                "%.1f-%.1f ms" % (min(slow) / 1000, max(slow) / 1000) if slow else "none"))
    finally:
        os.rmdir(scratch)


if __name__ == "__main__":
    main()
