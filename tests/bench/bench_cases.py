"""The work that tests/bench/bench.py measures, under gilhost (call mode) and under plain `python`.
It imports nothing that `python -c pass` does not already import. The no-op case lives alone in
noop_case.py, so that importing its script costs a no-op run next to nothing.

    python bench_cases.py cpu N            # prints {"perf_s": ...}: the in-script time of cpu(N)
    python bench_cases.py cpu_threads N T  # the same with T threads each doing cpu(N), in parallel
"""
import os
import sys
import time


def _spin(n):
    # Pure-Python CPU work: one core, no allocation to speak of.
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def cpu(n=1_000_000, **_):
    """CPU-bound work, timed by the script itself with perf_counter (and its CPU time: other work on the
    machine stretches the first, not the second)."""
    t0, c0 = time.perf_counter(), time.process_time()
    _spin(n)
    return {"perf_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}


def cpu_threads(n=1_000_000, threads=2, **_):
    """`threads` threads each running _spin(n) at once (in parallel on a free-threaded build), timed by the
    script from the first start to the last join."""
    import threading
    workers = [threading.Thread(target=_spin, args=(n,)) for _ in range(threads)]
    t0, c0 = time.perf_counter(), time.process_time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {"perf_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}


def pingpong(n=20_000, **_):
    """Two threads pass a byte back and forth over two pipes `n` times: every pass a blocking read, a
    write and a switch, the most a run can ask of the exact mode's per-event cost."""
    import threading
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()

    def echo():
        for _ in range(n):
            os.write(b_w, os.read(a_r, 1))

    t = threading.Thread(target=echo)
    t0, c0 = time.perf_counter(), time.process_time()
    t.start()
    for _ in range(n):
        os.write(a_w, b"x")
        os.read(b_r, 1)
    t.join()
    for fd in (a_r, a_w, b_r, b_w):
        os.close(fd)
    return {"perf_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}


def _schedstat_ns(pid):
    # Time on CPU, in ns, of every thread of `pid` (first field of /proc/PID/task/TID/schedstat).
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
            total += int(f.read().split()[0])
    return total


def watch_host(seconds=5.0, children=0, threads=0, **_):
    """Sleeps `seconds` (with `children` sleeping child processes and `threads` threads of its own that wake
    every 5 ms) and measures how much CPU time the host (our parent, gilhost) spent meanwhile: that is the
    cost of watching this run."""
    import subprocess
    import threading
    kids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(%r)" % (seconds + 5)])
            for _ in range(children)]
    stop = threading.Event()

    def tick():
        while not stop.wait(0.005):
            pass

    workers = [threading.Thread(target=tick) for _ in range(threads)]
    for w in workers:
        w.start()
    time.sleep(0.3 + 0.1 * children)  # the children are up (2 cores start ~10 a second) and sampled
    host = os.getppid()
    c0, t0 = _schedstat_ns(host), time.monotonic_ns()
    time.sleep(seconds)
    c1, t1 = _schedstat_ns(host), time.monotonic_ns()
    for k in kids:
        k.kill()
        k.wait()
    stop.set()
    for w in workers:
        w.join()
    return {"host_cpu_ns": c1 - c0, "wall_ns": t1 - t0}


def alloc(mb=256, hold_s=0.5, **_):
    """Touches `mb` MiB, holds it `hold_s`, frees it: a known peak for the RSS sampler."""
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(hold_s)
    del block
    return mb


if __name__ == "__main__":
    import json  # here only: at the top, every call case's import would pay for it
    if len(sys.argv) == 3 and sys.argv[1] == "cpu":
        print(json.dumps(cpu(int(sys.argv[2]))))
    elif len(sys.argv) == 4 and sys.argv[1] == "cpu_threads":
        print(json.dumps(cpu_threads(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        sys.exit(__doc__)
