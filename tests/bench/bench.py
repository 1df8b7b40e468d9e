#!/usr/bin/env python3
"""gilhost's own cost, as ratios measured in one run; docs/performance.md publishes them.

    tests/bench/setup                      # installs hyperfine (Debian's package) when it is missing
    python3 tests/bench/bench.py --gilhost build/gilhost [--python PATH] [--quick] [--json OUT]

Goals (issue 14), each figure a median of ratios of the two sides measured back to back, alternating,
with a bootstrap 95 % interval:

1. A session of N no-op runs vs `hyperfine -N --runs N 'PYTHON -c pass'`: mean time per run  <= 1.05x
2. Fixed cost per run vs `python -c pass`, on every shared-libpython build found, with the phases
   it splits into and the floors beside it (a bare C embedding of the same libpython, the runner
   started directly)                                                                       <= 1.05x
3. Sampler CPU at 1 ms vs a bare loop that only wakes every 1 ms, measured in the same run   <= 1.2x
   and at the default interval (10 ms), for 1 and for 10 processes in the run's tree         <= 1 %
4. Perturbation: a 2-thread CPU-bound case on the free-threaded build (both cores busy), its
   perf_counter time under gilhost / under plain python                                    <= 1.02x
5. This benchmark, --quick, in under 3 minutes; the figures also as JSON (--json)

Also, as before: the single-thread CPU-bound ratio (on the GIL build and re-checked on 3.14t), the
host's case time vs the script's own perf_counter, and the sampled peak RSS vs ru_maxrss.

A benchmark, not a test: it prints figures and whether each meets its goal, and exits 0 unless it
could not measure. On a shared VM the machine's speed drifts; ratios of back-to-back pairs cancel that.
"""
import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "bench_cases.py")  # copied to the work folder and byte-compiled there
NOOP = os.path.join(HERE, "noop_case.py")  # the no-op case alone: its import costs next to nothing
# Both sides may write and read .pyc files: the script's compile time is not the host's cost.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

# A loop that only wakes every INTERVAL_US (ppoll on a fixed schedule, as gilhost's sampler waits), for SECONDS: the floor any
# sampler waking that often pays here. Prints its CPU share, read like the gilhost side's, from schedstat.
WAKE_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static long long cpu_ns(void) { long long c = 0; FILE *f = fopen("/proc/self/schedstat", "r");
  if (f) { if (fscanf(f, "%lld", &c) != 1) c = 0; fclose(f); } return c; }
/* argv: seconds, interval in us, then pids whose /proc/PID/statm it reads each wake-up (RSS, as a sampler must) */
int main(int argc, char **argv) {
  double secs = atof(argv[1]); long us = atol(argv[2]); int fds[64], nfd = 0; char buf[128];
  for (int i = 3; i < argc && nfd < 64; i++) { char p[64]; snprintf(p, sizeof p, "/proc/%s/statm", argv[i]); fds[nfd++] = open(p, O_RDONLY); }
  long long c0 = cpu_ns(), t0 = now_ns(), n = 0, next = t0;
  while (now_ns() - t0 < (long long)(secs * 1e9)) {
    /* on a fixed schedule, as gilhost's ticks: as many wake-ups a second */
    next += us * 1000LL; long long wait = next - now_ns(); if (wait < 0) wait = 0;
    struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL}; ppoll(NULL, 0, &ts, NULL); n++;
    for (int i = 0; i < nfd; i++) if (pread(fds[i], buf, sizeof buf, 0) < 0) return 1;
  }
  long long c = cpu_ns() - c0, w = now_ns() - t0;
  printf("{\"cpu_share\": %g, \"us_per_wake\": %g}\n", (double)c / w, c / 1e3 / n);
  return 0;
}
"""

# dlopen the build's libpython, initialise, finalise: `python -c pass` as an embedding host, with nothing
# else. The floor for gilhost-runner. It prints when its main() began and how long each step took, as the
# runner's events say it (CLOCK_MONOTONIC), so the two are compared phase by phase.
EMBED_C = r"""
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <wchar.h>
static long long now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
int main(int argc, char **argv) {
  long long t_main = now_ns();
  void *h = dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL);
  if (!h) return 1;
  wchar_t *(*decode)(const char *, size_t *) = (wchar_t *(*)(const char *, size_t *))dlsym(h, "Py_DecodeLocale");
  void (*set_name)(const wchar_t *) = (void (*)(const wchar_t *))dlsym(h, "Py_SetProgramName");
  void (*init)(int) = (void (*)(int))dlsym(h, "Py_InitializeEx");
  int (*fin)(void) = (int (*)(void))dlsym(h, "Py_FinalizeEx");
  if (!decode || !set_name || !init || !fin) return 1;
  long long t_loaded = now_ns();
  set_name(decode(argv[2], NULL));
  init(1);
  long long t_init = now_ns();
  int status = fin();
  long long t_fin = now_ns();
  printf("{\"main_at_ns\": %lld, \"load_ns\": %lld, \"init_ns\": %lld, \"finalize_ns\": %lld, \"at_ns\": %lld}\n",
         t_main, t_loaded - t_main, t_init - t_loaded, t_fin - t_init, t_fin);
  fflush(stdout);
  return status == 0 ? 0 : 1;
}
"""


def spawn_timed(argv, env=None, stderr=None, stdout=None, cpu=None):
    """(spawn, reaped) in CLOCK_MONOTONIC ns, with posix_spawn (no fork of this process's memory); stdout
    to /dev/null or to the file `stdout`. With a list `cpu`, appends the process's CPU seconds (user and
    system, its reaped children's included: wait4's rusage)."""
    actions = [(os.POSIX_SPAWN_OPEN, 1, stdout or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    if stderr:
        actions.append((os.POSIX_SPAWN_OPEN, 2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    t0 = time.monotonic_ns()
    pid = os.posix_spawn(argv[0], argv, env if env is not None else ENV, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    t1 = time.monotonic_ns()
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise RuntimeError("%s exited with %d" % (argv, os.waitstatus_to_exitcode(status)))
    return t0, t1


def spawn_wall(argv, env=None, stderr=None, cpu=None):
    """Seconds from spawn to reaped (`cpu`: as spawn_timed's)."""
    t0, t1 = spawn_timed(argv, env, stderr, cpu=cpu)
    return (t1 - t0) / 1e9


def output_of(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True, env=ENV).stdout


def median(xs):
    return statistics.median(xs)


def median_ci95(xs, resamples=4000):
    """Bootstrap percentile interval of the median (fixed seed: the same data give the same interval)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(resamples))
    return [meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]]


def ratio_figure(ratios):
    return {"ratio": median(ratios), "ci95": median_ci95(ratios), "pairs": len(ratios)}


def alternate(i, a, b):
    return (a, b) if i % 2 == 0 else (b, a)


def cases_path(workdir):
    return os.path.join(workdir, "bench_cases.py")


def script_of(workdir, call):
    """The script holding `call`: the no-op alone in its own file, the rest in bench_cases.py."""
    return os.path.join(workdir, "noop_case.py") if call == "noop" else cases_path(workdir)


def toml_table(params):
    return "{ " + ", ".join("%s = %s" % (k, json.dumps(v)) for k, v in params.items()) + " }"


class Gilhost:
    def __init__(self, binary, workdir):
        self.binary, self.workdir = binary, workdir
        self.n = 0

    def config(self, call, params, repeat, interval_ms, thread_states):
        self.n += 1
        path = os.path.join(self.workdir, "bench%d.toml" % self.n)
        with open(path, "w") as f:
            f.write('[experiment]\nname = "bench"\nscript = %s\nrepeat = %d\nwarmup = 0\ntimeout = 300.0\n'
                    'sample_interval_ms = %d\nthread_states = %s\n\n[[case]]\nname = "%s"\ncall = "%s"\nparams = %s\n'
                    % (json.dumps(script_of(self.workdir, call)), repeat, interval_ms, "true" if thread_states else "false",
                       call, call, toml_table(params)))
        return path

    def command(self, python, config):
        """A session's command line, and the results file it writes."""
        results = config.replace(".toml", ".jsonl")
        return [self.binary, "run", config, "-p", python, "-o", results, "--no-details"], results

    def log(self):
        return os.path.join(self.workdir, "stderr.txt")  # its warnings (e.g. about the load) stay out of the report

    @staticmethod
    def take_runs(results, repeat, log):
        """The run records a session wrote (the file removed): `repeat` of them, all ok, or RuntimeError."""
        runs = [r for r in map(json.loads, open(results)) if r.get("type") == "run"]
        os.unlink(results)
        bad = [r for r in runs if r["status"] != "ok"]
        if len(runs) != repeat or bad:
            raise RuntimeError("gilhost session failed: %s\n%s" % (bad[:1] or runs, open(log).read()[-2000:]))
        return runs

    def start(self, python, call, params, interval_ms=10, thread_states=True):
        """Starts a one-run session in the background; finish() waits for it and returns its run record."""
        argv, results = self.command(python, self.config(call, params, 1, interval_ms, thread_states))
        log = open(self.log(), "w")
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, env=ENV), results, log

    @classmethod
    def finish(cls, started):
        proc, results, log = started
        proc.wait()
        log.close()
        return cls.take_runs(results, 1, log.name)[0]

    def run(self, python, call, params, repeat=1, interval_ms=10, thread_states=True, mode=None, cpu=None):
        """Runs a session (`mode`: --thread-states exact or sampled); returns (whole-command wall seconds, run
        records). `cpu`: as spawn_timed's."""
        argv, results = self.command(python, self.config(call, params, repeat, interval_ms, thread_states))
        wall = spawn_wall(argv + (["--thread-states", mode] if mode else []), stderr=self.log(), cpu=cpu)
        return wall, self.take_runs(results, repeat, self.log())


def own_cpu_ms(session_cpu_s, runs):
    """A session's own CPU a run (ms): its wait4 rusage (spawn_timed's `cpu`) less its runs' (each
    record's `tree_cpu_ns`, the child's own wait4 rusage), start-up and report included."""
    return (session_cpu_s - sum(r["tree_cpu_ns"] for r in runs) / 1e9) / len(runs) * 1e3


def cycles(runs):
    """Seconds from one run's record to the next's: one whole run as the session pays it."""
    stamps = [r["time_unix_ns"] for r in runs]
    return [(b - a) / 1e9 for a, b in zip(stamps, stamps[1:])]


def builds_found(binary):
    """Every supported shared-libpython build `gilhost pythons` lists, one per real executable."""
    builds, seen = [], set()
    for b in json.loads(output_of([binary, "pythons", "--json"])):
        real = os.path.realpath(b["executable"])
        if b.get("supported") and b.get("shared") and b.get("libpython") and real not in seen:
            seen.add(real)
            builds.append(b)
    return sorted(builds, key=lambda b: (version_key(b), bool(b.get("free_threaded"))))


def version_key(b):
    return tuple(int(x) for x in b["version"].split(".")[:3])


def label(b):
    return b["version"] + ("t" if b.get("free_threaded") else "")


def compile_c(work, name, source, *flags):
    if not shutil.which("cc"):
        return None
    src = os.path.join(work, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    out = os.path.join(work, name)
    subprocess.run(["cc", "-O2", "-o", out, src, *flags], check=True)
    return out


def calibrate(python, cases, target_s, threads=0):
    """The n for which cpu(n) (or cpu_threads(n, threads)) takes about target_s under this python."""
    n = 200_000
    argv = [python, cases, "cpu", str(n)] if not threads else [python, cases, "cpu_threads", str(n), str(threads)]
    perf = min(json.loads(output_of(argv))["perf_s"] for _ in range(3))
    return max(10_000, int(n * target_s / max(perf, 1e-6)))


# --- 1. against hyperfine -------------------------------------------------------------------------------

@contextlib.contextmanager
def on_cpu(cpu):
    """This process (and what it starts meanwhile) on one CPU, or left as it is for None."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def percentiles(xs, qs=(10, 50, 90)):
    xs = sorted(xs)
    return [xs[min(len(xs) - 1, len(xs) * q // 100)] for q in qs] if xs else []


def fig_hyperfine(g, python, work, n, pairs, pin=False):
    """A session of n no-op runs vs `hyperfine -N --runs n 'PYTHON -c pass'`, alternating. Per run: the
    session's mean cycle (record to record: spawn, run, reap, record, everything the orchestrator does
    between runs) vs hyperfine's mean time (spawn to reap; its own work between runs not counted, which
    favours it). Whole command: each tool's wall time, start-up, discovery and report included. With `pin`,
    both sides of a pair run on one CPU, the next pair on the next CPU: on a VM whose CPUs differ in speed,
    neither side gains by landing on the faster one."""
    hf = shutil.which("hyperfine")
    if not hf:
        return {"missing": "hyperfine is not installed: run tests/bench/setup (apt-get install hyperfine)"}
    export = os.path.join(work, "hyperfine.json")
    per_run, whole, g_ms, h_ms, g_whole, h_whole = [], [], [], [], [], []
    g_each, h_each = [], []  # every run's time, both sides: where the difference lies in the distribution
    g_own, h_own = [], []  # each tool's own CPU a run (ms): on one CPU it adds to the runs' time
    steps, between, from_cache = [], [], []  # each step of the same sessions' runs, and the orchestrator's work between them
    cpus = sorted(os.sched_getaffinity(0))
    for i in range(pairs):
        with on_cpu(cpus[i % len(cpus)] if pin else None):
            for side in alternate(i, "gilhost", "hyperfine"):
                if side == "gilhost":
                    cpu = []
                    wall, runs = g.run(python, "noop", {}, repeat=n, cpu=cpu)
                    g_own.append(own_cpu_ms(cpu[0], runs))  # less its runs', as hyperfine's below
                    g_ms.append(statistics.mean(cycles(runs)) * 1e3)
                    g_each += [c * 1e3 for c in cycles(runs)]
                    g_whole.append(wall)
                    steps += [record_phases(r) for r in runs[1:]]
                    from_cache += [bool(r.get("locate_cached")) for r in runs[1:]]
                    between += [c * 1e3 - r["parent_wall_ns"] / 1e6 for c, r in zip(cycles(runs), runs[1:])]
                else:
                    cpu = []
                    wall = spawn_wall([hf, "-N", "--runs", str(n), "--style", "none", "--export-json", export,
                                       "%s -c pass" % python], stderr=os.path.join(work, "hyperfine-stderr.txt"), cpu=cpu)
                    result = json.load(open(export))["results"][0]
                    runs_cpu = (result["user"] + result["system"]) * len(result["times"])  # its means, times its runs
                    h_own.append((cpu[0] - runs_cpu) / len(result["times"]) * 1e3)
                    h_ms.append(result["mean"] * 1e3)
                    h_each += [t * 1e3 for t in result.get("times", [])]
                    h_whole.append(wall)
        per_run.append(g_ms[-1] / h_ms[-1])
        whole.append(g_whole[-1] / h_whole[-1])
    # Where a session's run goes, from the same sessions (ms, medians over every run but each session's
    # first): the runner's steps, what the runner does between them (own_work), and the orchestrator
    # between one reap and the next spawn; and the share of runs whose GIL offset came from the cache.
    return {"runs": n, "per_run": ratio_figure(per_run), "gilhost_ms_per_run": median(g_ms),
            "steps_ms": median_phases(steps), "between_runs_ms": median(between),
            # And their 90th percentiles: a step that is long in one run of ten (a child that waited to
            # join its cgroup: docs/performance.md, "The cgroup move") hides behind a median.
            "steps_p90_ms": {k: percentiles([st[k] for st in steps], (90,))[0] for k in steps[0]} if steps else {},
            "between_runs_p90_ms": percentiles(between, (90,))[0] if between else None,
            "locate_plus_prepare_ms": median(s["locate"] + s["prepare"] for s in steps),
            # Less the script's own import (its module-level code), which `python script.py` pays too.
            "locate_plus_prepare_own_ms": median(s["locate"] + s["prepare"] - s["script_import"] for s in steps),
            "locate_from_cache": sum(from_cache) / max(1, len(from_cache)), "pairs": pairs,
            "hyperfine_mean_ms": median(h_ms), "whole_command": ratio_figure(whole),
            "own_cpu_ms_per_run": {"gilhost": median(g_own), "hyperfine": median(h_own)},
            "gilhost_whole_s": median(g_whole), "hyperfine_whole_s": median(h_whole), "pinned_pairs": pin,
            "percentiles_ms": {"at": [10, 50, 90], "gilhost": percentiles(g_each), "hyperfine": percentiles(h_each)},
            "command": "hyperfine -N --runs %d --export-json F '%s -c pass'" % (n, python)}


# --- 2. fixed cost per run, every build ----------------------------------------------------------------

# The child's life, in the order it is lived: spawn to main() (exec, the dynamic loader), dlopen of
# libpython, Py_Initialize, locating the GIL (thread states on), the bootstrap, importing the case's script,
# the case, Py_FinalizeEx, and the finalized event to the reap (exit). What is left of the life is the
# runner's own work between them.
PHASES = ("exec", "load", "init", "locate", "bootstrap", "prepare", "case", "finalize", "exit")


def phases_of(events, spawned_ns, reaped_ns):
    """One child's phases (ms) from its JSON lines (the runner's events, or EMBED_C's one line)."""
    ev = {}
    for line in events:
        ev.update(json.loads(line))
    ms = {"exec": (ev["main_at_ns"] - spawned_ns) / 1e6, "load": ev["load_ns"] / 1e6, "init": ev["init_ns"] / 1e6,
          "locate": ev.get("locate_ns", 0) / 1e6,
          "bootstrap": ev.get("bootstrap_ns", 0) / 1e6, "prepare": ev.get("prepare_ns", 0) / 1e6,
          "case": ev.get("wall_ns", 0) / 1e6, "finalize": ev["finalize_ns"] / 1e6,
          "exit": (reaped_ns - ev["at_ns"]) / 1e6, "life": (reaped_ns - spawned_ns) / 1e6}
    return with_own_work(ms)


def record_phases(r):
    """The same phases from a gilhost run record."""
    ns = {"exec": r["exec_ns"], "load": r["load_ns"], "init": r["init_ns"], "locate": r.get("locate_ns", 0),
          "bootstrap": r["bootstrap_ns"],
          "prepare": r["prepare_ns"], "case": r["wall_ns"], "finalize": r["finalize_ns"], "exit": r["exit_ns"],
          "life": r["parent_wall_ns"]}
    ms = with_own_work({k: v / 1e6 for k, v in ns.items()})
    ms["script_import"] = (r.get("import_ns") or 0) / 1e6  # of prepare: the script's own share
    return ms


def with_own_work(ms):
    """`ms` with the life less every phase: the runner's own work between them."""
    ms["own_work"] = ms["life"] - sum(ms[p] for p in PHASES)
    return ms


def median_phases(samples):
    return {k: median(s[k] for s in samples) for k in samples[0]} if samples else {}


def fig_fixed_cost(g, build, work, embed, runner, per_session, rounds):
    """Per round, in turns: a session of `per_session` no-op runs (its median cycle), and as many
    `python -c pass`, bare C embeddings and directly started runners (medians of each). The last three
    are timed spawn to reap; the embedding and the runner also say when each phase began and ended."""
    python, lib = build["executable"], build["libpython"]
    g.run(python, "noop", {})  # the bootstrap cache and the probe cache are warm from here on
    spec = json.dumps({"libpython": lib, "executable": python, "script": script_of(work, "noop"), "mode": "call",
                       "function": "noop", "free_threaded": bool(build.get("free_threaded")),
                       "bootstrap_cache_dir": os.path.join(work, "cache")})
    # `python script.py` compiles the script on every run (only imported modules get a .pyc): beside
    # `python -c pass`, the command a no-op run under gilhost replaces.
    sides = {"gilhost": None, "python_c_pass": [python, "-c", "pass"], "python_script": [python, script_of(work, "noop")],
             "runner_direct": [runner, "--event-fd", "1", "--spec", spec]}
    if embed:
        sides["bare_embedding"] = [embed, lib, python]
    events = os.path.join(work, "events.jsonl")
    spawn_timed(sides["runner_direct"])  # its bootstrap cache
    ms = {k: [] for k in sides}
    phases = {k: [] for k in ("gilhost", "runner_direct", "bare_embedding")}
    between = []
    names = list(sides)
    for i in range(rounds):
        for k in names[i % len(names):] + names[:i % len(names)]:
            if k == "gilhost":
                _, runs = g.run(python, "noop", {}, repeat=per_session)
                ms[k].append(median(cycles(runs)) * 1e3)
                phases[k] += [record_phases(r) for r in runs[1:]]
                # From one record to the next, less the next child's life: the orchestrator's own work.
                between += [c * 1e3 - r["parent_wall_ns"] / 1e6 for c, r in zip(cycles(runs), runs[1:])]
            elif k in ("python_c_pass", "python_script"):
                ms[k].append(median(spawn_wall(sides[k]) for _ in range(per_session)) * 1e3)
            else:
                walls = []
                for _ in range(per_session):
                    t0, t1 = spawn_timed(sides[k], stdout=events)
                    walls.append((t1 - t0) / 1e6)
                    with open(events) as lines:
                        phases[k].append(phases_of(lines, t0, t1))
                ms[k].append(median(walls))
    ratios = {k: [a / b for a, b in zip(ms[k], ms["python_c_pass"])] for k in sides if k != "python_c_pass"}
    out = {"python": python, "ratio": ratio_figure(ratios["gilhost"]),
           "vs_python_script": ratio_figure([a / b for a, b in zip(ms["gilhost"], ms["python_script"])]),
           "ms": {k: median(v) for k, v in ms.items()},
           "vs_python_c_pass": {k: ratio_figure(v) for k, v in ratios.items()}}
    # Where a run's time goes (ms, medians of every run): the same phases for the runner in a session,
    # the runner started directly, and the bare embedding; and the orchestrator's work between one
    # reap and the next spawn.
    out["phases_ms"] = {k: median_phases(v) for k, v in phases.items() if v}
    out["orchestrator_between_runs_ms"] = median(between)
    return out


# --- 3. sampler cost -----------------------------------------------------------------------------------

def floor_share(wake, seconds, interval_us, reads=0):
    """CPU share of the bare loop; with `reads`, it also reads /proc/PID/statm of that many sleeping
    processes each wake-up: the floor of any sampler that reads each process's RSS every tick."""
    if wake:
        sleepers = [subprocess.Popen(["sleep", "600"]) for _ in range(reads)]
        try:
            return json.loads(output_of([wake, str(seconds), str(interval_us)] + [str(p.pid) for p in sleepers]))["cpu_share"]
        finally:
            for p in sleepers:
                p.kill()
                p.wait()
    c0, t0 = time.process_time(), time.monotonic()  # no C compiler: Python's loop, a higher floor
    while time.monotonic() - t0 < seconds:
        time.sleep(interval_us / 1e6)
    return (time.process_time() - c0) / (time.monotonic() - t0)


def host_share(g, python, seconds, children, interval_ms, threads=0, thread_states=True):
    _, runs = g.run(python, "watch_host", {"seconds": seconds, "children": children, "threads": threads},
                    interval_ms=interval_ms, thread_states=thread_states)
    res = runs[0]["result"]
    return res["host_cpu_ns"] / res["wall_ns"]


def fig_thread_states(g, python, seconds, pairs):
    """gilhost's CPU share at the default interval watching a run of 4 threads (and its main thread), with
    thread states on / off, alternating."""
    on, off, ratios = [], [], []
    for i in range(pairs):
        for side in alternate(i, "on", "off"):
            (on if side == "on" else off).append(host_share(g, python, seconds, 0, 10, 4, side == "on"))
        ratios.append(on[-1] / off[-1])
    return {"ratio": ratio_figure(ratios), "on_share": median(on), "off_share": median(off)}


def gil_share_of_available(run, tids):
    """GIL wait over the time the threads did not wait for a core (tests/e2e/thread_state_tests.cpp)."""
    gil = available = 0
    for t in run["thread_states"]["threads"]:
        if t["tid"] in tids:
            gil += t["ns"]["gil"]
            available += sum(t["ns"].values()) - t["ns"]["runqueue"]
    return gil / available if available else 0.0


def fig_accuracy(g, python, rounds):
    """The thread states' known answers, which hold on a quiet machine only: 4 spinning threads wait for the
    GIL 3/4 of the time they do not wait for a core (goal: within 0.05), threads hashing in C (which
    releases the GIL) under 0.15. Under load the e2e tests check ordering invariants instead."""
    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
    results = os.path.join(g.workdir, "accuracy.jsonl")
    spin, hashing = [], []
    for _ in range(rounds):
        spawn_wall([g.binary, "run", os.path.join(fixtures, "thread_states.toml"), "-p", python, "--case", "spin",
                    "--case", "hashing", "-o", results, "--no-details"], stderr=os.devnull)
        for r in map(json.loads, open(results)):
            if r.get("type") == "run" and r["status"] == "ok":
                share = gil_share_of_available(r, set(r["result"]["tids"]))
                (spin if r["case"] == "spin" else hashing).append(share)
        os.unlink(results)
    return {"spin": median(spin), "spin_max_error": max(abs(x - 0.75) for x in spin), "hashing": median(hashing),
            "hashing_max": max(hashing), "rounds": rounds}


def beside_floor(g, python, wake, seconds, interval_ms, thread_states=True, reads=0, cpus=None):
    """gilhost's CPU share while it watches a run that sleeps, and the bare wake-up loop's, measured over the
    same stretch of time: the loop runs while gilhost watches (watch_host's window opens 0.3 s into the case
    and lasts `seconds`; the loop starts 0.5 s after gilhost and stops about 0.3 s before that window ends). On a
    VM whose wake-ups cost twice as much from one minute to the next, a pair taken one after the other
    compares two machines; a pair taken together compares the two programs. With `reads`, the loop also
    reads that many processes' statm each wake-up (floor_share). With `cpus` (gilhost's, the loop's), each
    is kept to its own CPU: unpinned, which of this VM's CPUs (up to 2x apart in speed) each side lands on
    moved a pair's ratio by +-20 %; the caller swaps them from pair to pair. Returns (gilhost, floor)."""
    gilhost_cpu, floor_cpu = cpus or (None, None)
    with on_cpu(gilhost_cpu):
        started = g.start(python, "watch_host", {"seconds": seconds, "children": 0, "threads": 0},
                          interval_ms=interval_ms, thread_states=thread_states)
    try:
        time.sleep(0.5)
        with on_cpu(floor_cpu):
            floor = floor_share(wake, seconds - 0.4, interval_ms * 1000, reads)
    finally:
        res = g.finish(started)["result"]
    return res["host_cpu_ns"] / res["wall_ns"], floor


def fig_sampler(g, python, wake, seconds, pairs):
    """gilhost's CPU share while it watches a run that sleeps, against the bare wake-up loop. At 1 ms the two
    run at the same time (beside_floor), with thread states on and, to show their share, off."""
    host, floor, ratios, off_ratios, statm_ratios = [], [], [], [], []
    cpus = sorted(os.sched_getaffinity(0))
    for i in range(pairs):
        # Each on its own CPU, swapped from pair to pair (beside_floor): an even number of pairs gives each
        # side every CPU as often.
        pinned = (cpus[i % len(cpus)], cpus[(i + 1) % len(cpus)]) if len(cpus) > 1 else None
        for states in alternate(i, True, False):
            if wake:
                h, f = beside_floor(g, python, wake, seconds, 1, states, cpus=pinned)
            else:  # no C compiler: Python's loop would wake late beside gilhost; in turn instead
                h, f = host_share(g, python, seconds, 0, 1, 0, states), floor_share(wake, seconds, 1000)
            (ratios if states else off_ratios).append(h / f)
            if states:
                host.append(h)
                floor.append(f)
        if wake:  # the floor of any sampler that reads the RSS each tick: the loop reading one statm, beside
            h, f = beside_floor(g, python, wake, seconds, 1, True, reads=1, cpus=pinned)
            statm_ratios.append(h / f)
    # The default interval, 1 and 10 processes, each beside its floor: the bare 10 ms loop reading the
    # RSS (statm) of as many processes, alternating.
    default, default_floor = {}, {}
    for procs in (1, 10):
        h, f = [], []
        for i in range(max(1, pairs // 2)):
            for side in alternate(i, "gilhost", "floor"):
                if side == "gilhost":
                    h.append(host_share(g, python, seconds, procs - 1, 10))
                else:
                    f.append(floor_share(wake, seconds, 10000, procs))
        default["%dproc" % procs], default_floor["%dproc" % procs] = median(h), median(f)
    return {"1ms": ratio_figure(ratios), "1ms_share": median(host), "floor_1ms_share": median(floor),
            "1ms_vs_statm_loop": ratio_figure(statm_ratios) if statm_ratios else None,
            "1ms_no_thread_states": ratio_figure(off_ratios), "1ms_measured": ("side by side, each on its own CPU, swapped each pair" if len(cpus) > 1 else "side by side")
            if wake else "in turn",
            "floor_1ms_statm_share": floor_share(wake, seconds, 1000, 1),
            "floor_in": "C (ppoll)" if wake else "Python (time.sleep)",
            "default_10ms_share": default, "floor_10ms_share": floor_share(wake, seconds, 10000),
            "floor_10ms_statm_share": default_floor}


def fig_exact(g, python, pairs):
    """Exact thread states against sampled ones, alternating: the work's in-script time for 4 threads on a
    GIL (switches) and a pipe ping-pong (a blocking read and a switch per pass); the host's CPU share
    watching 4 threads; a no-op session's time per run. None where perf events are not allowed."""
    _, probe = g.run(python, "noop", {}, mode="exact")
    if probe[0].get("thread_states", {}).get("method") != "exact":
        return None
    out = {}
    for name, call, params in (("gil_threads", "cpu_threads", {"n": 300_000, "threads": 4}),
                               ("pingpong", "pingpong", {"n": 20_000})):
        ratios, seconds = [], {"exact": [], "sampled": []}
        for i in range(pairs):
            for side in alternate(i, "exact", "sampled"):
                seconds[side].append(g.run(python, call, params, mode=side)[1][0]["result"]["perf_s"])
            ratios.append(seconds["exact"][-1] / seconds["sampled"][-1])
        out[name] = {"ratio": ratio_figure(ratios), "exact_s": median(seconds["exact"]),
                     "sampled_s": median(seconds["sampled"])}
    shares = {"exact": [], "sampled": []}
    cycle = {"exact": [], "sampled": []}
    for i in range(pairs):
        for side in alternate(i, "exact", "sampled"):
            _, runs = g.run(python, "watch_host", {"seconds": 1.0, "children": 0, "threads": 4}, mode=side)
            shares[side].append(runs[0]["result"]["host_cpu_ns"] / runs[0]["result"]["wall_ns"])
            cycle[side].append(median(cycles(g.run(python, "noop", {}, repeat=11, mode=side)[1])))
    out["host_share"] = {"exact": median(shares["exact"]), "sampled": median(shares["sampled"])}
    out["noop_run_ms"] = {k: median(v) * 1e3 for k, v in cycle.items()}
    return out


# --- 4. CPU-bound: one thread, and two threads on the free-threaded build --------------------------------

def fig_cpu(g, python, cases, target_s, rounds, threads=0):
    """The case's perf_counter time under gilhost (default sampling) / the same under plain python; the
    host's own case time (wall_ns) / plain beside it."""
    n = calibrate(python, cases, target_s, threads)
    call, params = ("cpu", {"n": n}) if not threads else ("cpu_threads", {"n": n, "threads": threads})
    argv = [python, cases, "cpu", str(n)] if not threads else [python, cases, "cpu_threads", str(n), str(threads)]
    plain, inscript, host, cpu_plain, cpu_host = [], [], [], [], []
    for i in range(rounds):
        for side in alternate(i, "plain", "gilhost"):
            if side == "plain":
                res = json.loads(output_of(argv))
                plain.append(res["perf_s"])
                cpu_plain.append(res["cpu_s"])
            else:
                _, runs = g.run(python, call, params)
                inscript.append(runs[0]["result"]["perf_s"])
                cpu_host.append(runs[0]["result"]["cpu_s"])
                host.append(runs[0]["wall_ns"] / 1e9)
    return {"python": python, "threads": max(1, threads), "n": n, "plain_s": median(plain),
            "gilhost_s": median(inscript),
            "inscript": ratio_figure([a / b for a, b in zip(inscript, plain)]),
            "host_case_time": ratio_figure([a / b for a, b in zip(host, plain)]),
            # The work's own CPU time: other load on the machine stretches wall time, not this.
            "cpu_time": ratio_figure([a / b for a, b in zip(cpu_host, cpu_plain)])}


# --- also: case time accuracy, peak RSS ----------------------------------------------------------------

def fig_case_time(g, python, cases, targets, repeat):
    worst = {"excess": 0.0}
    for target in targets:
        n_t = calibrate(python, cases, target)
        _, runs = g.run(python, "cpu", {"n": n_t}, repeat=repeat)
        for r in runs:
            perf, wall = r["result"]["perf_s"], r["wall_ns"] / 1e9
            allowed = 0.001 + 0.01 * perf
            excess = abs(wall - perf) / allowed
            if excess >= worst["excess"]:
                worst = {"excess": excess, "perf_s": perf, "host_s": wall, "diff_s": wall - perf, "allowed_s": allowed}
    return worst


def fig_rss(g, python, mb):
    rss = {}
    for interval in (10, 1):
        _, runs = g.run(python, "alloc", {"mb": mb, "hold_s": 0.3}, interval_ms=interval)
        r = runs[0]
        sampled, maxrss = r["rss"]["peak_root_rss_bytes"], r["max_rss_kb"] * 1024
        rss["%dms" % interval] = {"sampled_bytes": sampled, "ru_maxrss_bytes": maxrss, "diff": (sampled - maxrss) / maxrss}
    return rss


# --- the report ----------------------------------------------------------------------------------------

def ci(f):
    return "%.3fx (95 %% CI %.3f-%.3f, %d pairs)" % (f["ratio"], f["ci95"][0], f["ci95"][1], f["pairs"])


# The same short loop in Python, pinned to each CPU in turn (ms, the median of 3): on a VM whose CPUs are
# shared with other machines they differ, by up to 2x on the development VM, and which one is slow changes
# within minutes (docs/performance.md). A side whose processes land on the slow one is slow: the figures
# above cannot be read closer than this spread.
CPU_SPEED_LOOP = "import time\nt = time.perf_counter()\ns = 0\nfor i in range(1000000):\n    s += i\nprint(time.perf_counter() - t)"


def cpu_speeds(python):
    out = {}
    for cpu in sorted(os.sched_getaffinity(0)):
        ms = [float(subprocess.run([python, "-c", CPU_SPEED_LOOP], capture_output=True, text=True, check=True,
                                   preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c})).stdout) * 1e3
              for _ in range(3)]
        out[str(cpu)] = median(ms)
    return out


def speeds_text(speeds):
    ms = list(speeds.values())
    return "%s (slowest / fastest %.2fx)" % (", ".join("CPU %s %.1f ms" % kv for kv in speeds.items()), max(ms) / min(ms))


def report(fig):
    rows = []  # (goal, figure, detail, met)
    h = fig.get("hyperfine")
    if h and "missing" in h:
        rows.append(("1 session of N no-op runs / hyperfine, per run <= 1.05x", "-", h["missing"], None))
    elif h:
        pc = h.get("percentiles_ms", {})
        spread = "; p10/p50/p90 a run %s vs %s ms" % tuple("/".join("%.1f" % x for x in pc[k]) for k in ("gilhost", "hyperfine")) \
            if pc.get("gilhost") and pc.get("hyperfine") else ""
        rows.append(("1 session of %d no-op runs / hyperfine, per run <= 1.05x" % h["runs"], ci(h["per_run"]),
                     "%.2f vs %.2f ms a run%s; whole command %.3fx (%.2f vs %.2f s)%s"
                     % (h["gilhost_ms_per_run"], h["hyperfine_mean_ms"], spread, h["whole_command"]["ratio"],
                        h["gilhost_whole_s"], h["hyperfine_whole_s"],
                        "; each pair on one CPU, the CPU alternating" if h.get("pinned_pairs") else "")
                     + ("; own CPU a run (not its runs') %.2f vs %.2f ms" % (h["own_cpu_ms_per_run"]["gilhost"],
                                                                          h["own_cpu_ms_per_run"]["hyperfine"])
                        if "own_cpu_ms_per_run" in h else ""),
                     h["per_run"]["ratio"] <= 1.05))
        if "steps_ms" in h:
            rows.append(("1 the runner's locate + prepare steps <= 0.3 ms", "%.3f ms" % h["locate_plus_prepare_ms"],
                         "locate %.3f ms (%.0f %% of runs from the offset cache), prepare %.3f ms, of which the script's "
                         "own import %.3f ms: the runner's own %.3f ms; the same sessions"
                         % (h["steps_ms"]["locate"], h["locate_from_cache"] * 100, h["steps_ms"]["prepare"],
                            h["steps_ms"].get("script_import", 0), h.get("locate_plus_prepare_own_ms", 0)),
                         h["locate_plus_prepare_ms"] <= 0.3))
    for name, f in fig.get("fixed_cost", {}).items():
        floor = f["vs_python_c_pass"].get("bare_embedding")
        rows.append(("2 fixed cost / python -c pass, %s <= 1.05x" % name, ci(f["ratio"]),
                     "%.2f vs %.2f ms; runner alone %.3fx, bare C embedding %s; between runs %.2f ms;"
                     " gilhost / `python script.py` %.3fx"
                     % (f["ms"]["gilhost"], f["ms"]["python_c_pass"], f["vs_python_c_pass"]["runner_direct"]["ratio"],
                        "%.3fx" % floor["ratio"] if floor else "-", f["orchestrator_between_runs_ms"],
                        f["vs_python_script"]["ratio"]),
                     f["ratio"]["ratio"] <= 1.05))
    s = fig.get("sampler")
    if s:
        rows.append(("3 sampler CPU at 1 ms / bare 1 ms wake-up loop <= 1.2x", ci(s["1ms"]),
                     "%.2f %% vs %.2f %% of a core, measured %s (floor in %s); without thread states %.3fx; the"
                     " loop reading one statm each wake-up %.2f %%%s"
                     % (s["1ms_share"] * 100, s["floor_1ms_share"] * 100, s["1ms_measured"], s["floor_in"],
                        s["1ms_no_thread_states"]["ratio"], s["floor_1ms_statm_share"] * 100,
                        "; gilhost / that loop, side by side, %s" % ci(s["1ms_vs_statm_loop"])
                        if s.get("1ms_vs_statm_loop") else ""),
                     s["1ms"]["ratio"] <= 1.2))
        for k, v in s["default_10ms_share"].items():
            rows.append(("3 sampler CPU at 10 ms, %s <= 1 %%" % k.replace("proc", " process(es)"), "%.2f %%" % (v * 100),
                         "bare 10 ms loop %.2f %%; reading %s statm each wake-up %.2f %%"
                         % (s["floor_10ms_share"] * 100, k.replace("proc", ""), s["floor_10ms_statm_share"][k] * 100),
                         v <= 0.01))
    t = fig.get("thread_states")
    if t:
        rows.append(("3 sampler CPU at 10 ms with thread states, 4 threads / the same without <= 1.2x", ci(t["ratio"]),
                     "%.2f %% vs %.2f %% of a core" % (t["on_share"] * 100, t["off_share"] * 100),
                     t["ratio"]["ratio"] <= 1.2))
    a = fig.get("accuracy")
    if a:
        rows.append(("5 thread states, 4 spinning threads: GIL wait of the time not queued, 0.75 within 0.05",
                     "%.3f (worst of %d off by %.3f)" % (a["spin"], a["rounds"], a["spin_max_error"]), "quiet machine only",
                     a["spin_max_error"] <= 0.05))
        rows.append(("5 thread states, 2 threads hashing in C: GIL wait of the time not queued < 0.15",
                     "%.3f (worst %.3f)" % (a["hashing"], a["hashing_max"]), "quiet machine only", a["hashing_max"] < 0.15))
    for key, goal, limit in (("perturbation", "4 2-thread CPU-bound on %s, in-script gilhost / plain <= 1.02x", 1.02),
                             ("cpu", "  1-thread CPU-bound on %s, in-script gilhost / plain <= 1.02x", 1.02),
                             ("cpu_ft", "  1-thread CPU-bound on %s, in-script gilhost / plain <= 1.02x", 1.02)):
        c = fig.get(key)
        if c:
            rows.append((goal % c["label"], ci(c["inscript"]), "%.3f vs %.3f s; host case time / plain %.3fx; "
                         "the work's CPU time %s" % (c["gilhost_s"], c["plain_s"], c["host_case_time"]["ratio"],
                                                     ci(c["cpu_time"])), c["inscript"]["ratio"] <= 1.02))
    x = fig.get("exact")
    if x is not None and not x:
        rows.append(("3c exact thread states / sampled", "-", "perf events not allowed here", None))
    elif x:
        for k, what in (("gil_threads", "4 threads on a GIL"), ("pingpong", "a pipe ping-pong")):
            rows.append(("3c exact / sampled thread states, in-script time, %s" % what, ci(x[k]["ratio"]),
                         "%.3f vs %.3f s" % (x[k]["exact_s"], x[k]["sampled_s"]), None))
        rows.append(("3c exact / sampled, host CPU watching 4 threads; a no-op run",
                     "%.2f %% vs %.2f %%" % (x["host_share"]["exact"] * 100, x["host_share"]["sampled"] * 100),
                     "%.2f vs %.2f ms a run" % (x["noop_run_ms"]["exact"], x["noop_run_ms"]["sampled"]), None))
    t = fig.get("case_time")
    if t:
        rows.append(("  host case time - in-script, within 1 ms + 1 %", "%+.3f ms" % (t["diff_s"] * 1e3),
                     "worst of the runs: %.1f ms of work (%.0f %% of the allowance)" % (t["perf_s"] * 1e3, t["excess"] * 100),
                     t["excess"] <= 1.0))
    for k, v in fig.get("rss", {}).items():
        rows.append(("  sampled peak RSS vs ru_maxrss, %s, within 2 %%" % k, "%+.2f %%" % (v["diff"] * 100),
                     "%.1f vs %.1f MiB" % (v["sampled_bytes"] / 2**20, v["ru_maxrss_bytes"] / 2**20), abs(v["diff"]) <= 0.02))
    rows.append(("5 the whole benchmark%s" % (" (--quick) < 180 s" if fig["quick"] else ""), "%.0f s" % fig["seconds"],
                 "load %s at the start, %s at the end" % (fig["load_start"], fig["load_end"]),
                 fig["seconds"] < 180 if fig["quick"] else None))
    print()
    for goal, value, detail, met in rows:
        tag = {True: "met", False: "NOT MET", None: ""}[met]
        print("%-66s %-40s %-8s %s" % (goal, value, tag, detail))
    print("\neach CPU's speed, a Python loop pinned to it (median of 3 runs): at the start %s; at the end %s"
          % (speeds_text(fig["cpu_speed_ms"]["start"]), speeds_text(fig["cpu_speed_ms"]["end"])))
    if h and "steps_ms" in h:
        cols = PHASES + ("own_work", "life")
        print("\nsteps of a no-op run in figure 1's sessions (ms, the median and the 90th percentile of %d runs),"
              " and between runs:" % ((h["runs"] - 1) * h["pairs"]))
        print("    " + "".join("%10s" % c for c in cols + ("between",)))
        print("p50 " + "".join("%10.3f" % h["steps_ms"][c] for c in cols) + "%10.3f" % h["between_runs_ms"])
        if h.get("steps_p90_ms"):
            print("p90 " + "".join("%10.3f" % h["steps_p90_ms"][c] for c in cols) + "%10.3f" % h["between_runs_p90_ms"])
    if fig.get("fixed_cost"):
        print("\nphases of a no-op run (ms, medians): the runner in a gilhost session / the runner started directly"
              " / the bare C embedding")
        cols = PHASES + ("own_work", "life")
        print("%-9s %-7s" % ("build", "side") + "".join("%10s" % c for c in cols))
        for name, f in fig["fixed_cost"].items():
            for side, short in (("gilhost", "session"), ("runner_direct", "direct"), ("bare_embedding", "bare C")):
                ph = f["phases_ms"].get(side)
                if ph:
                    print("%-9s %-7s" % (name, short) + "".join("%10.2f" % ph[c] for c in cols))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gilhost", default="build/gilhost", help="the gilhost binary (default build/gilhost)")
    ap.add_argument("--python", help="GIL build for figures 1, 3 and the 1-thread CPU figure "
                                     "(default: the newest shared GIL build found)")
    ap.add_argument("--quick", action="store_true", help="fewer and shorter rounds (noisier), under 3 minutes")
    ap.add_argument("--json", help="also write every figure here")
    ap.add_argument("--only", help="comma-separated: hyperfine,fixed,sampler,thread_states,exact,accuracy,cpu,perturbation,case_time,rss")
    ap.add_argument("--builds", help="comma-separated versions for figure 2 (e.g. 3.13.0,3.14.7t; default all)")
    ap.add_argument("--workdir", help="where results files go (default: a temporary folder in $TMPDIR)")
    ap.add_argument("--pin-pairs", action="store_true",
                    help="figure 1: run both sides of each pair on one CPU, the next pair on the next (a VM's CPUs may differ in speed)")
    args = ap.parse_args()
    t_start = time.monotonic()
    binary = os.path.abspath(args.gilhost)
    runner = os.path.join(os.path.dirname(binary), "gilhost-runner")
    builds = builds_found(binary)
    gil = [b for b in builds if not b.get("free_threaded")]
    ft = [b for b in builds if b.get("free_threaded")]
    python = args.python or (max(gil, key=version_key)["executable"] if gil else None)
    if not python:
        sys.exit("bench: no supported shared-libpython GIL build found; give --python")
    only = set(args.only.split(",")) if args.only else None
    want = lambda k: only is None or k in only
    q = args.quick
    version = output_of([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]).strip()
    fig = {"python": python, "python_version": version, "cpus": os.cpu_count(), "quick": q,
           "cpu_model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
           "load_start": open("/proc/loadavg").read().split()[0]}
    print("bench: %s, Python %s at %s, %d CPUs (%s), load %s"
          % (binary, version, python, os.cpu_count(), fig["cpu_model"], fig["load_start"]), flush=True)
    fig["cpu_speed_ms"] = {"start": cpu_speeds(python)}
    print("bench: each CPU's speed (median of 3 runs a CPU): %s" % speeds_text(fig["cpu_speed_ms"]["start"]), flush=True)
    with tempfile.TemporaryDirectory(prefix="gilhost-bench-", dir=args.workdir) as work:
        g = Gilhost(binary, work)
        shutil.copy(CASES, cases_path(work))
        shutil.copy(NOOP, script_of(work, "noop"))
        cases = cases_path(work)
        for b in builds:  # each build its own .pyc, so no side pays for compiling
            for script in (cases_path(work), script_of(work, "noop")):
                output_of([b["executable"], "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True)", script])
        wake = compile_c(work, "wake", WAKE_C)
        embed = compile_c(work, "embed", EMBED_C, "-ldl")
        g.run(python, "noop", {})  # the probe and bootstrap caches are warm from here on

        def step(name, fn):
            t0 = time.monotonic()
            print("bench: %s ..." % name, end="", flush=True)
            out = fn()
            print(" %.0f s" % (time.monotonic() - t0), flush=True)
            return out

        if want("hyperfine"):
            # The goal's own N of 50 in --quick too, and 5 pairs: with 3 pairs of 20 runs, this VM's drift
            # (the two CPUs' speeds apart by up to 2x, minutes apart) put one run on either side of 1.05x.
            fig["hyperfine"] = step("1 hyperfine", lambda: fig_hyperfine(
                g, python, work, 50, 5 if q else 7, args.pin_pairs))
        if want("fixed"):
            chosen = [b for b in builds if not args.builds or label(b) in args.builds.split(",")]
            fig["fixed_cost"] = {}
            for b in chosen:
                fig["fixed_cost"][label(b)] = step("2 fixed cost %s" % label(b), lambda: fig_fixed_cost(
                    g, b, work, embed, runner, 8 if q else 12, 4 if q else 10))
        if want("sampler"):
            fig["sampler"] = step("3 sampler", lambda: fig_sampler(g, python, wake, 1.5 if q else 3.0, 4 if q else 6))
        if want("thread_states"):
            fig["thread_states"] = step("3b thread states", lambda: fig_thread_states(g, python, 1.5 if q else 3.0,
                                                                                    3 if q else 6))
        if want("exact"):
            fig["exact"] = step("3c exact thread states", lambda: fig_exact(g, python, 3 if q else 6))
        if want("accuracy"):
            fig["accuracy"] = step("5 thread-state accuracy", lambda: fig_accuracy(g, python, 2 if q else 5))
        if want("perturbation") and ft:
            b = max(ft, key=version_key)
            fig["perturbation"] = step("4 perturbation %s" % label(b), lambda: fig_cpu(
                g, b["executable"], cases, 0.3 if q else 0.5, 6 if q else 20, threads=2))
            fig["perturbation"]["label"] = label(b)
        if want("cpu"):
            fig["cpu"] = step("1-thread CPU-bound %s" % version, lambda: fig_cpu(g, python, cases, 0.25 if q else 0.5,
                                                                               6 if q else 20))
            fig["cpu"]["label"] = version
            if ft:
                b = max(ft, key=version_key)
                fig["cpu_ft"] = step("1-thread CPU-bound %s" % label(b), lambda: fig_cpu(
                    g, b["executable"], cases, 0.25 if q else 0.5, 6 if q else 20))
                fig["cpu_ft"]["label"] = label(b)
        if want("case_time"):
            fig["case_time"] = step("case time", lambda: fig_case_time(
                g, python, cases, (0.01, 0.1) if q else (0.01, 0.1, 1.0), 3 if q else 5))
        if want("rss"):
            fig["rss"] = step("rss", lambda: fig_rss(g, python, 64 if q else 256))
    fig["cpu_speed_ms"]["end"] = cpu_speeds(python)
    fig["seconds"] = time.monotonic() - t_start
    fig["load_end"] = open("/proc/loadavg").read().split()[0]
    report(fig)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
