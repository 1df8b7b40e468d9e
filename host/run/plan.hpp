#pragma once
// The matrix of runs (cases x interpreters x rounds) and how each becomes a child process.
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.hpp"
#include "discover/interpreter.hpp"
#include "discover/selector.hpp"
#include "run/child.hpp"
#include "runner/runspec.hpp"

namespace gilhost {

struct PlannedRun {
  const Case* c = nullptr;
  const Interpreter* interp = nullptr;
  int round = 0;       // 0-based over warm-up and measured runs
  bool warmup = false;
  int repeat = 0;      // index among measured runs (pairs runs for ratios)
};

struct Plan {
  std::vector<PlannedRun> runs;
  std::vector<Skipped> skipped;  // case x interpreter pairs that cannot run, with the reason
};

// Why `c` cannot run on `interp`, or nullopt.
std::optional<std::string> incompatibility(const Case& c, const Interpreter& interp);

// Why running every case of `ex` on `builds` builds is past limits::kMaxPlannedRuns, or "" when it is not:
// asked before the plan is made.
std::string plan_too_large(const Experiment& ex, std::size_t builds);

// Rounds outermost, so every case and interpreter sees the same drift of the machine over time and
// ratios taken pair by pair within a round compare like with like.
Plan plan_runs(const Experiment& ex, const std::vector<Interpreter>& interps);

RunnerSpec runner_spec(const Case& c, const Interpreter& interp);
// The child's command line: gilhost-runner (embed) or the interpreter itself with `-c` (exec). Either is
// told the watch pipe's number (when watch_fd >= 0), to keep it out of reach of the case, and the number of
// the pipe that holds the run's token (token_fd >= 0; without one, the token itself, for tests only).
std::vector<std::string> child_argv(const RunnerSpec& spec, const Interpreter& interp, const std::string& runner_path,
                                    int event_fd, int watch_fd = -1, int token_fd = -1);

}  // namespace gilhost
