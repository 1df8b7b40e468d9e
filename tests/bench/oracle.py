#!/usr/bin/env python3
"""Thread states checked against an independent oracle: the kernel's own record, taken by perf.

    python3 tests/bench/oracle.py --gilhost build/gilhost [-p 3.9 -p 3.12 -p 3.14t] [--runs 2]
        [--workload spinners ...] [--goal 5] [--check cpu,io,timeline] [--interval-ms 10] [--json OUT] [--keep DIR]

Each workload (tests/bench/oracle_workloads.py, about 1 s of worker threads) runs under gilhost on each
build while perf records, with CLOCK_MONOTONIC timestamps (-k mono):
  - system-wide, the scheduler's switch, wake-up, fork and exit events (sched.data), and
  - in gilhost's own process tree (inherited), every system call's entry and exit (sys.data).
(`perf sched record` plus system-wide raw_syscalls would be one file, but on a busy machine system-wide
system calls are ~160k events/s and perf drops chunks; the run's own calls are all the oracle needs.)

From perf's events alone, with no gilhost code, each thread's time is: on a CPU from its switch-in to its
switch-out (cpu); runnable but not on a CPU, from a wake-up, a fork or a preemption (prev_state R) to its
next switch-in (runqueue); blocked, from a switch-out in any other state to its wake-up, by the system call
it was in at the switch-out: a futex wait on the GIL's words (the windows the run record's thread_states
says gilhost located, `gil_windows`) is gil, another futex wait lock; read/write/recv/send/poll/epoll/
select/accept/connect and the like io (select or poll on no descriptor, how 3.9's time.sleep waits,
sleep); nanosleep/clock_nanosleep sleep; a wait outside a system call (a page fault) or any other call
other.

Each worker thread of each run is compared over gilhost's own window for it ([start_ns, end_ns] of the
record, placed on perf's clock by the threads' fork times), state by state, in points of share: gilhost's
share of the time it classified (as its tables show it) against perf's share of the window. It prints, per
workload, build and state, the worst deviation over the worker threads of every run; from the record
alone, how far the thread's timeline (its segments' time per state) is from its totals; and the most of a
thread's life gilhost left unclassified (unclassified_ns). With --check it exits 1 when a checked state's
worst deviation exceeds --goal.

Left out, and said: a thread whose window perf did not cover for more than 2 % of it (its record lost
events: a switch out of order, or a system call's entry or exit missing, so the wait it was in is not known;
`perf record -m` sets the buffers, --mmap). Compared apart, below the table, not checked: the threads of a
run where the virtual machine's host took over --max-steal of the CPUs (steal). What the host took from a
running thread is not in its counters and gilhost estimates it; perf has the thread on its CPU throughout.

With --against exact, the oracle is gilhost's own exact mode on the same runs instead of perf: each
workload runs with `--thread-states both`, and each worker thread's sampled shares
(`thread_states_sampled`) are compared with its exact ones (`thread_states`, from the kernel's switch and
system-call events, measure/exact_recorder), over each mode's own window for it. Both modes watched the
same threads at the same time, so what differs is the sampling alone.

Needs perf (Debian's linux-perf) and root, or kernel.perf_event_paranoid <= -1 (--against exact: the
latter alone).
"""
import argparse
import bisect
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from oracle_workloads import WORKLOADS  # noqa: E402

STATES = ["cpu", "runqueue", "gil", "lock", "io", "sleep", "other"]

# x86_64 system call numbers.
SYS_FUTEX = 202
SLEEP_CALLS = {35, 230}  # nanosleep, clock_nanosleep
SELECTS = {23, 270}      # select, pselect6: sleep when nfds (arg0) is 0
POLLS = {7, 271}         # poll, ppoll: sleep when nfds (arg1) is 0
IO_CALLS = {0, 1, 17, 18, 19, 20, 295, 296, 42, 43, 288, 44, 45, 46, 47, 299, 307, 232, 281, 441, 40, 275,
            2, 257, 74, 75, 426, 208}
FUTEX_WAITS = {0, 9, 6, 11, 13}  # WAIT, WAIT_BITSET, LOCK_PI, WAIT_REQUEUE_PI, LOCK_PI2


def classify_blocked(call, windows):
    """The state of a thread blocked in `call` ((nr, arg0, arg1) or None: outside a system call)."""
    if call is None:
        return "other"
    nr, a0, a1 = call[:3]
    if nr == SYS_FUTEX:
        if (a1 & ~(128 | 256)) not in FUTEX_WAITS:
            return "other"
        return "gil" if any(lo <= a0 < hi for lo, hi in windows) else "lock"
    if nr in SLEEP_CALLS:
        return "sleep"
    if nr in SELECTS:
        return "sleep" if a0 == 0 else "io"
    if nr in POLLS:
        return "sleep" if a1 == 0 else "io"
    return "io" if nr in IO_CALLS else "other"


# ---- reading perf's record ----

LINE = re.compile(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s+(\S+):\s*(.*)$")
SWITCH = re.compile(r"prev_pid=(\d+) .*prev_state=(\S+) ==> .*next_pid=(\d+)")
WAKE = re.compile(r"\bpid=(\d+)")
FORK = re.compile(r"child_pid=(\d+)")
ENTER = re.compile(r"NR (\d+) \(([0-9a-f]+), ([0-9a-f]+)")
EXIT = re.compile(r"NR (-?\d+) =")


def perf_events(path):
    """(t_ns, tid, event, text) for each event of a perf.data file."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "tid,time,event,trace", "--ns"],
                         capture_output=True, text=True, errors="replace")
    events = []
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        if m:
            t = int(m.group(2)) * 1_000_000_000 + int(m.group(3).ljust(9, "0")[:9])
            events.append((t, int(m.group(1)), m.group(4), m.group(5)))
    return events


class Timeline:
    """Every thread's states from perf's events: per tid, [(start_ns, state)] and its end."""

    def __init__(self, events):
        self.segments = {}   # tid -> [(t, state)]
        self.forked = {}     # tid -> t
        self.ended = {}      # tid -> t
        self.call = {}       # tid -> (nr, a0, a1) while in a system call
        self.parent = {}     # tid -> the thread that forked it
        self.first_futex = {}  # tid -> the word of its first futex wait
        self.last_sys = {}     # tid -> the time of its last system-call event
        self.sys_unknown = {}  # tid -> [(lo, hi)]: perf lost a system-call event of it in there
        self.sys_end = None    # the last system-call event of the record: a wait after it is not known
        for t, tid, event, text in sorted(events, key=lambda e: e[0]):
            self._take(t, tid, event, text)

    def _set(self, tid, t, state):
        seg = self.segments.setdefault(tid, [])
        if not seg or seg[-1][1] != state:
            seg.append((t, state))

    def _state(self, tid):
        seg = self.segments.get(tid)
        return seg[-1][1] if seg else None

    def _lost(self, tid):
        """perf lost an event of `tid` (a switch-out or its exit with no switch-in before it, or a switch-in
        while it was on a CPU; perf wrote no LOST record for these on the development VM, under load): what
        it did since its last event is not known."""
        seg = self.segments.get(tid)
        if seg:
            seg[-1] = (seg[-1][0], "unknown")

    def _sys_lost(self, tid, lo, hi):
        """perf lost a system-call event of `tid` between `lo` and `hi` (its ring buffer was full: perf writes
        a count at the end, not when): which call the thread blocked in there is not known."""
        self.sys_unknown.setdefault(tid, []).append((lo, hi))

    def _take(self, t, tid, event, text):
        if event.startswith("raw_syscalls:"):
            self.sys_end = t
        if event == "raw_syscalls:sys_enter":
            m = ENTER.match(text)
            if m:
                if tid in self.call:  # perf lost the exit of the call before: what it waited in since is not known
                    self._sys_lost(tid, self.call[tid][3], t)
                call = (int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16), t)
                self.call[tid] = call
                self.last_sys[tid] = t
                if call[0] == SYS_FUTEX and (call[2] & ~(128 | 256)) in FUTEX_WAITS:
                    self.first_futex.setdefault(tid, call[1])
        elif event == "raw_syscalls:sys_exit":
            # An exit with no entry before it: perf lost the entry (but a new thread's first event is the exit
            # of the clone that made it).
            if tid not in self.call and tid in self.last_sys:
                self._sys_lost(tid, self.last_sys[tid], t)
            self.call.pop(tid, None)
            self.last_sys[tid] = t
        elif event == "sched:sched_switch":
            m = SWITCH.search(text)
            if not m:
                return
            prev, prev_state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
            if self._state(prev) not in (None, "cpu"):
                self._lost(prev)
            if self._state(nxt) == "cpu":
                self._lost(nxt)
            if prev_state.startswith(("X", "Z")):
                self._set(prev, t, "dead")
            elif prev_state.startswith("R"):
                self._set(prev, t, "runqueue")
            else:
                self._set(prev, t, ("blocked", self.call.get(prev)))
            self._set(nxt, t, "cpu")
        elif event in ("sched:sched_wakeup", "sched:sched_wakeup_new"):
            m = WAKE.search(text)
            if m:
                woken = int(m.group(1))
                state = self._state(woken)
                if state is None or state[0] == "blocked":
                    self._set(woken, t, "runqueue")
        elif event == "sched:sched_process_fork":
            m = FORK.search(text)
            if m:
                child = int(m.group(1))
                self.parent[child] = int(WAKE.search(text).group(1))
                self.forked[child] = t
                self._set(child, t, "runqueue")
        elif event == "sched:sched_process_exit":
            if self._state(tid) not in (None, "cpu"):
                self._lost(tid)  # a thread exits on a CPU: perf lost its last switch-in
            self.ended[tid] = t

    def shares(self, tid, a, b, windows):
        """ns per state of `tid` in [a, b), and the ns whose state perf did not say."""
        times = dict.fromkeys(STATES, 0)
        seg = self.segments.get(tid, [])
        known = 0
        starts = [s for s, _ in seg]
        i = max(0, bisect.bisect_right(starts, a) - 1)
        for k in range(i, len(seg)):
            s, state = seg[k]
            e = seg[k + 1][0] if k + 1 < len(seg) else self.ended.get(tid, b)
            lo, hi = max(s, a), min(e, b)
            if hi <= lo or state in ("dead", "unknown"):
                continue
            span = hi - lo
            if state[0] == "blocked":
                span -= sum(max(0, min(hi, y) - max(lo, x)) for x, y in self.sys_unknown.get(tid, []))
                if self.sys_end is not None:  # a record cut short (perf stopped early): what it waited in, unknown
                    span -= max(0, hi - max(lo, self.sys_end))
                span = max(0, span)
            name = classify_blocked(state[1], windows) if state[0] == "blocked" else state
            times[name] += span
            known += span
        return times, (b - a) - known


# ---- gilhost's record ----

def runs_of(path):
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("type") == "run" and rec.get("thread_states") and not rec.get("warmup"):
                yield rec


def windows_of(rec, perf):
    """The GIL's futex words in `rec`'s process: as the record says (`gil_windows`), or, in a file from
    before it said, found in perf's record as the runner finds them: its first helper thread (left out of
    the record) blocks in the GIL's condition variable; the window around that word is the runner's."""
    if "gil_windows" in rec["thread_states"]:
        return [(int(lo), int(hi)) for lo, hi in rec["thread_states"]["gil_windows"]]
    if rec["thread_states"].get("gil") != "located" or not rec["thread_states"]["threads"]:
        return []
    root = rec["thread_states"]["threads"][0]["pid"]
    seen = {t["tid"] for t in rec["thread_states"]["threads"]}
    helpers = sorted((perf.forked[t], t) for t, p in perf.parent.items() if p == root and t not in seen and t in perf.forked)
    for _, tid in helpers:
        if tid in perf.first_futex:
            word = perf.first_futex[tid]
            return [(word - 96, word + 160)]
    return []


def timeline_ns(thread):
    """ns per state in the thread's timeline, each segment until the next one's start or its end."""
    times = dict.fromkeys(STATES, 0)
    segs = thread.get("timeline_us") or []
    for k, (start_us, state) in enumerate(segs):
        end = segs[k + 1][0] * 1000 if k + 1 < len(segs) else thread["end_ns"]
        times[state] += max(0, end - start_us * 1000)
    return times


def share(times, state):
    lived = sum(times.values())
    return 100.0 * times[state] / lived if lived > 0 else 0.0


def is_worker(t, min_life_ns):
    """A Python thread other than its process's main one, that lived at least min_life_ns."""
    return t["tid"] != t["pid"] and t.get("python") and t["end_ns"] - t["start_ns"] >= min_life_ns


def thread_row(t, oracle_ns, life_ns, steal_share):
    """One worker thread's comparison: gilhost's record `t` against the oracle's ns per state."""
    gh = t["ns"]
    unclassified = t.get("unclassified_ns", 0)
    # The timeline draws the time no reading classified as `other` (results-format.md: its `other` is
    # `ns.other` plus `unclassified_ns`); the totals leave it out of every state.
    drawn = dict(gh, other=gh["other"] + unclassified)
    return {
        "tid": t["tid"], "name": t.get("name", ""), "life_ms": life_ns / 1e6,
        "dev": {s: share(gh, s) - share(oracle_ns, s) for s in STATES},
        "timeline_dev": {s: share(timeline_ns(t), s) - share(drawn, s) for s in STATES},
        "kernel_ms": {s: oracle_ns[s] / 1e6 for s in STATES},
        "gilhost_ms": {s: gh[s] / 1e6 for s in STATES},
        # What gilhost left in no state (its shares above are of the rest): points of the thread's life.
        "unclassified": 100.0 * unclassified / max(1, sum(gh.values()) + unclassified),
        # Of gilhost's CPU time, what it took for the host's steal (measure/steal), in points of its share.
        "stolen": 100.0 * t.get("stolen_ns", 0) / max(1, sum(gh.values())),
        "steal_share": steal_share,
    }


def compare_modes(rec, min_life_ns):
    """Per worker thread of a `--thread-states both` run: {state: (sampled points - exact points)}, and the
    sampled timeline - its totals, as compare_run gives them against perf."""
    exact, sampled = rec["thread_states"], rec.get("thread_states_sampled")
    if exact.get("method") != "exact" or not sampled:
        return [], "not recorded both ways (exact mode not allowed here?)"
    by_tid = {t["tid"]: t for t in exact["threads"]}
    rows, unmatched = [], 0
    for t in sampled["threads"]:
        if not is_worker(t, min_life_ns):
            continue
        e = by_tid.get(t["tid"])
        if e is None:
            unmatched += 1
            continue
        rows.append(thread_row(t, e["ns"], t["end_ns"] - t["start_ns"], sampled.get("steal_share")))
    missing = f"; {unmatched} not in the exact record" if unmatched else ""
    return rows, f"exact coverage {exact.get('coverage', '?')}{missing}"


def compare_run(rec, perf, min_life_ns):
    """Per worker thread: {state: (gilhost points - perf points)}, and timeline - totals points."""
    ts = rec["thread_states"]
    offsets = [perf.forked[t["tid"]] - t["start_ns"] for t in ts["threads"] if t["tid"] in perf.forked]
    if not offsets:
        return [], "perf saw no fork of the run's threads"
    # A thread's start in the record is its first reading less the CPU and run-queue time it had by then:
    # late by whatever it spent blocked before it was first seen, never early. The latest is the truest.
    offset = max(offsets)
    windows = windows_of(rec, perf)
    rows, unseen = [], 0
    for t in ts["threads"]:
        if not is_worker(t, min_life_ns):
            continue
        a, b = t["start_ns"] + offset, t["end_ns"] + offset
        kernel, unknown = perf.shares(t["tid"], a, b, windows)
        if unknown > 0.02 * (b - a):
            unseen += 1  # perf did not see this thread, or lost its events, for more than 2 % of the window:
            # an unknown stretch that long would move its shares by as many points
            continue
        rows.append(thread_row(t, kernel, b - a, ts.get("steal_share")))
    spread = (statistics.median(offsets) - min(offsets)) / 1e6
    steal = ts.get("steal_share")
    stolen = f"; the host took {100 * steal:.1f} % of the CPUs (steal)" if steal else ""
    lost = f"; {unseen} left out: perf did not see or lost their events for more than 2 % of their lives" if unseen else ""
    return rows, (f"GIL at {', '.join(f'{lo:#x}' for lo, _ in windows) or 'none'}; start offsets: median "
                  f"{spread:.2f} ms after the earliest, of {len(offsets)} threads{stolen}{lost}")


# ---- running ----

def perf_lost(path):
    """The events perf lost in a perf.data file (its ring buffer was full), summed over its events."""
    out = subprocess.run(["perf", "report", "-i", path, "--stats"], capture_output=True, text=True, errors="replace")
    lost, in_event = 0, False
    for line in out.stdout.splitlines():
        if line.endswith(" stats:"):
            in_event = not line.startswith("Aggregated")
        m = re.match(r"\s*LOST_SAMPLES events:\s+(\d+)", line)
        if m and in_event:
            lost += int(m.group(1))
    return lost


def start_sched_record(path, mmap):
    proc = subprocess.Popen(["perf", "record", "-q", "-a", "-k", "mono", "-m", mmap, "-o", path,
                             "-e", "sched:sched_switch", "-e", "sched:sched_wakeup", "-e", "sched:sched_wakeup_new",
                             "-e", "sched:sched_process_fork", "-e", "sched:sched_process_exit"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.5)  # perf opens its events before the workload starts
    if proc.poll() is not None:
        sys.exit("perf record -a failed: " + proc.stderr.read().decode(errors="replace"))
    return proc


def gilhost_command(args, script, results):
    return [args.gilhost, "run", script, "-o", results, "--repeat", str(args.runs), "--warmup", "0",
            "--no-details", "--sample-interval", str(args.interval_ms)] + [x for p in args.python for x in ("-p", p)] + \
        (["--no-lock"] if args.no_lock else []) + (["--thread-states", "both"] if args.against == "exact" else [])


def run_workload(args, name, work):
    script = os.path.join(work, f"{name}.py")
    with open(script, "w") as f:
        f.write(WORKLOADS[name])
    results = os.path.join(work, f"{name}.jsonl")
    cmd = gilhost_command(args, script, results)
    if args.against == "exact":
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        return list(runs_of(results)), None
    sched, sysd = os.path.join(work, f"{name}.sched.data"), os.path.join(work, f"{name}.sys.data")
    rec = start_sched_record(sched, args.mmap)
    try:
        subprocess.run(["perf", "record", "-q", "-k", "mono", "-m", args.mmap, "-o", sysd, "-e", "raw_syscalls:sys_enter",
                        "-e", "raw_syscalls:sys_exit", "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait()
    runs = list(runs_of(results))
    perf = Timeline(perf_events(sched) + perf_events(sysd))
    perf.lost = (perf_lost(sched), perf_lost(sysd))
    for path in (sched, sysd):
        if not args.keep:
            os.unlink(path)
    return runs, perf


def checked_goals(check, goal):
    """--check's states, each with its bound: `cpu,io,gil:7` is cpu and io within `goal`, gil within 7;
    `timeline` the timeline against the totals in every state, `all` every state and the timeline."""
    goals = {}
    for token in filter(None, check.split(",")):
        name, _, bound = token.partition(":")
        bound = float(bound) if bound else goal
        states = STATES if name == "all" else [name] if name in STATES else []
        timeline = name in ("timeline", "all")
        if not states and not timeline:
            raise SystemExit(f"oracle.py: --check: no state {name!r} (states: {', '.join(STATES)}, timeline, all)")
        goals.update({s: bound for s in states})
        goals.update({"timeline " + s: bound for s in (STATES if timeline else [])})
    return goals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gilhost", default="build/gilhost")
    ap.add_argument("-p", "--python", action="append", help="builds (default 3.9, 3.12, 3.14t)")
    ap.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    ap.add_argument("--runs", type=int, default=2, help="measured runs per workload and build")
    ap.add_argument("--goal", type=float, default=5.0, help="points")
    ap.add_argument("--check", default="",
                    help="states to assert within --goal of perf's, comma-separated, each with its own bound as "
                         "STATE:POINTS if it has one; `timeline`: the timeline within --goal of the totals in every "
                         "state; `all`: both, every state")
    ap.add_argument("--min-life-ms", type=float, default=100.0, help="worker threads that lived less are left out")
    ap.add_argument("--no-lock", action="store_true", help="pass --no-lock to gilhost")
    ap.add_argument("--interval-ms", type=int, default=10, help="gilhost's --sample-interval (default 10, gilhost's)")
    ap.add_argument("--mmap", default="8M",
                    help="perf record's ring buffer per CPU (-m; default 8M): smaller ones lose events on a busy machine")
    ap.add_argument("--max-steal", type=float, default=0.05,
                    help="a run where the host took more of the CPUs than this (steal, as the run records it) is "
                         "compared apart, not checked: what a running thread lost to the host is an estimate")
    ap.add_argument("--json", help="write every thread's comparison here")
    ap.add_argument("--keep", help="keep the scripts, results and perf files in this folder")
    ap.add_argument("--against", choices=["perf", "exact"], default="perf",
                    help="the oracle: perf's record (default), or gilhost's exact mode on the same runs")
    args = ap.parse_args()
    goals = checked_goals(args.check, args.goal)  # a --check that names no state fails now, not after the runs
    args.python = args.python or ["3.9", "3.12", "3.14t"]
    if args.against == "perf" and not shutil.which("perf"):
        sys.exit("perf is not installed (Debian: apt-get install linux-perf)")
    work = args.keep or tempfile.mkdtemp(prefix="gilhost-oracle-")
    os.makedirs(work, exist_ok=True)
    load0 = os.getloadavg()
    table, everything = {}, []
    for name in args.workload or list(WORKLOADS):
        runs, perf = run_workload(args, name, work)
        if perf and any(perf.lost):
            print(f"# {name}: perf lost {perf.lost[0]} scheduler and {perf.lost[1]} system-call events (a thread "
                  f"whose lost stretch is over 2 % of its life is left out)", flush=True)
        for rec in runs:
            rows, note = (compare_run(rec, perf, args.min_life_ms * 1e6) if perf
                          else compare_modes(rec, args.min_life_ms * 1e6))
            build = rec.get("interpreter", "?")
            print(f"# {name} {build} repeat {rec.get('repeat')}: {len(rows)} worker threads, {note}", flush=True)
            for row in rows:
                stolen_run = (row["steal_share"] or 0.0) > args.max_steal
                everything.append({"workload": name, "build": build, "stolen_run": stolen_run, **row})
                if stolen_run:
                    continue  # apart: gilhost's stolen time is an estimate (report's last line)
                for s in STATES:
                    cell = table.setdefault((name, build), {})
                    cell[s] = max(cell.get(s, 0.0), abs(row["dev"][s]))
                    cell["timeline " + s] = max(cell.get("timeline " + s, 0.0), abs(row["timeline_dev"][s]))
                cell["unclassified"] = max(cell.get("unclassified", 0.0), row["unclassified"])
    report(table, everything, args, load0, os.getloadavg())
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    failed = [(k, s, v[s], goals[s]) for k, v in table.items() for s in goals if v.get(s, 0.0) > goals[s]]
    for (name, build), s, v, goal in failed:
        print(f"FAIL {name} {build} {s}: {v:.1f} points > {goal:g}")
        print_worst(everything, name, build, s, args)
    if not everything:
        print("FAIL: no worker thread compared")
        return 1
    if not table:
        print("FAIL: no worker thread checked: the host took over "
              f"{100 * args.max_steal:g} % of the CPUs (steal) in every run (--max-steal)")
        return 1
    return 1 if failed else 0


def sides(args):
    """What is compared with what: gilhost's sampled states and the oracle's."""
    return ("gilhost", "perf") if args.against == "perf" else ("sampled", "exact")


def print_worst(everything, name, build, state, args):
    """The thread behind a failed cell, state by state: what a CI log needs to tell gilhost's error from perf's."""
    key = (lambda r: abs(r["timeline_dev"][state[9:]])) if state.startswith("timeline ") else (lambda r: abs(r["dev"][state]))
    rows = [r for r in everything if r["workload"] == name and r["build"] == build and not r["stolen_run"]]
    if not rows:
        return
    r = max(rows, key=key)
    def ms(d):
        return ", ".join(f"{s} {d[s]:.1f}" for s in STATES if d[s] >= 0.05)
    ours, oracle = sides(args)
    print(f"  thread {r['tid']} ({r['name']}), {r['life_ms']:.1f} ms: {ours} ms {ms(r['gilhost_ms'])}; "
          f"{oracle} ms {ms(r['kernel_ms'])}; unclassified {r['unclassified']:.1f} points")


def report(table, everything, args, load0, load1):
    ours, oracle = sides(args)
    print(f"\nworst |{ours} - {oracle}| per worker thread, points of share ({args.runs} runs per cell; "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after)")
    print(f"{'workload':10} {'build':8} " + " ".join(f"{s:>8}" for s in STATES) + "   timeline-vs-totals  unclassified")
    for (name, build), cell in table.items():
        tl = max(cell["timeline " + s] for s in STATES)
        print(f"{name:10} {build:8} " + " ".join(f"{cell[s]:8.1f}" for s in STATES) + f"   {tl:8.1f}"
              + f"            {cell['unclassified']:8.1f}")
    for name, build in dict.fromkeys((r["workload"], r["build"]) for r in everything if (r["workload"], r["build"]) not in table):
        print(f"{name:10} {build:8} " + " ".join(f"{'?':>8}" for _ in STATES)
              + "   (every run's host took over " + f"{100 * args.max_steal:g} % of the CPUs: below)")
    if table:
        print(f"{'worst':19} " + " ".join(f"{max(c[s] for c in table.values()):8.1f}" for s in STATES)
              + f"   {max(c['timeline ' + s] for c in table.values() for s in STATES):8.1f}"
              + f"            {max(c['unclassified'] for c in table.values()):8.1f}")
    print(f"({ours}: gilhost's shares of the time it classified, as it shows them; {oracle}: "
          + ("perf's of the same window" if oracle == "perf" else "the exact record's of the same thread, same run")
          + ". Unclassified: the most of a thread's life gilhost left in no state, in points)")
    checked = [r for r in everything if not r["stolen_run"]]
    signed = {s: [r["dev"][s] for r in checked] for s in STATES}
    print(f"threads where {ours} is above / below {oracle} by > 2 points: "
          + ", ".join(f"{s} {sum(v > 2 for v in signed[s])}/{sum(v < -2 for v in signed[s])}" for s in STATES)
          + f" (of {len(checked)})")
    apart = [r for r in everything if r["stolen_run"]]
    if apart:
        worst = {s: max(r["dev"][s] for r in apart) if max(r["dev"][s] for r in apart) > -min(r["dev"][s] for r in apart)
                 else min(r["dev"][s] for r in apart) for s in STATES}
        print(f"not in the table: {len(apart)} threads of runs where the host took over {100 * args.max_steal:g} % of "
              f"the CPUs (steal, up to {100 * max(r['steal_share'] for r in apart):.1f} %); their worst {ours} - {oracle}: "
              + ", ".join(f"{s} {worst[s]:+.1f}" for s in STATES if abs(worst[s]) >= 0.05)
              + f"; CPU time given back for steal, mean {statistics.mean(r['stolen'] for r in apart):.1f} points "
              "(docs/performance.md, \"The host's steal\")")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_avg": [load0, load1], "runs": args.runs, "builds": args.python,
                       "threads": everything}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
