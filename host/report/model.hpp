#pragma once
// What every report format renders, built once: merged results grouped into one section per experiment,
// each with its summary, the machines and builds it ran on, (optionally) ratios against a baseline build,
// and its tables. The text, Markdown and HTML renderers only add their syntax to these.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/failures.hpp"
#include "report/headline.hpp"
#include "report/merge.hpp"
#include "report/ratio.hpp"
#include "report/readings.hpp"
#include "report/scaling.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "results/record.hpp"

namespace gilhost {

struct ReportOptions {
  std::string baseline_python;  // "3.12", "3.13t", "3.12.1" or a label: the "vs 3.12" column
  bool details = true;
  bool profile_in_title = false;  // `gilhost run` names the profile it ran: "race (profile quick)"
};

// One build as a grid column shows it: the meta's record of it (label: after merge tags), or what its
// runs say where no meta lists it; and the host it ran on.
struct BuildInfo : BuildRecord {
  std::string host;
};

// One cell of the grid (a case on a build), as every format shows it.
struct GridCell {
  enum class State { skipped, warmup_only, measured };
  State state = State::skipped;
  std::string wall, result;       // "312 ms (300–330) n=5 !", the result as the table shows it
  std::string mark;               // ✓ / ✗ for the expectations ("" without runs)
  bool expectations_ok = true;
  std::string statuses;           // "ok", "ok x2, timeout x1"
  bool show_statuses = false;     // the statuses say something the result does not
  std::string vs_baseline;        // against the --baseline-python build; "" for none or the baseline itself
};
// A grid cell as one line: "0.312 s ±1.2%<separator>4000000 ✓ [error]", "skipped", "(warm-up only)".
std::string grid_cell_text(const GridCell& cell, const std::string& separator);

struct GridColumn {
  std::string label;    // the build
  std::string heading;  // "3.12.1", "3.12.1 (exec)"
  bool baseline = false;  // the --baseline-python build
};

// Cases down, builds across.
struct Grid {
  std::vector<GridColumn> columns;
  std::vector<std::string> cases;
  std::vector<std::vector<GridCell>> cells;  // [case][column]
};

// An expectation that did not hold, in a cell.
struct FailureLine {
  std::string case_name, build, failure;
  int failed_runs = 0;
  std::size_t runs = 0;
};

// Skips grouped by reason: a case swept over 4 values on 4 old builds is one fact, not 16.
struct SkipGroup {
  std::string reason;
  std::vector<std::string> cases, builds;
};
std::vector<SkipGroup> group_skips(const std::vector<SkipRecord>& skips);

struct Section {
  std::string experiment;
  std::string title;  // the text report's heading: the experiment, or "race (profile quick)" for `run`
  ExperimentInfo experiment_meta;  // of the first session
  std::string description;
  std::vector<std::string> sources;
  std::vector<MetaRecord> metas;
  std::optional<MachineRecord> machine;  // the first session's
  std::vector<MachineRecord> machines;   // one per hostname
  std::vector<BuildInfo> builds;         // one per grid column, in the summary's order
  std::vector<RunRecord> runs;
  std::vector<SkipRecord> skips;
  Summary summary;
  bool details = true;
  // --baseline-python: the ratio wall / wall of the baseline build (same machine, same case),
  // pair by pair; baseline_of maps a build to the build it is compared with.
  std::string baseline_python;
  std::map<std::string, std::string> baseline_of;
  std::map<std::pair<std::string, std::string>, RatioStat> vs_baseline;
  std::vector<std::string> notes;
  std::vector<std::string> unstable;         // one line per cell marked "!": why (report/evidence)
  std::vector<std::string> precision_notes;  // cells short of the precision target, and what stopped them
  std::vector<std::string> gil_unknown;      // cells whose GIL wait is "?", and why

  // The tables, built once for every format.
  Grid grid;
  Table details_table;      // one row per cell that has measured runs
  Table vs_baseline_table;  // cases x builds, when --baseline-python names a build
  Table machines_table;
  Table article_table;      // what the article reported, per case
  std::vector<Scaling> scaling;      // cases swept over a count
  std::vector<Headline> headlines;   // the experiment file's [[view]]s
  Table headlines_table;             // views x builds, the article last
  Table metrics_table;               // the scripts' metrics: (case, metric) x builds
  std::vector<std::string> metric_sources;  // "NAME: the first line of stdout matching 'REGEX'" ([case.extract])
  std::vector<Reading> readings;     // what the cells' thread states say, one line each
  std::vector<FailureLine> failures;
  CellFailures failed_cells;  // runs that failed, with their cause; cells not repeated
  std::vector<SkipGroup> skip_groups;
  std::string runs_per_cell;  // "3 measured runs per cell, 1 warm-up" ("" when the meta does not say)
  std::string params;         // "n=4, size=10"
  // "article (n = 3,000,000; this run n = 200,000): not comparable" where a profile or --param changed the
  // sizes: then no view sets the article's figure beside this run's.
  std::string article_caveat;

  const BuildInfo* build(const std::string& label) const;
  std::vector<std::string> builds_on(const std::string& host) const;  // the columns measured on that host
  bool multi_host() const { return machines.size() > 1; }
  bool compares_builds() const { return !baseline_python.empty() && !baseline_of.empty(); }
  bool has_thread_states() const;  // some cell's runs say where their threads' time went
  // The measured run of a cell with the median wall time (ok runs first), or nullptr.
  const RunRecord* median_run(const std::string& case_name, const std::string& interpreter) const;
  std::string profile() const { return experiment_meta.profile; }
};

struct ReportModel {
  std::vector<std::string> files;
  std::vector<Section> sections;  // first-seen order of experiments
  std::vector<std::string> relabeled;
  int malformed_lines = 0;
  std::string baseline_python;
  int measured_runs() const;
  int expectation_failures() const;  // cells, over every section
};

ReportModel build_report_model(const MergedResults& merged, const ReportOptions& options);
// The report of a session just run, its records as `path` now holds them: the same model `gilhost report
// PATH` builds from the file.
ReportModel build_session_report(const std::string& path, const MetaRecord& meta, const std::vector<SkipRecord>& skips,
                                 const std::vector<RunRecord>& runs, const ReportOptions& options);

bool checks_expectations(const Cell& cell);  // some measured run checked an expectation besides "status ok"
std::string verdict_mark(const Cell& cell);  // ✓ / ✗, or "" where nothing was expected
std::string vs_baseline_text(const Section& s, const std::string& case_name, const std::string& interpreter);
std::string machine_summary(const MachineRecord& machine);  // "AMD EPYC · 2 cores · Linux 6.1 · x86_64"
std::string host_label(const MachineRecord& machine);       // its hostname, or "?" where the record has none
std::string params_text(const nlohmann::json& params);     // "n=4, size=10"

}  // namespace gilhost
