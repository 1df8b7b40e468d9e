#pragma once
// Runs the plan one child at a time and turns each child's outcome into a run record.
#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/experiment.hpp"
#include "discover/selector.hpp"
#include "run/child.hpp"
#include "run/plan.hpp"
#include "results/record.hpp"
#include "results/results_file.hpp"

namespace gilhost {

struct Progress {
  int done = 0;
  int total = 0;
  const PlannedRun* run = nullptr;
  const RunRecord* record = nullptr;  // the run just finished
  double elapsed_s = 0;      // since the session began
  double run_elapsed_s = 0;  // since this run began (on_tick)
  double timeout_s = 0;      // this run's
  double precision = 0;      // the precision target (0: none): `total` grows while cells are short of it
  int min_rounds = 0;        // the measured rounds every cell gets (`repeat`)
  // What has run, for the ETA (run/progress): each cell's finished runs and the seconds they took, and the
  // end of the runs planned after this one ([run + 1, rest_end) of the same vector; nullptr: unknown).
  std::map<std::pair<const Case*, const Interpreter*>, std::pair<int, double>> observed;
  const PlannedRun* rest_end = nullptr;
};

struct SchedulerOptions {
  std::string runner_path;
  std::string bootstrap_cache_dir;  // the runner's compiled bootstrap; empty: compiled every run
  double cell_budget_s = 0;      // stop repeating a cell once its runs took this long (0: no budget)
  bool repeat_failures = false;  // repeat a cell that failed in every run of its first round
  std::string stderr_dir;        // where failed runs' stderr is written ("": not written)
  int event_fd = 3;
  bool exact_states = false;  // thread states from the kernel's events where allowed (measure/exact_recorder)
  bool sampled_beside_exact = false;  // and sampled too, on the same runs (--thread-states both)
  const std::atomic<bool>* interrupt = nullptr;
  std::function<void(const Progress&)> on_start;
  std::function<void(const Progress&)> on_tick;  // about once a second while a run goes on
  std::function<void(const Progress&)> on_finish;
};

// The record of one run (also used by tests on hand-made ChildResults).
RunRecord make_run_record(const Experiment& ex, const PlannedRun& run, const ChildResult& child);

struct SessionResult {
  std::vector<SkipRecord> skips;  // builds and cases that did not run, written first
  std::vector<RunRecord> runs;    // in the order they ran
  bool interrupted = false;
};

SessionResult run_session(const Experiment& ex, const Selection& selection, const Plan& plan,
                          const SchedulerOptions& options, ResultsWriter& out);

// The environment every child gets: ours, plus the experiment's, plus PYTHON_GIL=1 for a build selected
// with `+gil` (that wins: it is what the column is).
std::vector<std::string> child_environment(const Experiment& ex, bool force_gil);

}  // namespace gilhost
