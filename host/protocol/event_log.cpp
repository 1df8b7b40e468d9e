#include "protocol/event_log.hpp"

#include <algorithm>
#include <cstdio>

namespace gilhost::protocol {

namespace {
// The first of each kind counts: a later one cannot replace what the runner reported.
template <typename T>
void keep_first(std::optional<T>& slot, T&& event) {
  if (!slot) slot = std::move(event);
}
// ... and when it arrived.
template <typename T>
void keep_first(std::optional<T>& slot, T&& event, std::int64_t& slot_at, std::int64_t at) {
  if (slot) return;
  slot = std::move(event);
  slot_at = at;
}
// The first for each interpreter; but a GIL located after the case (turned on during it) replaces a report
// that it had none.
void keep_first_of(std::vector<GilEvent>& list, GilEvent&& event) {
  for (auto& known : list) {
    if (known.interpreter != event.interpreter) continue;
    if (event.after_case && !known.has_gil && event.has_gil && event.futex_hi > event.futex_lo) known = std::move(event);
    return;
  }
  list.push_back(std::move(event));
}
}  // namespace

void EventLog::expect(std::string token, std::int64_t pid) {
  checking_ = true;
  token_ = std::move(token);
  pid_ = pid;
}

namespace {
const char* name_of(const Event& event) {
  static const char* const names[] = {"ready", "gil", "case", "finalized", "error"};
  static_assert(std::variant_size_v<Event> == 5, "a name for each event");
  return names[event.index()];
}
}  // namespace

std::string EventLog::refusal(const Event& event, const Envelope& from) {
  const std::string what = std::string("a '") + name_of(event) + "' event";
  if (from.token != token_) return what + " without this run's token";
  if (from.pid != pid_) return what + " from pid " + std::to_string(from.pid) + ", not the runner's (" + std::to_string(pid_) + ")";
  // Protocol order: ready, gil..., case, gil after the case (a GIL turned on during it, or the script's own
  // interpreters), finalized; an error ends it before the case.
  const auto kind = event.index();
  const bool gil_after_case = kind == 1 && std::get<GilEvent>(event).after_case;
  const int next = kind == 0 ? (stage_ == 0 ? 1 : -1)
                   : kind == 1 ? (stage_ == 1 && !gil_after_case ? 1 : stage_ == 2 && gil_after_case ? 2 : -1)
                   : kind == 2 ? (stage_ <= 1 ? 2 : -1)
                   : kind == 3 ? (stage_ == 2 ? 3 : -1)
                               : (stage_ <= 1 ? 3 : -1);
  if (next < 0) {
    static const char* const after[] = {"before 'ready'", "before the case", "after the case", "after the end"};
    return what + " out of protocol order (" + after[stage_] + ")";
  }
  stage_ = next;
  return "";
}

void EventLog::take_overlong(std::uint64_t bytes) {
  if (unreadable++ == 0) {
    first_unreadable = "(" + std::to_string(bytes) + " bytes without a newline)";
    first_unreadable_why = "a line over the " + std::to_string(kMaxEventLine >> 20) +
                           " MiB bound on one event, dropped unread";
  }
}

void EventLog::take_line(const std::string& line, std::int64_t at_ns) {
  if (line.empty()) return;
  Decoded d = decode(line);
  if (!d.event) {
    if (unreadable++ == 0) {
      first_unreadable = line.substr(0, 120);
      first_unreadable_why = d.error;
    }
    return;
  }
  if (checking_) {
    if (std::string why = refusal(*d.event, d.from); !why.empty()) {
      if (foreign++ == 0) first_foreign = std::move(why);
      return;
    }
  }
  std::visit(
      [this, at_ns](auto&& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ReadyEvent>) keep_first(ready, std::move(e), ready_at_ns, at_ns);
        if constexpr (std::is_same_v<T, GilEvent>) {
          if (gil_at_ns == 0 && !case_event) gil_at_ns = at_ns;
          keep_first_of(gils, std::move(e));
        }
        if constexpr (std::is_same_v<T, CaseEvent>) keep_first(case_event, std::move(e), case_at_ns, at_ns);
        if constexpr (std::is_same_v<T, FinalizedEvent>) keep_first(finalized, std::move(e), finalized_at_ns, at_ns);
        if constexpr (std::is_same_v<T, RunnerErrorEvent>) keep_first(runner_error, std::move(e));
      },
      std::move(*d.event));
}

namespace {
std::string secs(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f s", static_cast<double>(ns) / 1e9);
  return buf;
}

// The case event's stamps against themselves and against the process's life and the event's arrival.
std::string case_contradiction(const CaseEvent& cs, std::int64_t case_at, std::int64_t spawned_at, std::int64_t reaped_at) {
  const std::int64_t lived = reaped_at - spawned_at;
  if (cs.wall_ns < 0 || cs.wall_ns != cs.end_ns - cs.start_ns)
    return "its wall time (" + secs(cs.wall_ns) + ") is not its own end minus its start (" +
           secs(cs.end_ns - cs.start_ns) + ")";
  if (cs.wall_ns > lived)
    return "it says the case took " + secs(cs.wall_ns) + ", longer than the whole process lived (" + secs(lived) +
           " by gilhost's clock)";
  if (cs.start_ns < spawned_at || cs.end_ns > reaped_at || (case_at > 0 && cs.end_ns > case_at))
    return "its start and end (CLOCK_MONOTONIC " + std::to_string(cs.start_ns) + " to " + std::to_string(cs.end_ns) +
           ") are not inside gilhost's own bracket of the case (the process spawned at " + std::to_string(spawned_at) +
           ", the event read at " + std::to_string(case_at) + ")";
  return "";
}
// Between sending 'ready' and starting the case the runner locates the GIL (untimed: from 'ready' to the
// GIL event, which can take seconds on a starved machine), then bootstraps and prepares, and it times both.
// A case that started well after that (over 1 s, and more than the two it claims) has a case event that
// claims less than the case took: it was forged later on. Each event arrived a moment after it was sent,
// which only shortens the span. Embed mode only: subinterpreters are created in between, untimed.
std::string unaccounted(const EventLog& log, const CaseEvent& cs) {
  const std::int64_t from = std::max(log.ready_at_ns, log.gil_at_ns);
  if (cs.mode != RunMode::embed || log.ready_at_ns <= 0 || cs.start_ns <= from) return "";
  const std::int64_t claimed = cs.prepare_ns + cs.bootstrap_ns.value_or(0);
  const std::int64_t gap = cs.start_ns - from - claimed;
  if (gap <= 1000000000 || gap <= claimed) return "";
  return "the case event contradicts gilhost's own clock: it says the case started " +
         secs(cs.start_ns - from) + " after the runner's " + (from == log.ready_at_ns ? "'ready'" : "GIL event") +
         " arrived, of which the bootstrap and "
         "the preparation claim " + secs(claimed) + "; a forged event?";
}
}  // namespace

std::string clock_contradiction(const EventLog& log, std::int64_t spawned_at, std::int64_t reaped_at, bool exited) {
  if (!log.case_event || spawned_at <= 0 || reaped_at <= 0) return "";
  const CaseEvent& cs = *log.case_event;
  if (std::string why = case_contradiction(cs, log.case_at_ns, spawned_at, reaped_at); !why.empty())
    return "the case event contradicts gilhost's own clock: " + why + "; a forged event?";
  if (std::string why = unaccounted(log, cs); !why.empty()) return why;
  if (log.finalized) {
    const FinalizedEvent& fin = *log.finalized;
    const std::int64_t finalize_start = fin.at_ns - fin.finalize_ns;
    if (fin.at_ns > 0 && (finalize_start < cs.end_ns || fin.at_ns > reaped_at ||
                          (log.finalized_at_ns > 0 && fin.at_ns > log.finalized_at_ns)))
      return "the finalized event contradicts gilhost's own clock: Python's finalisation (CLOCK_MONOTONIC " +
             std::to_string(finalize_start) + " to " + std::to_string(fin.at_ns) +
             ") is not between the case's end and the process's reaping; a forged event?";
  } else if (exited && cs.mode != RunMode::exec) {
    return "the case was reported, but the runner never reported its end (no 'finalized' event) though the process "
           "exited: something ended it outside the runner (os._exit after a forged case event?)";
  }
  return "";
}

}  // namespace gilhost::protocol
