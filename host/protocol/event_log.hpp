#pragma once
// What one run's event channel brought, decoded once as the lines arrive (run/child.cpp): the first event
// of each kind, and a count of the lines that were no event, never silently dropped.
#include <optional>
#include <string>

#include "protocol/events.hpp"

namespace gilhost::protocol {

struct EventLog {
  std::optional<ReadyEvent> ready;
  std::optional<CaseEvent> case_event;
  std::optional<FinalizedEvent> finalized;
  std::optional<RunnerErrorEvent> runner_error;
  int unreadable = 0;            // lines that are no event (not JSON, a torn or foreign write, a bad field)
  std::string first_unreadable;  // the first of them, cut to 120 bytes
  std::string first_unreadable_why;

  // One line without its newline; an empty line is nothing.
  void take_line(const std::string& line);
};

}  // namespace gilhost::protocol
