#include "results/thread_states.hpp"

#include <algorithm>

namespace gilhost {

const char* thread_state_name(ThreadState state) {
  switch (state) {
    case ThreadState::cpu: return "cpu";
    case ThreadState::runqueue: return "runqueue";
    case ThreadState::gil: return "gil";
    case ThreadState::lock: return "lock";
    case ThreadState::io: return "io";
    case ThreadState::sleep: return "sleep";
    case ThreadState::other: return "other";
  }
  return "other";
}

const char* thread_state_label(ThreadState state) {
  switch (state) {
    case ThreadState::cpu: return "on CPU";
    case ThreadState::runqueue: return "waiting for a core";
    case ThreadState::gil: return "waiting for the GIL";
    case ThreadState::lock: return "waiting on a lock";
    case ThreadState::io: return "waiting for I/O";
    case ThreadState::sleep: return "sleeping";
    case ThreadState::other: return "other wait";
  }
  return "other wait";
}

std::optional<ThreadState> parse_thread_state(const std::string& name) {
  for (ThreadState s : kThreadStates)
    if (name == thread_state_name(s)) return s;
  return std::nullopt;
}

std::int64_t ThreadTimes::lived_ns() const {
  std::int64_t sum = 0;
  for (std::int64_t v : ns)
    if (__builtin_add_overflow(sum, v, &sum)) return -1;  // impossible figures: no lived time
  return sum;
}

double ThreadTimes::share(ThreadState s) const {
  const std::int64_t lived = lived_ns();
  if (lived <= 0) return 0.0;
  // Within [0, 1] whatever the figures: results/validate leaves impossible ones out as a file is read,
  // and a share above 100 % is never shown even so.
  return std::clamp(static_cast<double>((*this)[s]) / static_cast<double>(lived), 0.0, 1.0);
}

ThreadTimes& ThreadTimes::operator+=(const ThreadTimes& o) {
  for (std::size_t i = 0; i < ns.size(); ++i) ns[i] += o.ns[i];
  return *this;
}

void name_python_threads(ThreadStates& states, const std::vector<std::pair<std::int64_t, std::string>>& names,
                         std::optional<std::int64_t> main_tid) {
  for (auto& t : states.threads) {
    if (!t.python) continue;
    for (const auto& [tid, name] : names)
      if (tid == t.tid && !name.empty()) t.name = name;
    t.main = main_tid && *main_tid == t.tid;
  }
}

}  // namespace gilhost
