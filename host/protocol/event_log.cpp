#include "protocol/event_log.hpp"

namespace gilhost::protocol {

namespace {
// The first of each kind counts: a later one cannot replace what the runner reported.
template <typename T>
void keep_first(std::optional<T>& slot, T&& event) {
  if (!slot) slot = std::move(event);
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
  // Protocol order: ready, gil..., case, finalized; an error ends it before the case.
  const auto kind = event.index();
  const int next = kind == 0 ? (stage_ == 0 ? 1 : -1)
                   : kind == 1 ? (stage_ == 1 ? 1 : -1)
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

void EventLog::take_line(const std::string& line) {
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
      [this](auto&& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ReadyEvent>) keep_first(ready, std::move(e));
        if constexpr (std::is_same_v<T, GilEvent>) keep_first_of(gils, std::move(e));
        if constexpr (std::is_same_v<T, CaseEvent>) keep_first(case_event, std::move(e));
        if constexpr (std::is_same_v<T, FinalizedEvent>) keep_first(finalized, std::move(e));
        if constexpr (std::is_same_v<T, RunnerErrorEvent>) keep_first(runner_error, std::move(e));
      },
      std::move(*d.event));
}

}  // namespace gilhost::protocol
