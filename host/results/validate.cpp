#include "results/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace gilhost {

namespace {

// Far above any run (31 years), and 7 of them still sum inside int64.
constexpr std::int64_t kMaxStateNs = std::int64_t{1} << 60;
// Slack for a thread's times against the host's clock: one sampling tick each side, and a second.
constexpr std::int64_t kSlackNs = 1000000000;

std::string impossible_times(const ThreadTimes& t, const std::string& whose) {
  for (ThreadState s : kThreadStates)
    if (t[s] < 0 || t[s] > kMaxStateNs)
      return fmt::format("{} time {} is {} ns", whose, thread_state_name(s), t[s]);
  return "";
}

}  // namespace

std::string impossible_thread_states(const RunRecord& r) {
  if (!r.thread_states) return "";
  return impossible_thread_states(*r.thread_states, r.parent_wall_ns);
}

std::string impossible_thread_states(const ThreadStates& ts, std::int64_t parent_wall_ns) {
  if (std::string why = impossible_times(ts.python_totals, "the Python threads'"); !why.empty()) return why;
  const std::int64_t tick = std::int64_t{std::max(ts.interval_ms, 0)} * 1000000;
  // The run's lived time as the host's own clock saw it (0 in a record that lacks it: no bound).
  const std::int64_t run_ns = parent_wall_ns > 0 ? parent_wall_ns + 2 * tick + kSlackNs : 0;
  for (const auto& t : ts.threads) {
    const std::string whose = fmt::format("thread {}'s", t.tid);
    if (std::string why = impossible_times(t.times, whose); !why.empty()) return why;
    if (run_ns > 0 && t.times.lived_ns() > run_ns)
      return fmt::format("{} states add up to {:.3f} s in a run of {:.3f} s", whose, static_cast<double>(t.times.lived_ns()) / 1e9,
                         static_cast<double>(parent_wall_ns) / 1e9);
  }
  const double threads = static_cast<double>(ts.threads.size()) + std::max(ts.threads_not_kept, 0);
  if (run_ns > 0 && static_cast<double>(ts.python_totals.lived_ns()) > threads * static_cast<double>(run_ns))
    return fmt::format("the Python threads' states add up to {:.3f} s: more than {} threads can live in a run of {:.3f} s",
                       static_cast<double>(ts.python_totals.lived_ns()) / 1e9, threads, static_cast<double>(parent_wall_ns) / 1e9);
  if (ts.coverage && !(*ts.coverage >= 0)) return fmt::format("coverage is {}", *ts.coverage);
  return "";
}

std::string impossible_run_figures(const RunRecord& r) {
  if (!(r.cpu_per_wall >= 0)) return fmt::format("cpu_per_wall is {}", r.cpu_per_wall);
  if (r.load_avg && !(*r.load_avg >= 0)) return fmt::format("load_avg is {}", *r.load_avg);
  for (const auto* v : {&r.exec_ns, &r.load_ns, &r.exit_ns})
    if (*v && **v < 0) return fmt::format("a phase of the run lasted {} ns", **v);
  return "";
}

}  // namespace gilhost
