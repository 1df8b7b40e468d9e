#pragma once
// The sessions a results file holds (-o appends one after another): listed, so a report says when it
// pools several, and one picked (--session N).
#include <string>
#include <vector>

#include "report/merge.hpp"

namespace gilhost {

struct SessionSummary {
  int number = 0;          // 1-based, in file order
  std::string started;     // local time, "2026-12-04 06:15:41"
  std::string experiment;  // its name
  std::string source;      // the file it was read from
};

std::vector<SessionSummary> list_sessions(const MergedResults& merged);

// "FILE holds 2 sessions, pooled here: 1 started ... (cpu_bound), 2 ...; pick one with --session N".
std::string several_sessions_note(const std::vector<SessionSummary>& sessions);

// Only session `n` (1 the first, -1 the last; 0: all of them, unchanged). Throws std::invalid_argument
// naming the sessions there are when there is no such session.
MergedResults keep_session(MergedResults merged, int n);

}  // namespace gilhost
