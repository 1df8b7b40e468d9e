#pragma once
// What one run's event channel brought, decoded once as the lines arrive (run/child.cpp): the first event
// of each kind, and a count of the lines that were no event, never silently dropped.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/codec.hpp"
#include "protocol/events.hpp"

namespace gilhost::protocol {

struct EventLog {
  std::optional<ReadyEvent> ready;
  std::vector<GilEvent> gils;  // one per interpreter, the first for each
  std::optional<CaseEvent> case_event;
  std::optional<FinalizedEvent> finalized;
  std::optional<RunnerErrorEvent> runner_error;
  // CLOCK_MONOTONIC as gilhost read each kept event off the pipe (0: not known): the host's own bracket
  // of what the runner says, which the scheduler checks the runner's stamps against.
  std::int64_t ready_at_ns = 0, case_at_ns = 0, finalized_at_ns = 0;
  // The first GIL event's arrival, before the case: the runner locates the GIL between 'ready' and it,
  // untimed, so the case's start is checked against this moment when there is one.
  std::int64_t gil_at_ns = 0;
  int unreadable = 0;            // lines that are no event (not JSON, a torn or foreign write, a bad field)
  std::string first_unreadable;  // the first of them, cut to 120 bytes
  std::string first_unreadable_why;
  // Events that were not the runner's, refused: from another process (a fork that returned from the case),
  // without the run's token (the script wrote to the channel), or out of protocol order (ready, gil, case,
  // finalized; an error before the case).
  int foreign = 0;
  std::string first_foreign;  // why the first was refused: "a 'case' event from pid 12, not the runner's (10)"

  // From now on, only events with `token` from process `pid` (the runner gilhost started), in protocol
  // order, are kept. Without it (tests of the decoding alone) every readable event is, the first of a kind.
  void expect(std::string token, std::int64_t pid);
  // One line without its newline, read at `at_ns` (CLOCK_MONOTONIC; 0: not known); an empty line is nothing.
  void take_line(const std::string& line, std::int64_t at_ns = 0);
  // A line of `bytes` over kMaxEventLine, which was not kept: unreadable.
  void take_overlong(std::uint64_t bytes);

 private:
  bool checking_ = false;
  std::string token_;
  std::int64_t pid_ = 0;
  int stage_ = 0;  // how far the runner got: 0 nothing yet, 1 ready, 2 case, 3 finalized (or an error)
  // Why `event` from `from` is not the runner's next one, or "" when it is (and the stage moves on).
  std::string refusal(const Event& event, const Envelope& from);
};

// Why what the runner's events say contradicts gilhost's own clocks, or "" when nothing does. The script
// runs inside the runner and can read its token from memory, so a case event is not proof; but its stamps
// are CLOCK_MONOTONIC, as ours are, and must fit inside what we saw: the case inside the process's life
// (spawned_at to reaped_at) and before its event arrived, its wall its own end minus start, the runner's
// end after the case; and a runner that reported the case ends by reporting its end (`finalized`) unless
// it was killed (`exited`: the process exited rather than died of a signal). Exec mode has no finalized
// event, so the last check is the runner's modes' only.
std::string clock_contradiction(const EventLog& log, std::int64_t spawned_at_ns, std::int64_t reaped_at_ns, bool exited);

}  // namespace gilhost::protocol
