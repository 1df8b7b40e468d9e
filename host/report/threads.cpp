#include "report/threads.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/stats.hpp"

namespace gilhost {

bool gil_told_apart(const ThreadStates& states) { return states.gil == "located" || states.gil == "none"; }

std::string gil_unknown_reason(const ThreadStates& ts) {
  if (!gil_told_apart(ts)) return ts.gil.empty() ? "the GIL was not located" : ts.gil;
  if (ts.coverage && *ts.coverage < ThreadStates::kMinCoverage)
    return fmt::format("threads whose GIL waits are known account for {} % of the tree's CPU time{}", std::lround(100 * *ts.coverage),
                       ts.coverage_why.empty() ? "" : ": " + ts.coverage_why);
  if (ts.gil == "none") return "";
  // A thread of a process whose GIL was not located, waiting on a futex: a GIL wait or a lock wait, unknown.
  for (const ThreadRecord& t : ts.threads)
    if (t.python && !t.gil_located && t.times[ThreadState::lock] > 0)
      return fmt::format("the GIL of process {} ({}) was not located, and its threads waited on locks", t.pid, t.name);
  return "";
}

int python_thread_count(const ThreadStates& states) {
  const auto kept = std::count_if(states.threads.begin(), states.threads.end(), [](const ThreadRecord& t) { return t.python; });
  return static_cast<int>(kept) + states.threads_not_kept;
}

namespace {

// The runs a cell's thread figures come from: measured, ok, with thread states in which something lived
// (`failed`: the measured runs that failed instead).
std::vector<const RunRecord*> runs_with_threads(const std::vector<RunRecord>& runs, bool failed = false) {
  std::vector<const RunRecord*> out;
  for (const auto& r : runs) {
    const bool chosen = failed ? !r.warmup && !r.is_ok() : r.measured_ok();
    if (chosen && r.thread_states && r.thread_states->python_totals.lived_ns() > 0) out.push_back(&r);
  }
  return out;
}

// A thread that worked and took its turn at a lock again and again: a join()ing main thread does not work, a
// thread that waits once for the others to finish (subinterpreters, a pool's workers) waits on it once or twice.
bool is_lock_convoy_thread(const ThreadRecord& t) {
  const auto turns = std::count_if(t.timeline.begin(), t.timeline.end(), [](const ThreadSegment& s) { return s.state == ThreadState::lock; });
  return t.times.share(ThreadState::lock) >= kGilWaiterShare && t.times.share(ThreadState::cpu) >= kLockWorkerCpuShare &&
         turns >= kLockConvoyTurns;
}

// The Python threads of each run that meet a test, counted, with their times together: medians over the runs.
class WaiterFigures {
 public:
  template <typename Test>
  void add(const ThreadStates& ts, Test is_waiter) {
    ThreadTimes of_waiters;
    int n = 0;
    for (const ThreadRecord& t : ts.threads)
      if (t.python && is_waiter(t)) {
        ++n;
        of_waiters += t.times;
      }
    counts_.push_back(n);
    times_.push_back(of_waiters);
  }
  int count() const { return static_cast<int>(std::lround(median_of(counts_))); }
  double share(ThreadState s) const {
    std::vector<double> shares;
    for (const auto& t : times_) shares.push_back(t.share(s));
    return median_of(shares);
  }

 private:
  std::vector<double> counts_;
  std::vector<ThreadTimes> times_;
};

// The shares of the runs `with` (not empty).
ThreadShares shares_of(const std::vector<const RunRecord*>& with) {
  ThreadShares out;
  out.runs = static_cast<int>(with.size());
  out.no_gil = true;
  std::vector<double> gil, threads;
  WaiterFigures gil_waiters, lock_waiters;
  for (const RunRecord* r : with) {
    const ThreadStates& ts = *r->thread_states;
    threads.push_back(python_thread_count(ts));
    out.no_gil &= ts.gil == "none";
    if (ts.coverage) out.coverage = std::min(out.coverage.value_or(1.0), *ts.coverage);
    if (const std::string why = gil_unknown_reason(ts); !why.empty()) {
      if (out.gil_unknown_why.empty()) out.gil_unknown_why = why;
      continue;
    }
    ++out.gil_runs;
    gil.push_back(ts.gil_wait_share());
    gil_waiters.add(ts, [](const ThreadRecord& t) { return t.times.share(ThreadState::gil) >= kGilWaiterShare; });
    lock_waiters.add(ts, is_lock_convoy_thread);
  }
  for (std::size_t k = 0; k < kThreadStates.size(); ++k) {
    std::vector<double> shares;
    for (const RunRecord* r : with) shares.push_back(r->thread_states->python_totals.share(kThreadStates[k]));
    out.median[k] = median_of(shares);
  }
  out.python_threads = static_cast<int>(std::lround(median_of(threads)));
  // One run whose share is unknown makes the cell's unknown: a median over the others would hide it.
  if (!gil.empty() && out.gil_unknown_why.empty()) {
    out.gil_wait = median_of(gil);
    out.gil_wait_estimate = median_estimate(gil);
    out.gil_waiters = gil_waiters.count();
    out.gil_waiters_share = gil_waiters.share(ThreadState::gil);
    out.lock_waiters = lock_waiters.count();
    out.lock_waiters_share = lock_waiters.share(ThreadState::lock);
    out.lock_waiters_gil_share = lock_waiters.share(ThreadState::gil);
  }
  return out;
}

}  // namespace

std::optional<ThreadShares> thread_shares(const std::vector<RunRecord>& runs) {
  const std::vector<const RunRecord*> with = runs_with_threads(runs);
  if (with.empty()) return std::nullopt;
  return shares_of(with);
}

std::optional<ThreadShares> failed_thread_shares(const std::vector<RunRecord>& runs) {
  const std::vector<const RunRecord*> with = runs_with_threads(runs, true);
  if (with.empty()) return std::nullopt;
  return shares_of(with);
}

const RunRecord* median_failed_thread_run(const std::vector<RunRecord>& runs) {
  const std::vector<const RunRecord*> with = runs_with_threads(runs, true);
  return with.empty() ? nullptr : with[(with.size() - 1) / 2];
}

std::optional<double> median_gil_wait(const std::vector<RunRecord>& runs) {
  const auto shares = thread_shares(runs);
  return shares ? shares->gil_wait : std::nullopt;
}

std::string percent_text(double share) { return fmt::format("{} %", std::lround(100 * share)); }

std::string points_change_text(double a_share, double b_share) {
  // From the rounded percentages, so that "74 % → 12 %" reads "-62 pts" and not "-61 pts".
  const long change = std::lround(100 * b_share) - std::lround(100 * a_share);
  return change == 0 ? "0 pts" : fmt::format("{:+d} pts", change);
}

std::string gil_wait_text(const std::optional<ThreadShares>& shares) {
  if (!shares) return "-";
  return shares->gil_wait ? percent_text(*shares->gil_wait) : "?";
}

const RunRecord* median_thread_run(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> ranked = runs_with_threads(runs);
  if (ranked.empty()) return nullptr;
  std::stable_sort(ranked.begin(), ranked.end(), [](const RunRecord* a, const RunRecord* b) { return a->wall_ns < b->wall_ns; });
  return ranked[(ranked.size() - 1) / 2];
}

std::vector<StateSpan> thread_spans(const ThreadRecord& t) {
  std::vector<StateSpan> out;
  for (std::size_t k = 0; k < t.timeline.size(); ++k) {
    const std::int64_t start = t.timeline[k].start_ns;
    const std::int64_t end = k + 1 < t.timeline.size() ? t.timeline[k + 1].start_ns : t.end_ns;
    if (end > start) out.push_back({start, end, t.timeline[k].state});
  }
  return out;
}

std::int64_t timeline_end_ns(const ThreadStates& states) {
  std::int64_t end = 0;
  for (const auto& t : states.threads) end = std::max(end, t.end_ns);
  return end;
}

}  // namespace gilhost
