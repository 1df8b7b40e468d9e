#!/usr/bin/env python3
"""gilhost's own cost, as ratios measured in one run; docs/performance.md publishes them.

    python3 tests/bench/bench.py --gilhost build/gilhost [--python PATH] [--quick] [--json OUT]

1. CPU-bound script: the host's case time under gilhost / the same work timed in-script under plain
   `python bench_cases.py cpu N`                                          goal <= 1.02x
2. Per-run fixed cost: the session time one more run adds (no-op case) / `python -c pass`
                                                                          goal <= 1.10x
3. Sampler cost at 1 ms: gilhost's CPU time while it watches a sleeping run / wall time
                                                                          goal < 1 %
4. Host case time vs the script's own perf_counter around the same work   goal within 1 ms + 1 %
5. Sampled peak RSS vs ru_maxrss of the run (wait4)                       goal within 2 %

A benchmark, not a test: it prints the figures and whether each meets its goal, and exits 0 unless it
could not measure. Ratios 1 and 2 are medians of per-round ratios, each round measuring both sides
back to back in alternating order, so a machine whose speed drifts (a shared VM) moves both alike; the
interquartile range of the per-round ratios is printed as their precision.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "bench_cases.py")  # copied to the work folder and byte-compiled there
# Both sides may write and read .pyc files: the script's compile time is not the host's cost.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_of(argv, env=None):
    """Seconds from spawn to reaped, with posix_spawn (no fork of this process's memory)."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env if env is not None else ENV,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter()
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError("%s exited with %d" % (argv, os.waitstatus_to_exitcode(status)))
    return t1 - t0


def output_of(argv):
    import subprocess
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=ENV).stdout


class Gilhost:
    def __init__(self, binary, python, workdir):
        self.binary, self.python, self.workdir = binary, python, workdir
        self.n = 0

    def config(self, call, params, repeat=1, interval_ms=10):
        self.n += 1
        path = os.path.join(self.workdir, "bench%d.toml" % self.n)
        with open(path, "w") as f:
            f.write('[experiment]\nname = "bench"\nscript = %s\nrepeat = %d\ntimeout = 300.0\n'
                    'sample_interval_ms = %d\n\n[[case]]\nname = "%s"\ncall = "%s"\nparams = %s\n'
                    % (json.dumps(cases_path(self.workdir)), repeat, interval_ms, call, call, toml_table(params)))
        return path

    def argv(self, config, results):
        return [self.binary, "run", config, "-p", self.python, "-o", results, "--no-details"]

    def run(self, call, params, repeat=1, interval_ms=10):
        """Runs a session; returns (session wall seconds, run records)."""
        config = self.config(call, params, repeat, interval_ms)
        results = config.replace(".toml", ".jsonl")
        if os.path.exists(results):
            os.unlink(results)
        wall = wall_of(self.argv(config, results))
        runs = [r for r in map(json.loads, open(results)) if r.get("type") == "run"]
        bad = [r for r in runs if r["status"] != "ok"]
        if len(runs) != repeat or bad:
            raise RuntimeError("gilhost session failed: %s" % (bad[:1] or runs))
        return wall, runs


def cases_path(workdir):
    return os.path.join(workdir, "bench_cases.py")


def toml_table(params):
    return "{ " + ", ".join("%s = %s" % (k, json.dumps(v)) for k, v in params.items()) + " }"


def wakeup_floor(interval_s, seconds):
    """CPU share of a loop that only sleeps `interval_s` at a time: what any sampler waking that often
    pays on this machine before it reads anything (timer, wake-up, context switches)."""
    c0, t0 = time.process_time(), time.monotonic()
    while time.monotonic() - t0 < seconds:
        time.sleep(interval_s)
    return (time.process_time() - c0) / (time.monotonic() - t0)


def median(xs):
    return statistics.median(xs)


def median_ci95(xs, resamples=4000):
    """Bootstrap percentile interval of the median (fixed seed: the same data give the same interval)."""
    import random
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(resamples))
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def quartiles(xs):
    if len(xs) < 4:
        return min(xs), max(xs)
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def pick_python(gilhost_binary):
    builds = json.loads(output_of([gilhost_binary, "pythons", "--json"]))
    ok = [b for b in builds if b.get("supported") and b.get("shared") and not b.get("free_threaded")]
    if not ok:
        sys.exit("bench: no supported shared-libpython GIL build found; give --python")

    def key(b):
        return tuple(int(x) for x in b["version"].split(".")[:3])
    return max(ok, key=key)["executable"]


def calibrate(python, cases, target_s):
    """The n for which cpu(n) takes about target_s under this python."""
    n = 200_000
    perf = min(json.loads(output_of([python, cases, "cpu", str(n)]))["perf_s"] for _ in range(3))
    return max(10_000, int(n * target_s / max(perf, 1e-6)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gilhost", default="build/gilhost", help="the gilhost binary (default build/gilhost)")
    ap.add_argument("--python", help="interpreter to measure with (default: the newest shared GIL build found)")
    ap.add_argument("--quick", action="store_true", help="fewer and shorter rounds (noisier)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    binary = os.path.abspath(args.gilhost)
    python = args.python or pick_python(binary)
    q = args.quick
    version = output_of([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]).strip()
    print("bench: %s on %s (Python %s), %d CPUs, load %s" % (binary, python, version, os.cpu_count(),
                                                             open("/proc/loadavg").read().split()[0]))
    figures = {"python": python, "python_version": version, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="gilhost-bench-") as work:
        g = Gilhost(binary, python, work)
        import shutil
        shutil.copy(CASES, cases_path(work))
        output_of([python, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True)",
                   cases_path(work)])
        g.run("noop", {})  # the probe cache is warm from here on

        # 1. CPU-bound script: host case time under gilhost / in-script time under plain python.
        cases = cases_path(work)
        n = calibrate(python, cases, 0.25 if q else 0.5)
        ratios, ratios_inscript, plain, host = [], [], [], []
        for i in range(6 if q else 30):
            for side in ("plain", "gilhost") if i % 2 == 0 else ("gilhost", "plain"):
                if side == "plain":
                    plain.append(json.loads(output_of([python, cases, "cpu", str(n)]))["perf_s"])
                else:
                    _, runs = g.run("cpu", {"n": n})
                    host.append((runs[0]["wall_ns"] / 1e9, runs[0]["result"]["perf_s"]))
            ratios.append(host[-1][0] / plain[-1])
            ratios_inscript.append(host[-1][1] / plain[-1])
        # The median of the per-round ratios (the two sides back to back, so slow drifts of the machine's
        # speed cancel), with a bootstrap 95 % interval: on a shared VM one run can be 20 % off either way,
        # and the interval says how far the median itself can be trusted. Best-of-each-side beside it.
        figures["cpu"] = {"n": n, "rounds": len(ratios), "plain_s": median(plain),
                          "gilhost_case_s": median(h[0] for h in host),
                          "plain_best_s": min(plain), "gilhost_best_s": min(h[0] for h in host),
                          "ratio": median(ratios), "ratio_ci95": median_ci95(ratios),
                          "ratio_best": min(h[0] for h in host) / min(plain),
                          "ratio_iqr": quartiles(ratios), "ratio_inscript": median(ratios_inscript)}

        # 2. Per-run fixed cost: the time from one no-op run's record to the next's in a session (the
        # whole cycle: fork, runner, interpreter start and stop, sampling, record, fdatasync) /
        # `python -c pass` spawned and reaped the same number of times, alternating.
        per_session = 6 if q else 12
        ratios, cycle, passes, child = [], [], [], []
        for i in range(4 if q else 10):
            for side in ("gilhost", "python") if i % 2 == 0 else ("python", "gilhost"):
                if side == "gilhost":
                    _, runs = g.run("noop", {}, repeat=per_session)
                    stamps = [r["time_unix_ns"] for r in runs]
                    cycle.append(median(b - a for a, b in zip(stamps, stamps[1:])) / 1e9)
                    child.append(median(r["parent_wall_ns"] for r in runs) / 1e9)
                else:
                    passes.append(median(wall_of([python, "-c", "pass"]) for _ in range(per_session)))
            ratios.append(cycle[-1] / passes[-1])
        figures["fixed_cost"] = {"python_c_pass_s": median(passes), "gilhost_per_run_s": median(cycle),
                                 "gilhost_child_lifetime_s": median(child), "ratio": median(ratios),
                                 "ratio_iqr": quartiles(ratios)}

        # 3. Sampler cost: gilhost's CPU time while it watches a sleeping run, at 1 ms and 10 ms.
        seconds = 2.0 if q else 5.0
        sampler = {}
        for interval, children in ((1, 0), (1, 4), (10, 0)):
            _, runs = g.run("watch_host", {"seconds": seconds, "children": children}, interval_ms=interval)
            res = runs[0]["result"]
            sampler["%dms_%dproc" % (interval, children + 1)] = res["host_cpu_ns"] / res["wall_ns"]
        sampler["floor_1ms"] = wakeup_floor(0.001, seconds)
        figures["sampler"] = sampler

        # 4. Host case time vs the script's own perf_counter, from ~10 ms to ~1 s.
        worst = {"excess": 0.0}
        for target in (0.01, 0.1) if q else (0.01, 0.1, 1.0):
            n_t = calibrate(python, cases, target)
            _, runs = g.run("cpu", {"n": n_t}, repeat=3 if q else 5)
            for r in runs:
                perf, wall = r["result"]["perf_s"], r["wall_ns"] / 1e9
                allowed = 0.001 + 0.01 * perf
                excess = abs(wall - perf) / allowed
                if excess >= worst["excess"]:
                    worst = {"excess": excess, "perf_s": perf, "host_s": wall, "diff_s": wall - perf,
                             "allowed_s": allowed}
        figures["case_time"] = worst

        # 5. Sampled peak RSS vs ru_maxrss.
        rss = {}
        for interval in (10, 1):
            _, runs = g.run("alloc", {"mb": 64 if q else 256, "hold_s": 0.3}, interval_ms=interval)
            r = runs[0]
            sampled, maxrss = r["rss"]["peak_root_rss_bytes"], r["max_rss_kb"] * 1024
            rss["%dms" % interval] = {"sampled_bytes": sampled, "ru_maxrss_bytes": maxrss,
                                      "diff": (sampled - maxrss) / maxrss}
        figures["rss"] = rss

    c, f, s, t = figures["cpu"], figures["fixed_cost"], figures["sampler"], figures["case_time"]
    rows = [
        ("CPU-bound script, gilhost case time / plain python", "%.3fx" % c["ratio"],
         "median of %d rounds, 95 %% CI %.3f-%.3f (IQR %.3f-%.3f); best of each: %.3f s vs %.3f s (%.3fx); "
         "in-script under gilhost %.3fx"
         % (c["rounds"], c["ratio_ci95"][0], c["ratio_ci95"][1], c["ratio_iqr"][0], c["ratio_iqr"][1],
            c["gilhost_best_s"], c["plain_best_s"], c["ratio_best"], c["ratio_inscript"]),
         "<= 1.02x", c["ratio"] <= 1.02),
        ("per-run fixed cost / python -c pass", "%.3fx" % f["ratio"],
         "%.1f ms vs %.1f ms; IQR %.3f-%.3f; child lifetime %.1f ms"
         % (f["gilhost_per_run_s"] * 1e3, f["python_c_pass_s"] * 1e3, f["ratio_iqr"][0], f["ratio_iqr"][1],
            f["gilhost_child_lifetime_s"] * 1e3),
         "<= 1.10x", f["ratio"] <= 1.10),
        ("sampler CPU at 1 ms, 1 process", "%.2f %%" % (s["1ms_1proc"] * 100),
         "5 processes: %.2f %%, at 10 ms: %.2f %%; a bare 1 ms sleep loop here: %.2f %%"
         % (s["1ms_5proc"] * 100, s["10ms_1proc"] * 100, s["floor_1ms"] * 100),
         "< 1 %", s["1ms_1proc"] < 0.01),
        ("host case time vs in-script perf_counter", "%+.3f ms" % (t["diff_s"] * 1e3),
         "worst run: %.1f ms of work, allowed %.2f ms (%.0f %% of it)" % (t["perf_s"] * 1e3, t["allowed_s"] * 1e3,
                                                                         t["excess"] * 100),
         "1 ms + 1 %", t["excess"] <= 1.0),
    ]
    for k, v in figures["rss"].items():
        rows.append(("sampled peak RSS vs ru_maxrss, %s interval" % k, "%+.2f %%" % (v["diff"] * 100),
                     "%.1f MiB vs %.1f MiB" % (v["sampled_bytes"] / 2**20, v["ru_maxrss_bytes"] / 2**20),
                     "within 2 %", abs(v["diff"]) <= 0.02))
    print()
    w = max(len(r[0]) for r in rows)
    for name, value, detail, goal, ok in rows:
        print("%-*s  %10s  %-10s %s  %s" % (w, name, value, goal, "meets" if ok else "MISSES", detail))
    figures["goals_met"] = all(r[4] for r in rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
