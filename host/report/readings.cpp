#include "report/readings.hpp"

#include <fmt/format.h>

#include <cmath>

namespace gilhost {

const char* reading_rule_name(ReadingRule rule) {
  switch (rule) {
    case ReadingRule::gil_serialised: return "gil_serialised";
    case ReadingRule::lock_convoy: return "lock_convoy";
    case ReadingRule::io_bound: return "io_bound";
    case ReadingRule::parallel: return "parallel";
    case ReadingRule::waited_for_core: return "waited_for_core";
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

}  // namespace

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
      if (!cell || !cell->threads) continue;
      for (Reading r : cell_readings(*cell->threads, cell->cpu_per_wall.median)) {
        r.case_name = c;
        r.build = i;
        out.push_back(std::move(r));
      }
    }
  return out;
}

}  // namespace gilhost
