"""Micro-measurements behind docs/performance.md's explanations (not gilhost's figures themselves):
what a 1 ms wake-up, a fork, a C++ start and a bare libpython embedding cost on this machine.

    python3 tests/bench/micro.py --gilhost build/gilhost [--python /path/to/python3]   # ~1 min

It compiles small C and C++ programs with cc/c++ into a temporary folder, runs each side interleaved
with the others, and prints medians.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WAKE_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct rusage r; getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6; }
/* argv: seconds, a pid whose /proc/PID/stat is read each wake-up (0: none) */
int main(int argc, char **argv) {
  double secs = atof(argv[1]); char path[64], buf[1024]; int fd = -1;
  if (atoi(argv[2]) > 0) { snprintf(path, sizeof path, "/proc/%s/stat", argv[2]); fd = open(path, O_RDONLY); }
  double c0 = cpu(), t0 = now(); long n = 0;
  while (now() - t0 < secs) {
    struct timespec ts = {0, 1000000}; ppoll(NULL, 0, &ts, NULL);
    if (fd >= 0 && pread(fd, buf, sizeof buf, 0) < 0) return 1;
    n++;
  }
  double c = cpu() - c0, w = now() - t0;
  printf("{\"cpu_share\": %g, \"us_per_wake\": %g}\n", c / w, 1e6 * c / n);
  return 0;
}
"""

SPAWN_C = r"""
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
extern char **environ;
static double ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
/* argv: MiB to touch first, the program to start */
int main(int argc, char **argv) {
  size_t mb = (size_t)atoi(argv[1]); char *p = malloc(mb << 20); memset(p, 1, mb << 20);
  char *av[] = {argv[2], NULL}; double f = 0, v = 0; int n = 50;
  for (int i = 0; i < n; i++) {
    double t0 = ms(); pid_t pid = fork(); if (!pid) { execve(av[0], av, environ); _exit(1); }
    waitpid(pid, NULL, 0); f += ms() - t0;
    t0 = ms(); pid = vfork(); if (!pid) { execve(av[0], av, environ); _exit(1); }
    waitpid(pid, NULL, 0); v += ms() - t0;
  }
  printf("{\"fork_exec_ms\": %g, \"vfork_exec_ms\": %g}\n", f / n, v / n);
  return p[0] == 1 ? 0 : 1;
}
"""

from bench import EMBED_C  # the same bare embedding bench.py measures as its floor (this folder)

TRUE_C = "int main(void) { return 0; }\n"
HELLO_CXX = "#include <string>\nint main(int c, char**) { std::string s(static_cast<size_t>(c), 'x'); return static_cast<int>(s.size()) - 1; }\n"


def build(work, name, source, compiler, *flags):
    src = os.path.join(work, name + (".cpp" if compiler == "c++" else ".c"))
    with open(src, "w") as f:
        f.write(source)
    out = os.path.join(work, name)
    subprocess.run([compiler, "-O2", "-o", out, src, *flags], check=True)
    return out


def wall_ms(argv, env):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                                           (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    os.waitpid(pid, 0)
    return (time.perf_counter() - t0) * 1e3


def interleaved(sides, rounds, env):
    """Median ms of each argv, the sides taking turns so the machine's drift spreads over all of them."""
    times = {k: [] for k in sides}
    for _ in range(rounds):
        for k, argv in sides.items():
            times[k].append(wall_ms(argv, env))
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gilhost", default="build/gilhost")
    ap.add_argument("--python", help="a shared-libpython build (default: the newest GIL build gilhost finds)")
    args = ap.parse_args()
    gilhost = os.path.abspath(args.gilhost)
    runner = os.path.join(os.path.dirname(gilhost), "gilhost-runner")
    builds = json.loads(subprocess.run([gilhost, "pythons", "--json"], check=True, capture_output=True, text=True).stdout)
    usable = [b for b in builds if b.get("supported") and b.get("shared") and not b.get("free_threaded")]
    if args.python:
        real = os.path.realpath(args.python)
        usable = [b for b in usable if os.path.realpath(b["executable"]) == real]
    if not usable:
        sys.exit("micro: no shared-libpython GIL build found")
    build_info = max(usable, key=lambda b: tuple(int(x) for x in b["version"].split(".")[:3]))
    py, lib = build_info["executable"], build_info["libpython"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = {"python": py, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="gilhost-micro-") as work:
        wake = build(work, "wake", WAKE_C, "cc")
        spawn = build(work, "spawn", SPAWN_C, "cc")
        embed = build(work, "embed", EMBED_C, "cc", "-ldl")
        true_c = build(work, "true", TRUE_C, "cc")
        hello = build(work, "hello", HELLO_CXX, "c++")
        hello_static = build(work, "hello_static", HELLO_CXX, "c++", "-static-libstdc++", "-static-libgcc")

        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            run = lambda *a: json.loads(subprocess.run([wake, *a], check=True, capture_output=True, text=True).stdout)
            out["wake_1ms"] = run("3", "0")
            out["wake_1ms_pread_stat"] = run("3", str(sleeper.pid))
        finally:
            sleeper.kill()
            sleeper.wait()
        for mb in (5, 30):
            out["spawn_%dMiB" % mb] = json.loads(subprocess.run([spawn, str(mb), true_c], check=True,
                                                                capture_output=True, text=True).stdout)
        out["start_ms"] = interleaved({"c_main": [true_c], "cxx_shared_libstdcxx": [hello],
                                       "cxx_static_libstdcxx": [hello_static], "gilhost_runner_usage": [runner]},
                                      60, env)
        script = os.path.join(work, "noop.py")
        with open(script, "w") as f:
            f.write("def noop(**_):\n    return None\n")
        spec = json.dumps({"libpython": lib, "executable": py, "script": script, "mode": "call", "function": "noop",
                           "bootstrap_cache_dir": os.path.join(work, "cache")})  # as in a session: cached
        out["python_start_ms"] = interleaved({"python_c_pass": [py, "-c", "pass"], "bare_c_embedding": [embed, lib, py],
                                              "gilhost_runner_noop": [runner, "--event-fd", "1", "--spec", spec]},
                                             60, env)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
