// classify_threads (measure/thread_states.hpp): the sampler's raw readings of each thread, after the run,
// turned into its time per state and its timeline. Both come from one list of intervals (the time between
// two readings, each with its own time per state), so the timeline always agrees with the totals, even
// where a later reading corrects an earlier interval.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "measure/thread_states.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

// `ns` * `part` / `whole`, in doubles: a share of a time by a proportion, the product free of overflow.
std::int64_t scaled(std::int64_t ns, std::int64_t part, std::int64_t whole) {
  return static_cast<std::int64_t>(static_cast<double>(ns) * static_cast<double>(part) / static_cast<double>(whole));
}

// The time between two readings (or, for the first, the thread's life before it).
struct Interval {
  std::int64_t start_ns = 0, end_ns = 0;
  ThreadTimes times;
  // Off-CPU time taken from a running thread's lagging counters: a later reading may show it was CPU or
  // run-queue time after all.
  ThreadTimes provisional;
  std::optional<ThreadState> lead, tail;  // the wait it was seen in at its start, at its end
  // Off-CPU time of a thread whose end was reported, before any wait was seen: known to be off a CPU
  // (its counters are exact at its end), not in what. In no state.
  std::int64_t unclassified = 0;
  std::int64_t stolen = 0;  // of its CPU time, what the host took while the thread ran (stolen_while_running)

  // Its time in `s` becomes unclassified: it was off a CPU, in what is not known.
  void unclassify(ThreadState s) {
    unclassified += times[s];
    times[s] = 0;
    provisional[s] = 0;
  }
};

// One thread's readings → its intervals.
class ThreadAccount {
 public:
  ThreadAccount(const ProcessGils& gils, const ProbeCalls& calls, const StealSeries& steal)
      : gils_(gils), calls_(calls), steal_(steal) {}

  void add(const ThreadReading& r) {
    if (!prev_) {
      // Its time before the first sight was spent on a CPU or waiting for one (it had just begun).
      Interval first;
      first.start_ns = std::max<std::int64_t>(0, r.t_ns - r.cpu_ns - r.delay_ns);
      first.end_ns = r.t_ns;
      first.times[ThreadState::cpu] = r.cpu_ns;
      first.times[ThreadState::runqueue] = r.delay_ns;
      intervals_.push_back(first);
    } else {
      interval(*prev_, r);
    }
    if (reading_blocked(r)) {
      const ThreadState wait = classify_wait(r.syscall, gils_);
      if (!prev_) recent_[wait] += kSight;  // later readings count in their interval
      name_unseen(wait);
      // A thread seen blocked has up-to-date counters, unless they have not moved since the reading
      // before: then the sampler took the wait as the same (measure/thread_states), and the thread may
      // have been woken and queued since, its wait for a core not yet counted.
      if (!prev_ || !counters_still(*prev_, r)) correctable_from_ = intervals_.size();
    }
    prev_ = &r;
  }

  // After the last reading: off-CPU time of a thread never seen waiting is the run queue's. It was
  // runnable at every reading, and a queued thread's current wait is not yet in its counters. Unless
  // its end was reported (`exact_end`): a thread known to have lived on after its last reading, with
  // its CPU time exact to its end, may have waited in anything; what no reading saw is unclassified.
  const std::vector<Interval>& finish(bool exact_end) {
    if (exact_end) leave_unseen_unclassified();
    else name_unseen(ThreadState::runqueue);
    return intervals_;
  }

  // The stretch from the last reading to a reported end (`end`, with the probes taken after that reading):
  // its CPU time is exact, its time waiting for a core not known (the report has none). Past a run's first
  // ticks a thread is read every kStride of them, so this stretch is up to 30 ms, 1-3 % of a 0.8 s thread's
  // life. Its time off a CPU is estimated as the run queue's share of the thread's time off a CPU before
  // it, and the rest split as any interval's: by the probes' sights and the last reading's wait, else (no
  // sight: running at its last reading, no probe since) as its recent sights were. A thread parked in a lock
  // at its last reading waited there until woken, as in any interval that ends with it running; leaving the
  // stretch in no state made its other shares too big (docs/performance.md, "The stretch after a thread's
  // last reading"). A thread never seen waiting has only the run queue's share: the rest stays unclassified.
  void close_at_reported_end(const ThreadReading& end) {
    ThreadTimes before;
    for (const auto& iv : intervals_) before += iv.times;
    add(end);
    Interval& tail = intervals_.back();
    tail.provisional = {};  // nothing after it gives back
    ThreadTimes waits = tail.times;
    waits[ThreadState::cpu] = waits[ThreadState::runqueue] = 0;
    const std::int64_t off = waits.lived_ns(), off_before = before.lived_ns() - before[ThreadState::cpu];
    if (off <= 0) return;
    const std::int64_t queued = off_before > 0 ? scaled(off, before[ThreadState::runqueue], off_before) : 0;
    const ThreadTimes split = share_out(off - queued, waits);
    for (ThreadState s : kThreadStates)
      if (s != ThreadState::cpu) tail.times[s] = split[s];
    tail.times[ThreadState::runqueue] += queued;
  }

 private:
  // CPU and run-queue deltas are exact; the rest is off the CPU, split among the waits the thread was seen
  // in: at either end, and by the probes between (an end one share, a probe two: sights_of; half each for
  // two ends that differ and no probe), else as its recent sights were (a thread that ran at both ends, as
  // a GIL's waiters do between their turns; before any wait was seen, the first one seen after), or in the
  // run queue for a thread runnable at both ends whose counters did not move (its probes then saw it
  // woken, not blocked). A
  // running thread's counters lag (its CPU time until the scheduler's next tick, its wait for a core
  // until it gets one): what an interval ending in a running reading (or in a wait the sampler did not
  // read again) took for off-CPU time is provisional, and given back to the interval it came from, as
  // CPU and run-queue time, when a later reading's counters show more than its interval's length.
  void interval(const ThreadReading& a, const ThreadReading& b) {
    Interval iv;
    iv.start_ns = a.t_ns;
    iv.end_ns = b.t_ns;
    const std::int64_t dt = b.t_ns - a.t_ns;
    iv.times[ThreadState::cpu] = std::max<std::int64_t>(0, b.cpu_ns - a.cpu_ns);
    iv.times[ThreadState::runqueue] = std::max<std::int64_t>(0, b.delay_ns - a.delay_ns);
    give_back(iv, iv.times[ThreadState::cpu] + iv.times[ThreadState::runqueue] - dt);
    std::int64_t off = std::max<std::int64_t>(0, dt - iv.times[ThreadState::cpu] - iv.times[ThreadState::runqueue]);
    iv.stolen = std::min(off, steal_.stolen_while_running(a.t_ns, b.t_ns, iv.times[ThreadState::cpu]));
    iv.times[ThreadState::cpu] += iv.stolen;
    off -= iv.stolen;
    if (reading_blocked(a)) iv.lead = classify_wait(a.syscall, gils_);
    if (reading_blocked(b)) iv.tail = classify_wait(b.syscall, gils_);
    // Runnable at both readings and not on a CPU in between: it was queued for a core all along.
    const bool queued = !reading_blocked(a) && !reading_blocked(b) && counters_still(a, b);
    const ThreadTimes sights = queued ? ThreadTimes{} : sights_of(iv, b.probes);
    const bool never_seen = recent_.lived_ns() == 0;
    if (sights.lived_ns() == 0 && never_seen && !queued && off > 0) unseen_.push_back(intervals_.size());
    ThreadTimes split;
    if (sights.lived_ns() > 0) split = share_out(off, sights);
    else if (queued || never_seen) split[queued ? ThreadState::runqueue : ThreadState::other] = off;
    else split = share_out(off, recent_);
    remember(iv, sights);
    iv.times += split;
    if (!reading_blocked(b) || counters_still(a, b)) iv.provisional += split;
    intervals_.push_back(iv);
    // A wait seen by probes alone (none at the interval's end) is the first one seen, for the intervals before.
    if (!iv.tail && sights.lived_ns() > 0) name_unseen(most_seen(sights));
  }

  // The waits of its recent sights, the newest weighing most (each interval's older ones by 7/8): what an
  // interval that saw no wait is split by. A rare sight (a lock waiter seen once in the GIL) then takes
  // its share of the intervals after it, not all of them until the next sight.
  void remember(const Interval& iv, ThreadTimes sights) {
    if (iv.lead) sights[*iv.lead] -= 1;  // counted with the interval before, as its tail
    if (sights.lived_ns() <= 0) return;
    for (ThreadState s : kThreadStates) recent_[s] = recent_[s] - recent_[s] / 8 + kSight * sights[s];
  }

  // The waits the thread was seen in over an interval: one share for each end, two for each probe. A
  // reading is the end of two intervals, so each sight weighs the same in the thread's totals; and a
  // tick's readings see the GIL waits its own work makes (it holds a core for the time it reads every
  // thread): against perf, a lock convoy on 3.9 was seen in the GIL at 2.5 % of the ticks' sights and
  // 1.0-1.2 % of the probes', as perf had it (docs/performance.md, "Probes").
  ThreadTimes sights_of(const Interval& iv, const ProbeTally& probes) const {
    ThreadTimes sights;
    if (iv.lead) sights[*iv.lead] += 1;
    if (iv.tail) sights[*iv.tail] += 1;
    for (std::size_t k = 0; k < ProbeTally::kSlots; ++k)
      if (probes.count[k] > 0 && probes.call[k] < calls_.size()) sights[classify_wait(calls_[probes.call[k]], gils_)] += 2 * probes.count[k];
    return sights;
  }

  // `off` ns in proportion to `sights` (what rounding leaves goes to the most seen).
  static ThreadTimes share_out(std::int64_t off, const ThreadTimes& sights) {
    ThreadTimes split;
    const std::int64_t total = sights.lived_ns();
    std::int64_t given = 0;
    for (ThreadState s : kThreadStates) {
      split[s] = scaled(off, sights[s], total);
      given += split[s];
    }
    split[most_seen(sights)] += off - given;
    return split;
  }

  static ThreadState most_seen(const ThreadTimes& sights) {
    ThreadState best = ThreadState::other;
    for (ThreadState s : kThreadStates)
      if (sights[s] > sights[best]) best = s;
    return best;
  }

  // `excess` ns of `now`'s CPU and run-queue time that its length cannot hold: taken back from the
  // provisional off-CPU time of the intervals before it (the latest first), which get it as CPU and
  // run-queue time in the proportion `now` has them.
  void give_back(Interval& now, std::int64_t excess) {
    const std::int64_t cpu = now.times[ThreadState::cpu], delay = now.times[ThreadState::runqueue];
    for (std::size_t k = intervals_.size(); k > correctable_from_ && excess > 0; --k) {
      Interval& earlier = intervals_[k - 1];
      for (ThreadState s : kThreadStates) {
        const std::int64_t taken = std::min(excess, earlier.provisional[s]);
        if (taken <= 0) continue;
        // Time already taken for run-queue time stays that, as far as `now`'s run-queue time covers it.
        const std::int64_t as_cpu =
            s == ThreadState::runqueue ? std::max<std::int64_t>(0, taken - now.times[ThreadState::runqueue])
            : cpu + delay > 0 ? scaled(taken, cpu, cpu + delay)
                              : taken;
        earlier.provisional[s] -= taken;
        excess -= taken;
        earlier.times[s] -= taken;
        earlier.times[ThreadState::cpu] += as_cpu;
        earlier.times[ThreadState::runqueue] += taken - as_cpu;
        now.times[ThreadState::cpu] -= as_cpu;
        now.times[ThreadState::runqueue] -= taken - as_cpu;
      }
    }
  }

  // Off-CPU time in intervals before the thread was first seen waiting (held as `other`): it goes to the
  // first wait it is seen in.
  void name_unseen(ThreadState state) {
    for (std::size_t k : unseen_) {
      Interval& iv = intervals_[k];
      iv.times[state] += iv.times[ThreadState::other];
      iv.times[ThreadState::other] = 0;
      iv.provisional[state] += iv.provisional[ThreadState::other];
      iv.provisional[ThreadState::other] = 0;
    }
    unseen_.clear();
  }

  void leave_unseen_unclassified() {
    for (std::size_t k : unseen_) intervals_[k].unclassify(ThreadState::other);
    unseen_.clear();
  }

  const ProcessGils& gils_;
  const ProbeCalls& calls_;
  const StealSeries& steal_;
  const ThreadReading* prev_ = nullptr;
  static constexpr std::int64_t kSight = 1024;
  ThreadTimes recent_;  // the waits of its recent sights (remember), in no time unit
  std::vector<std::size_t> unseen_;
  std::vector<Interval> intervals_;
  std::size_t correctable_from_ = 0;  // intervals before this one hold nothing provisional
};

// The order an interval's states are drawn in: the wait it was seen in at its start, the run queue, the
// CPU, any other wait, the wait it was seen in at its end.
std::vector<ThreadState> drawing_order(const Interval& iv) {
  std::vector<ThreadState> order;
  auto put = [&](ThreadState s) {
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  };
  if (iv.lead) put(*iv.lead);
  put(ThreadState::runqueue);
  put(ThreadState::cpu);
  for (ThreadState s : kThreadStates)
    if (s != iv.tail) put(s);
  if (iv.tail) put(*iv.tail);
  return order;
}

void add_segment(std::vector<ThreadSegment>& timeline, std::int64_t start, ThreadState state) {
  if (!timeline.empty() && timeline.back().state == state) return;
  if (!timeline.empty() && timeline.back().start_ns >= start) {
    timeline.back().state = state;  // the one before it lasted no time
    if (timeline.size() >= 2 && timeline[timeline.size() - 2].state == state) timeline.pop_back();
    return;
  }
  timeline.push_back({start, state});
}

// [from, to) drawn as `times` says, each state a share of it in proportion to its time.
void draw(std::vector<ThreadSegment>& timeline, std::int64_t from, std::int64_t to, const ThreadTimes& times,
          const std::vector<ThreadState>& order) {
  const std::int64_t total = times.lived_ns();
  if (total <= 0 || to <= from) return;
  std::int64_t done = 0;
  for (ThreadState s : order) {
    if (times[s] <= 0) continue;
    const std::int64_t at = from + scaled(to - from, done, total);
    add_segment(timeline, at, s);
    done += times[s];
  }
}

// What an interval's stretch of the timeline shows: its states, and its unclassified time as `other` (a
// wait, not told which; the totals keep it apart, in unclassified_ns).
ThreadTimes drawn(const Interval& iv) {
  ThreadTimes t = iv.times;
  t[ThreadState::other] += iv.unclassified;
  return t;
}

// The intervals, or buckets of them when there are too many, each drawn in proportion to its states: at
// most ThreadRecord::kMaxSegments segments, whose time per state is the totals'.
std::vector<ThreadSegment> timeline_of(const std::vector<Interval>& intervals) {
  std::vector<ThreadSegment> out;
  for (const auto& iv : intervals) draw(out, iv.start_ns, iv.end_ns, drawn(iv), drawing_order(iv));
  if (out.size() <= ThreadRecord::kMaxSegments || intervals.empty()) return out;
  const std::int64_t origin = intervals.front().start_ns;
  const std::int64_t span = std::max<std::int64_t>(1, intervals.back().end_ns - origin);
  for (std::size_t buckets = ThreadRecord::kMaxSegments / 2; buckets >= 1; buckets /= 2) {
    std::vector<ThreadTimes> in_bucket(buckets);
    for (const auto& iv : intervals) {
      const auto b = std::min<std::size_t>(buckets - 1, static_cast<std::size_t>((iv.start_ns - origin) * static_cast<std::int64_t>(buckets) / span));
      in_bucket[b] += drawn(iv);
    }
    out.clear();
    const std::vector<ThreadState> order(kThreadStates.begin(), kThreadStates.end());
    for (std::size_t b = 0; b < buckets; ++b)
      draw(out, origin + static_cast<std::int64_t>(b) * span / static_cast<std::int64_t>(buckets),
           origin + static_cast<std::int64_t>(b + 1) * span / static_cast<std::int64_t>(buckets), in_bucket[b], order);
    if (out.size() <= ThreadRecord::kMaxSegments) break;
  }
  return out;
}

// A reading at each end of a reported thread's life, where the sampler did not read it there: at its start
// (nothing used yet) and at its end (running, its CPU time as it reported, never below what a reading of
// its exit showed; its wait for a core not known, so left as last read: ThreadAccount::close_at_reported_end
// says what the interval it closes is).
struct ReportedEnds {
  std::optional<ThreadReading> first, last;
};

ReportedEnds reported_ends(const ThreadEndReport& e, std::int64_t origin_ns, const std::vector<ThreadReading>& seen) {
  ReportedEnds out;
  ThreadReading start;
  start.t_ns = std::max<std::int64_t>(0, e.started_ns - origin_ns);
  start.syscall.kind = SyscallReading::Kind::running;
  if (seen.empty() || start.t_ns < seen.front().t_ns) out.first = start;
  ThreadReading end;
  end.t_ns = e.ended_ns - origin_ns;
  end.cpu_ns = std::max(e.cpu_ns, seen.empty() ? 0 : seen.back().cpu_ns);
  end.delay_ns = seen.empty() ? 0 : seen.back().delay_ns;
  end.syscall.kind = SyscallReading::Kind::running;
  if (seen.empty() || end.t_ns > seen.back().t_ns) out.last = end;
  return out;
}

// One thread's record from its readings, closed by its report of its end where there is one.
ThreadRecord record_of(const ThreadTrack& t, const ProcessGils& gils, const ThreadEndReport* report, std::int64_t origin_ns,
                       const StealSeries& steal) {
  ThreadRecord rec;
  rec.pid = t.pid;
  rec.tid = t.tid;
  rec.name = t.name;
  rec.gil_located = gils.located;
  const ReportedEnds ends = report ? reported_ends(*report, origin_ns, t.readings) : ReportedEnds{};
  ThreadAccount account(gils, t.calls, steal);
  if (ends.first) account.add(*ends.first);
  for (const auto& r : t.readings) account.add(r);
  if (ends.last) {
    ThreadReading end = *ends.last;
    end.probes = t.probes_after_last;
    account.close_at_reported_end(end);
  }
  const auto& intervals = account.finish(report != nullptr);
  if (!intervals.empty()) {
    rec.start_ns = intervals.front().start_ns;
    rec.end_ns = intervals.back().end_ns;
  }
  for (const auto& iv : intervals) {
    rec.times += iv.times;
    rec.unclassified_ns += iv.unclassified;
    rec.stolen_ns += iv.stolen;
  }
  rec.timeline = timeline_of(intervals);
  return rec;
}

}  // namespace

namespace {

// Where the GILs of one process of the run live, from what the runner said of its own (`root`).
ProcessGils gils_of_process(const ThreadObservations::Process& process, const ProcessGils& root,
                            const std::vector<GilReport>& gils, int threads) {
  if (threads == 1) return {true, {}};  // a lone thread never waits for its own GIL
  if (process.root_program) return root;
  // Another program (a spawn or forkserver worker): its main interpreter's GIL where its object is
  // loaded in it, when the runner's is static in an object (libpython, or the program).
  for (const auto& g : gils) {
    if (g.interpreter != 0 || g.object.empty()) continue;
    const auto base = process.bases.find(g.object);
    if (base == process.bases.end()) continue;
    if (!g.has_gil) return {true, {}};  // the same build, with no GIL
    const std::uint64_t lo = base->second + g.object_offset;
    return {true, {{lo, lo + (g.hi - g.lo)}}};
  }
  return {false, {}};
}

std::string seconds(std::int64_t ns) { return format_seconds(static_cast<double>(ns) / 1e9); }

// The runner's reports of its threads' ends, by tid, each used once: a report goes to the sampler's track of
// its tid whose readings lie within the life it reports (the kernel reuses tids), else it stands alone.
class ReportIndex {
 public:
  ReportIndex(const ThreadEnds& ends, std::int64_t origin_ns) : ends_(ends), origin_(origin_ns), used_(ends.reports.size()) {
    for (std::size_t i = 0; i < ends.reports.size(); ++i) by_tid_.emplace(ends.reports[i].tid, i);
  }

  // `t`'s report, or nullptr: the one whose life holds the track's first reading (a track is one thread:
  // a tid gone from its process's list is not read again). Its later readings may come well after the
  // reported end (the thread still exiting, queued for a core on a loaded machine): a track held to end
  // within kSlackNs of it made the report a second thread of the same tid, with the report's CPU and the
  // rest of its life unclassified (seen once: a 3.14t socket producer at load 3.4, 94 % of 782 ms).
  const ThreadEndReport* take(const ThreadTrack& t) {
    if (t.readings.empty()) return nullptr;
    const auto [lo, hi] = by_tid_.equal_range(t.tid);
    for (auto it = lo; it != hi; ++it) {
      const ThreadEndReport& e = ends_.reports[it->second];
      const std::int64_t first = t.readings.front().t_ns;
      if (used_[it->second] || e.started_ns - origin_ > first || first > e.ended_ns - origin_ + kSlackNs) continue;
      used_[it->second] = true;
      return &e;
    }
    return nullptr;
  }

  // The reports no track took: threads the sampler never read.
  std::vector<const ThreadEndReport*> unused() const {
    std::vector<const ThreadEndReport*> out;
    for (std::size_t i = 0; i < used_.size(); ++i)
      if (!used_[i]) out.push_back(&ends_.reports[i]);
    return out;
  }

 private:
  static constexpr std::int64_t kSlackNs = 20000000;
  const ThreadEnds& ends_;
  std::int64_t origin_;
  std::vector<bool> used_;
  std::multimap<pid_t, std::size_t> by_tid_;
};

// What the reports change in the coverage, per process: the CPU of reported threads after the sampler's
// last reading of them (those that ended before the process's last checkpoint, which the kernel's count
// includes), and the CPU of threads whose time is partly unclassified, in that part's proportion: their
// waits are not known.
struct ReportedCpu {
  std::map<pid_t, std::int64_t> added, uncovered;
  long reported = 0, reported_only = 0;  // threads with a report; of them, never read by the sampler

  void note(const ThreadRecord& rec, const ThreadEndReport& e, const ThreadTrack& t, const ThreadObservations& obs) {
    ++reported;
    if (t.readings.empty()) ++reported_only;
    const auto p = obs.processes.find(t.pid);
    const std::int64_t checkpoint = p != obs.processes.end() ? p->second.checkpoint_ns : -1;
    if (checkpoint >= 0 && e.ended_ns - obs.start_ns > checkpoint) return;  // not in the kernel's count yet
    const std::int64_t cpu = rec.times[ThreadState::cpu];
    added[t.pid] += std::max<std::int64_t>(0, cpu - (t.readings.empty() ? 0 : t.readings.back().cpu_ns));
    const std::int64_t life = rec.times.lived_ns() + rec.unclassified_ns;
    if (rec.unclassified_ns > 0 && life > 0)
      uncovered[t.pid] += scaled(cpu, rec.unclassified_ns, life);
  }
};

// The coverage's figures: the tree's CPU (the kernel's counts), what the threads with a known GIL wait
// account for, what those whose GIL was not located do, and the reports' part.
struct CoverageCounts {
  std::int64_t kernel = 0, seen = 0, unlocated = 0;
  long unlocated_processes = 0;
  bool script_interpreters = false;
  const ReportedCpu* reports = nullptr;
  std::int64_t dropped = 0;  // thread ends the runner did not report (past its cap)
};

// Why the Python threads' time is partly unclassified and what the runner left out, in plain words.
void reported_reasons(const ThreadStates& out, const CoverageCounts& c, std::vector<std::string>& why) {
  const std::int64_t life = out.python_totals.lived_ns() + out.python_unclassified_ns;
  const long only = c.reports->reported_only, reported = c.reports->reported;
  if (out.python_unclassified_ns > 0 && out.python_unclassified_ns * 100 >= life)
    why.push_back(seconds(out.python_unclassified_ns) + " of the Python threads' " + seconds(life) +
                  " off a CPU in waits no reading saw (" + group_thousands(only) +
                  (only == 1 ? " thread known only from its report of its end)" : " threads known only from their report of their end)"));
  if (c.dropped > 0)
    why.push_back("the runner reported the ends of " + group_thousands(reported) + (reported == 1 ? " thread" : " threads") +
                  ", not of " + group_thousands(static_cast<long long>(c.dropped)) + " more (its cap)");
}

// Why the threads seen account for less than the kernel's count: each reason in plain words.
std::vector<std::string> coverage_reasons(const ThreadObservations& obs, const ThreadStates& out, const CoverageCounts& c) {
  const auto& m = obs.misses;
  std::vector<std::string> why;
  if (c.unlocated > 0 && c.script_interpreters)
    why.push_back("the script's own subinterpreters: their GILs are not located (" + seconds(c.unlocated) + " of CPU)");
  else if (c.unlocated > 0)
    why.push_back("GIL not located in " + group_thousands(c.unlocated_processes) + " process" + (c.unlocated_processes == 1 ? "" : "es") +
                  " (" + seconds(c.unlocated) + " of CPU): their GIL wait is unknown");
  if (m.fd_threads > 0 || m.fd_processes > 0)
    why.push_back("descriptors ran out: " + group_thousands(m.fd_threads) + " threads and " + group_thousands(m.fd_processes) +
                  " processes not read");
  if (m.unreadable_threads > 0) why.push_back("/proc/…/task files unreadable for " + group_thousands(m.unreadable_threads) + " threads");
  if (m.capped_reads > 0)
    why.push_back(std::to_string(ThreadStateSampler::kMaxThreadsPerTick) + "-thread cap: up to " + group_thousands(m.most_due) +
                  " threads due in one tick, read in turn");
  reported_reasons(out, c, why);
  const std::int64_t missed = c.kernel - c.seen - c.unlocated;
  const long read = static_cast<long>(obs.threads.size()), only = c.reports->reported_only;
  // With reports, CPU in no thread seen is also the reported threads' exits after their last Python code.
  const std::string where = c.reports->reported > 0
                                ? " of CPU ran in threads that lived between two readings, or in threads' exits after their report ("
                                : " of CPU ran in threads that lived between two readings (";
  if (out.coverage && *out.coverage < ThreadStates::kMinCoverage && missed > 0)
    why.push_back(seconds(missed) + " of the tree's " + seconds(c.kernel) + where + group_thousands(read) +
                  (read == 1 ? " thread seen" : " threads seen") +
                  (only > 0 ? ", " + group_thousands(only) + " more known only from their end)" : ")"));
  return why;
}

std::int64_t at(const std::map<pid_t, std::int64_t>& m, pid_t pid) {
  const auto it = m.find(pid);
  return it == m.end() ? 0 : it->second;
}

// thread_states.coverage: the smaller of two shares. The share of the tree's CPU (each process's kernel
// count at its last checkpoint) that threads with a known GIL wait account for, by then; and the share of
// the Python threads' time that is classified (reported threads' waits that no reading saw are not). Then
// why the rest was not seen.
void account_coverage(const ThreadObservations& obs, const std::map<pid_t, bool>& located, CoverageCounts c, ThreadStates& out) {
  for (const auto& [pid, p] : obs.processes) {
    if (p.cpu_ns < 0) continue;
    c.kernel += p.cpu_ns;
    const auto known = located.find(pid);
    const std::int64_t seen = p.seen_cpu_ns + at(c.reports->added, pid) - at(c.reports->uncovered, pid);
    const std::int64_t mine = std::clamp<std::int64_t>(seen, 0, p.cpu_ns + 10000000);  // the kernel's count is in 10 ms ticks
    if (known != located.end() && !known->second) {
      c.unlocated += mine;
      ++c.unlocated_processes;
    } else {
      c.seen += mine;
    }
  }
  if (c.kernel <= 0) return;  // nothing ran long enough to count: not measured
  const std::int64_t lived = out.python_totals.lived_ns(), life = lived + out.python_unclassified_ns;
  const double classified = life > 0 ? static_cast<double>(lived) / static_cast<double>(life) : 1.0;
  out.coverage = std::min({1.0, static_cast<double>(c.seen) / static_cast<double>(c.kernel), classified});
  for (const auto& w : coverage_reasons(obs, out, c)) out.coverage_why += (out.coverage_why.empty() ? "" : "; ") + w;
}

// The root's GILs from what the runner said; `out` records them and says how GIL waits were told apart.
ProcessGils root_gils_of(const std::vector<GilReport>& gils, const std::string& unlocated_why, bool& script_interpreters,
                         ThreadStates& out) {
  ProcessGils root_gils;
  root_gils.located = !gils.empty();
  for (const auto& g : gils) {
    if (g.interpreter < 0) {
      script_interpreters = true;
    } else if (g.has_gil) {
      root_gils.windows.push_back({g.lo, g.hi});
      out.gil_windows.push_back({g.lo, g.hi});
    }
  }
  out.gil = !root_gils.located ? unlocated_why : root_gils.windows.empty() ? "none" : "located";
  if (script_interpreters) root_gils.located = false;
  return root_gils;
}

// Adds one thread's record to the totals, and to the list while it has room.
void keep_record(ThreadRecord rec, ThreadStates& out) {
  if (rec.python) {
    out.python_totals += rec.times;
    out.python_unclassified_ns += rec.unclassified_ns;
    out.python_stolen_ns += rec.stolen_ns;
  }
  if (static_cast<int>(out.threads.size()) < kMaxThreadsKept) out.threads.push_back(std::move(rec));
  else ++out.threads_not_kept;
}

}  // namespace

ThreadStates classify_threads(const ThreadObservations& obs, const std::vector<GilReport>& gils,
                              const std::string& unlocated_why, const std::vector<pid_t>& not_the_case,
                              const ThreadEnds& ends) {
  ThreadStates out;
  out.interval_ms = obs.interval_ms;
  out.samples = obs.ticks;
  out.probes = obs.probes;
  out.cost_ns = obs.cost_ns;
  out.steal_share = obs.steal.run_share();
  CoverageCounts counts;
  const ProcessGils root_gils = root_gils_of(gils, unlocated_why, counts.script_interpreters, out);
  auto excluded = [&](pid_t tid) { return std::find(not_the_case.begin(), not_the_case.end(), tid) != not_the_case.end(); };
  std::map<pid_t, int> threads_of;
  for (const auto& t : obs.threads) ++threads_of[t.pid];
  if (!ends.reports.empty()) threads_of[obs.root] += static_cast<int>(ends.reports.size());
  std::map<pid_t, ProcessGils> gils_by_pid;
  std::map<pid_t, bool> located;
  for (const auto& [pid, count] : threads_of) {
    const auto found = obs.processes.find(pid);
    const ThreadObservations::Process process = found != obs.processes.end() ? found->second : ThreadObservations::Process{};
    gils_by_pid[pid] = gils_of_process(process, root_gils, gils, count);
    located[pid] = gils_by_pid[pid].located || !process.python;
  }
  auto is_python = [&](pid_t pid) {
    const auto found = obs.processes.find(pid);
    return found != obs.processes.end() && found->second.python;
  };
  ReportIndex index(ends, obs.start_ns);
  ReportedCpu reported;
  auto add = [&](const ThreadTrack& t, const ThreadEndReport* report) {
    ThreadRecord rec = record_of(t, gils_by_pid[t.pid], report, obs.start_ns, obs.steal);
    rec.python = is_python(t.pid);
    if (report) reported.note(rec, *report, t, obs);
    keep_record(std::move(rec), out);
  };
  for (const auto& t : obs.threads)
    if (!excluded(t.tid)) add(t, t.pid == obs.root ? index.take(t) : nullptr);
  for (const ThreadEndReport* e : index.unused())
    if (!excluded(e->tid)) add(ThreadTrack{obs.root, e->tid, "", {}}, e);
  out.threads_reported = static_cast<int>(reported.reported);
  counts.reports = &reported;
  counts.dropped = ends.dropped;
  account_coverage(obs, located, counts, out);
  return out;
}

}  // namespace gilhost
