#!/usr/bin/env python3
"""gilhost's own peak memory against a run's length, and `report --format html`'s against a file's size.

  python3 tests/bench/memory.py --gilhost build/gilhost                   # runs: 20 s and 60 s
  python3 tests/bench/memory.py --gilhost build/gilhost --only report    # HTML of a large results file

Runs: one case of 200 threads (half sleep 1 ms at a time, half spin) with thread states on at a 1 ms
sampling interval (`sample_interval_ms = 1`), for a short and a long run; gilhost's peak RSS from
/usr/bin/time -v (its own maximum resident set, not its children's: the run is a child). The goal (issue 25):
memory bounded in a run's length, the long run's peak within 1.3x of the short one's. It prints the
figures and whether each goal is met; it does not pass or fail (timing and memory goals are fragile on a
busy machine).

Report: a results file of RUNS runs of that case (`--runs`, 40 by default; written once with gilhost and
kept in the work folder), exported to HTML; the peak against one run's export (the file's first session).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SCRIPT = '''
import threading, time

def load(threads=200, seconds=20.0):
    stop = time.monotonic() + seconds
    def sleeper():
        while time.monotonic() < stop:
            time.sleep(0.001)
    def spinner():
        x = 0
        while time.monotonic() < stop:
            x += 1
    ts = [threading.Thread(target=sleeper if i % 2 else spinner) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
'''

EXPERIMENT = '''[experiment]
description = "gilhost's own memory against a run's length"
script = "load.py"
repeat = {repeat}
warmup = 0
timeout = 600.0
precision = "off"
sample_interval_ms = 1

[[case]]
name = "threads200"
call = "load"
params = {{ threads = 200, seconds = {seconds} }}
'''


def peak_kb(cmd, cwd):
    """Runs cmd under /usr/bin/time -v; its maximum resident set in kB."""
    out = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    return int(m.group(1))


def write_case(work, seconds, repeat):
    with open(os.path.join(work, "load.py"), "w") as f:
        f.write(SCRIPT)
    path = os.path.join(work, f"load{seconds:g}x{repeat}.toml")
    with open(path, "w") as f:
        f.write(EXPERIMENT.format(seconds=seconds, repeat=repeat))
    return path


def run_peak(args, work, seconds):
    toml = write_case(work, seconds, 1)
    out = os.path.join(work, f"run{seconds:g}.jsonl")
    if os.path.exists(out):
        os.unlink(out)
    return peak_kb([args.gilhost, "run", toml, "-p", args.python, "-o", out, "--no-lock"], work)


def runs_figures(args, work):
    short = run_peak(args, work, args.short)
    long_ = run_peak(args, work, args.long)
    ratio = long_ / short
    print(f"gilhost peak RSS, 200 threads at 1 ms: {args.short:g} s run {short / 1024:.1f} MB, "
          f"{args.long:g} s run {long_ / 1024:.1f} MB: {ratio:.2f}x  "
          f"(goal <= 1.3x: {'met' if ratio <= 1.3 else 'NOT met'}); load {os.getloadavg()[0]:.1f}")
    return {"short_s": args.short, "long_s": args.long, "short_kb": short, "long_kb": long_, "ratio": ratio}


def report_figures(args, work):
    big = os.path.join(work, f"big{args.runs}.jsonl")
    if not os.path.exists(big):
        toml = write_case(work, args.report_seconds, args.runs)
        peak_kb([args.gilhost, "run", toml, "-p", args.python, "-o", big, "--no-lock", "--max-cell-time", "0"], work)
    one = os.path.join(work, "one.jsonl")
    with open(big) as src, open(one, "w") as dst:  # the meta line and the first run
        lines = [line for line in src if line.strip()]
        dst.write(lines[0])
        dst.write(next(line for line in lines[1:] if json.loads(line).get("type") == "run"))
    size_mb = os.path.getsize(big) / 1e6
    peak_one = peak_kb([args.gilhost, "report", one, "--format", "html", "-o", os.path.join(work, "one.html")], work)
    peak_big = peak_kb([args.gilhost, "report", big, "--format", "html", "-o", os.path.join(work, "big.html")], work)
    ratio = peak_big / peak_one
    print(f"report --format html: 1 run {peak_one / 1024:.1f} MB, {args.runs} runs ({size_mb:.1f} MB file) "
          f"{peak_big / 1024:.1f} MB: {ratio:.2f}x; load {os.getloadavg()[0]:.1f}")
    return {"runs": args.runs, "file_mb": size_mb, "one_kb": peak_one, "all_kb": peak_big, "ratio": ratio}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gilhost", default="build/gilhost")
    ap.add_argument("--python", default="3.13", help="the build to run (a gilhost -p selector)")
    ap.add_argument("--short", type=float, default=20.0)
    ap.add_argument("--long", type=float, default=60.0)
    ap.add_argument("--runs", type=int, default=40, help="runs in the report's results file")
    ap.add_argument("--report-seconds", type=float, default=2.0, help="each run's length in that file")
    ap.add_argument("--only", choices=["runs", "report"])
    ap.add_argument("--work", help="folder for the files (kept; default: a temporary one)")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.gilhost = os.path.abspath(args.gilhost)
    work = args.work or tempfile.mkdtemp(prefix="gilhost-memory-")
    os.makedirs(work, exist_ok=True)
    figures = {}
    if args.only in (None, "runs"):
        figures["runs"] = runs_figures(args, work)
    if args.only in (None, "report"):
        figures["report"] = report_figures(args, work)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
