#include "report/readings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/failures.hpp"
#include "report/fit.hpp"
#include "util/strings.hpp"

namespace gilhost {

const char* reading_rule_name(ReadingRule rule) {
  switch (rule) {
    case ReadingRule::gil_serialised: return "gil_serialised";
    case ReadingRule::lock_convoy: return "lock_convoy";
    case ReadingRule::io_bound: return "io_bound";
    case ReadingRule::parallel: return "parallel";
    case ReadingRule::waited_for_core: return "waited_for_core";
    case ReadingRule::blocked: return "blocked";
  }
  return "gil_serialised";
}

namespace {

// "under 3 %": the next whole percentage above a small share.
std::string under_text(double share) { return fmt::format("under {:.0f} %", std::floor(100 * share) + 1); }

std::string parallel_text(const ThreadShares& s) {
  const std::string cpu = "threads ran in parallel: " + percent_text(s.share(ThreadState::cpu)) + " on CPU, ";
  // "under": the highest of the interval where there is one, so the words hold for every run's share.
  const double high = s.gil_wait_estimate && s.gil_wait_estimate->interval ? s.gil_wait_estimate->interval->hi : *s.gil_wait;
  return cpu + (s.no_gil ? "no GIL" : "GIL waits " + under_text(high));
}

// The state a thread waited in at least kBlocked of its life, if one.
std::optional<ThreadState> blocked_in(const ThreadRecord& t) {
  // Not the GIL: threads that wait for it are the GIL readings' (they say how much, of which threads).
  for (ThreadState s : {ThreadState::lock, ThreadState::io, ThreadState::sleep})
    if (t.times.share(s) >= reading::kBlocked) return s;
  return std::nullopt;
}

// "on a lock", "on I/O", "asleep"; where the GIL was not told apart a lock may be it.
std::string blocked_words(ThreadState s, bool gil_told) {
  switch (s) {
    case ThreadState::lock: return gil_told ? "on a lock" : "on a lock or the GIL (not told apart)";
    case ThreadState::io: return "on I/O";
    default: return "asleep";
  }
}

// How the run ended, after "blocked on a lock": until its timeout, until it was killed.
std::string ending_words(const RunRecord& run) {
  if (run.status == RunStatus::timeout) return " until the timeout";
  if (run.status == RunStatus::crashed) return " until it was killed";
  return "";
}

// A thread's name as a reading says it: a script may name a thread anything, so at most 40 columns.
std::string thread_label(const ThreadRecord& t) {
  const std::string name = t.name.empty() ? "thread " + std::to_string(t.tid) : truncate_display(t.name, 40);
  return name + (t.main ? " (main)" : "");
}

struct BlockedThread {
  const ThreadRecord* thread;
  ThreadState state;
};

// Every Python thread blocked, in the same state.
bool blocked_alike(const std::vector<BlockedThread>& blocked, std::size_t python) {
  return blocked.size() == python &&
         std::all_of(blocked.begin(), blocked.end(), [&](const BlockedThread& b) { return b.state == blocked.front().state; });
}

// "all 3 threads blocked on a lock", or "2 threads mostly blocked: a on a lock 100 %, b asleep 99 %".
std::string blocked_text(const std::vector<BlockedThread>& blocked, std::size_t python, bool gil_told, const RunRecord& run) {
  const bool all_alike = blocked_alike(blocked, python);
  const std::string words = blocked_words(blocked.front().state, gil_told);
  if (all_alike)
    return (python == 1 ? "the one thread was blocked " + words : fmt::format("all {} threads blocked {}", python, words)) +
           ending_words(run);
  std::vector<std::string> named;
  for (const auto& b : blocked)
    if (named.size() < reading::kBlockedNamed)
      named.push_back(thread_label(*b.thread) + " " + blocked_words(b.state, gil_told) + " " +
                      percent_text(b.thread->times.share(b.state)));
  const std::size_t more = blocked.size() - named.size();
  return fmt::format("{} of {} threads mostly blocked: {}{}{}", blocked.size(), python, join(named, ", "),
                     more ? fmt::format(" and {} more", more) : "", ending_words(run));
}

// The main thread carries the interpreter's start-up (longer on a busy machine): where every other thread
// blocked alike and it waited in the same state at least kMainBlocked of its life, it is one of them.
void add_main_thread(const ThreadStates& ts, std::vector<BlockedThread>& blocked, std::size_t python) {
  if (blocked.size() + 1 != python || !blocked_alike(blocked, blocked.size())) return;
  const ThreadState state = blocked.front().state;
  for (const ThreadRecord& t : ts.threads)
    if (t.python && t.main && t.times.lived_ns() > 0 && !blocked_in(t) && t.times.share(state) >= reading::kMainBlocked) {
      blocked.insert(blocked.begin(), {&t, state});
      return;
    }
}

}  // namespace

std::optional<Reading> blocked_reading(const RunRecord& run) {
  if (!run.thread_states) return std::nullopt;
  const ThreadStates& ts = *run.thread_states;
  std::size_t python = 0;
  std::vector<BlockedThread> blocked;
  for (const ThreadRecord& t : ts.threads) {
    if (!t.python || t.times.lived_ns() <= 0) continue;
    ++python;
    const std::optional<ThreadState> state = blocked_in(t);
    // A main thread on a lock beside threads that did not all block is join()ing them: nothing to read.
    if (state) blocked.push_back({&t, *state});
  }
  if (blocked.empty() || (run.is_ok() && python < static_cast<std::size_t>(reading::kMinThreads))) return std::nullopt;
  add_main_thread(ts, blocked, python);
  if (blocked.size() < python)
    blocked.erase(std::remove_if(blocked.begin(), blocked.end(),
                                 [](const BlockedThread& b) { return b.thread->main && b.state == ThreadState::lock; }),
                  blocked.end());
  if (blocked.empty()) return std::nullopt;
  // An ok run whose threads all waited on a lock or on I/O: the lock convoy and I/O readings say so already.
  const bool told = gil_told_apart(ts);
  const ThreadState state = blocked.front().state;
  if (run.is_ok() && blocked_alike(blocked, python) && (state == ThreadState::io || (state == ThreadState::lock && told)))
    return std::nullopt;
  Reading r;
  r.rule = ReadingRule::blocked;
  r.n = 1;
  r.text = blocked_text(blocked, python, told, run) + (run.is_ok() ? " (the median run)" : " (a failed run)");
  return r;
}

std::vector<Reading> cell_readings(const ThreadShares& s, double cpu_per_wall) {
  std::vector<Reading> out;
  if (s.python_threads < reading::kMinThreads) return out;
  const std::optional<Interval> gil = s.gil_wait_estimate ? s.gil_wait_estimate->interval : std::nullopt;
  auto add = [&](ReadingRule rule, std::string text) {
    const bool on_gil = (rule == ReadingRule::gil_serialised || rule == ReadingRule::parallel) && !s.no_gil;
    Reading r{"", "", rule, std::move(text), static_cast<std::size_t>(s.runs), on_gil ? gil : std::nullopt};
    r.text += r.interval ? fmt::format(" (n={}; GIL wait {:.0f}–{:.0f} %)", r.n, 100 * r.interval->lo, 100 * r.interval->hi)
                         : fmt::format(" (n={})", r.n);
    out.push_back(std::move(r));
  };
  // GIL and lock shares mean what they say only where GIL waits were told apart (else they count as lock).
  const bool told = s.gil_told_apart() && s.gil_wait.has_value();
  // A GIL reading holds only where its whole interval is on its side of the threshold.
  const bool serialised = told && *s.gil_wait >= reading::kGilSerialised && (!gil || gil->lo >= reading::kGilSerialised);
  const bool parallel_gil = told && *s.gil_wait < reading::kParallelGilBelow && (!gil || gil->hi < reading::kParallelGilBelow);
  if (serialised)
    add(ReadingRule::gil_serialised,
        s.gil_waiters > 0
            ? fmt::format("{} threads waited for the GIL {} of their time ({} of all the Python threads' time): "
                          "the GIL serialised them",
                          s.gil_waiters, percent_text(s.gil_waiters_share), percent_text(*s.gil_wait))
            : fmt::format("the Python threads waited for the GIL {} of their time: the GIL serialised them",
                          percent_text(*s.gil_wait)));
  if (told && s.lock_waiters >= reading::kMinThreads && s.lock_waiters_share >= reading::kLockConvoyWorkers &&
      s.lock_waiters_share > s.lock_waiters_gil_share)
    // The threads that worked handed a lock to one another (3.9's convoy; a pool's workers at their queue).
    add(ReadingRule::lock_convoy,
        fmt::format("{} threads took turns at a lock (or a queue), waiting on it {} of their time (for the GIL {})", s.lock_waiters,
                    percent_text(s.lock_waiters_share), percent_text(s.lock_waiters_gil_share)));
  else if (told && s.share(ThreadState::lock) >= reading::kLockConvoy)
    add(ReadingRule::lock_convoy,
        "lock convoy: the threads spent " + percent_text(s.share(ThreadState::lock)) + " of their time waiting on a lock");
  if (s.share(ThreadState::io) >= reading::kIoBound)
    add(ReadingRule::io_bound, "threads spent " + percent_text(s.share(ThreadState::io)) + " waiting for I/O");
  if (parallel_gil && cpu_per_wall > reading::kParallelism)
    add(ReadingRule::parallel, parallel_text(s));
  if (s.share(ThreadState::runqueue) >= reading::kWaitedForCore)
    add(ReadingRule::waited_for_core, "threads waited for a core " + percent_text(s.share(ThreadState::runqueue)) +
                                          " of their time: more runnable threads than cores");
  return out;
}

std::vector<Reading> build_readings(const Summary& sum) {
  std::vector<Reading> out;
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters) {
      const Cell* cell = sum.cell(c, i);
      if (!cell) continue;
      std::vector<Reading> of_cell;
      if (cell->threads) of_cell = cell_readings(*cell->threads, cell->cpu_per_wall.median);
      // The median ok run's threads, or where every run failed, a failed run's: where they were stuck.
      const bool started = !std::all_of(cell->runs.begin(), cell->runs.end(), case_never_started);
      const RunRecord* run = cell->threads ? median_thread_run(cell->runs) : started ? median_failed_thread_run(cell->runs) : nullptr;
      if (run)
        if (auto blocked = blocked_reading(*run)) of_cell.push_back(std::move(*blocked));
      for (Reading& r : of_cell) {
        r.case_name = c;
        r.build = i;
        out.push_back(std::move(r));
      }
    }
  return out;
}

}  // namespace gilhost
