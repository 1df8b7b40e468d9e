#include "protocol/event_log.hpp"

#include "protocol/codec.hpp"

namespace gilhost::protocol {

namespace {
// The first of each kind counts: a later one cannot replace what the runner reported.
template <typename T>
void keep_first(std::optional<T>& slot, T&& event) {
  if (!slot) slot = std::move(event);
}
}  // namespace

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
  std::visit(
      [this](auto&& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ReadyEvent>) keep_first(ready, std::move(e));
        if constexpr (std::is_same_v<T, CaseEvent>) keep_first(case_event, std::move(e));
        if constexpr (std::is_same_v<T, FinalizedEvent>) keep_first(finalized, std::move(e));
        if constexpr (std::is_same_v<T, RunnerErrorEvent>) keep_first(runner_error, std::move(e));
      },
      std::move(*d.event));
}

}  // namespace gilhost::protocol
