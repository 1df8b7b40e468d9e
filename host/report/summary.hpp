#pragma once
// Run records -> one cell per case x interpreter: statistics, result, expectation verdicts.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/evidence.hpp"
#include "report/interval.hpp"
#include "report/stats.hpp"
#include "report/threads.hpp"
#include "results/record.hpp"

namespace gilhost {

struct Cell {
  std::string case_name;
  std::string interpreter;
  std::vector<RunRecord> runs;  // measured (not warm-up), in round order
  Stats wall_s;
  // Every figure a report states of the cell, with its n and interval (report/interval): the median wall
  // time, CPU / wall, and the ratio to the baseline case (Hodges-Lehmann, paired by round).
  Estimate wall;
  Estimate cpu_wall;
  std::optional<Estimate> ratio_estimate;
  bool baseline_case = false;  // the experiment's baseline case itself: its ratio is 1 by definition
  Stability stability;        // spread, outliers, two modes (report/evidence)
  CellPrecision precision;    // how near the wall median came to the experiment's target
  Stats cpu_per_wall;
  Stats init_s;  // interpreter start-up in the runner
  double peak_tree_rss_bytes = 0;
  double max_rss_bytes = 0;  // kernel high-water mark of the largest process (wait4)
  int peak_threads = 0;
  int peak_processes = 0;
  Stats voluntary_switches, involuntary_switches;
  int runs_failed_expectations = 0;
  std::vector<std::string> failures;  // "result == 4000000: got 3999999"
  std::string statuses;               // "ok", or "ok x2, error x1"
  std::string result_text;            // what the table shows
  std::optional<Stats> ratio;         // against the baseline case, paired by paired_wall_ratios
  std::optional<bool> gil_enabled;    // false when any run ended with the GIL off
  bool gil_forced = false;            // a free-threaded build run with PYTHON_GIL=1 (`+gil`)
  std::vector<std::string> gil_reenabled_by;  // modules whose import turned the GIL back on, any run
  bool free_threaded = false;
  std::string mode;
  int leftover_processes = 0;   // processes its runs left alive, which gilhost killed (all runs)
  int runs_with_leftovers = 0;
  std::optional<ThreadShares> threads;  // where the Python threads' time went; nullopt: no run has thread states

  bool expectations_ok() const { return runs_failed_expectations == 0; }
};

struct Summary {
  std::string experiment;
  std::string baseline;
  std::vector<std::string> cases;         // first-seen order
  std::vector<std::string> interpreters;  // first-seen order
  std::map<std::pair<std::string, std::string>, Cell> cells;
  std::vector<SkipRecord> skips;
  int expectation_failures = 0;  // cells

  const Cell* cell(const std::string& c, const std::string& i) const;
};

// `show` maps a case name to the key of its dict result to display (from the experiment file).
// `experiment` gives the precision target (ExperimentInfo.precision) each cell is held to.
Summary summarize(const std::vector<RunRecord>& runs, const std::vector<SkipRecord>& skips, const std::string& baseline,
                  const std::map<std::string, std::string>& show = {}, const ExperimentInfo& experiment = {});

// "n=5": a cell's run count as the tables show it.
std::string runs_text(std::size_t n);
// A cell's wall time as the grid shows it: "312 ms (300–330) n=5", "312 ms n=1", "-", "did not run" (every
// run failed before its case started: report/failures' case_never_started); the mark "!" after
// it where the cell is unstable (its why is among the notes).
std::string wall_cell_text(const Cell& cell);
// One line per unstable cell: "fib @ 3.12.1 !: outlier run #3 (0.52 s) against a median of 0.31 s; ...".
std::vector<std::string> unstable_notes(const Summary& summary);

// `runs` with the case of each run whose params differ from another run's of that case renamed after the
// params that differ: "nap (t=0.02)" beside "nap (t=0.2)" (two sessions of one -o file, merged files).
std::vector<RunRecord> distinguish_params(std::vector<RunRecord> runs);

// One line per cell whose runs left processes behind: "nap @ 3.12.1: 2 leftover processes in 1 of 3 runs ...".
std::vector<std::string> leftover_notes(const Summary& summary);

// The gil column: on, off, "on (forced)", "GIL re-enabled by NAME", "ON (re-enabled)" (a free-threaded
// build's GIL back on for a reason the results do not name), "-".
std::string gil_text(const Cell& cell);

// The number at a dotted key of a run's dict result (true/false as 1/0), if it has one: what views read.
std::optional<double> result_number(const RunRecord& run, const std::string& dotted);

// A result as the table shows it: strings bare, JSON otherwise, cut to `width` characters.
std::string result_display(const nlohmann::json& value, std::size_t width = 24);

}  // namespace gilhost
