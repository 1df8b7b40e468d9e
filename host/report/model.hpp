#pragma once
// What every report format renders: merged results grouped into one section per experiment, each with
// its summary grid, the machines and builds it ran on, and (optionally) ratios against a baseline build.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/compare.hpp"
#include "report/merge.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

namespace gilhost {

struct ReportOptions {
  std::string baseline_python;  // "3.12", "3.13t", "3.12.1" or a label: the "vs 3.12" column
  bool details = true;
};

// One build as a grid column shows it: from the meta's interpreter list, or from its runs.
struct BuildInfo {
  std::string label;           // the grid's column (after merge tags)
  std::string original_label;  // before a merge tagged it
  std::string host;
  std::string version;
  bool free_threaded = false;
  bool gil_forced = false;  // `+gil`: the free-threaded build run with its GIL forced on
  std::string mode;  // embed, exec
  std::string compiler, source, executable, libpython, build_flags;
};

struct Section {
  std::string experiment;
  nlohmann::json experiment_meta = nlohmann::json::object();  // meta.experiment of the first session
  std::vector<std::string> sources;
  std::vector<nlohmann::json> metas;
  std::vector<nlohmann::json> machines;  // one per hostname
  std::vector<BuildInfo> builds;         // one per grid column, in the summary's order
  std::vector<nlohmann::json> records;   // run and skip records
  Summary summary;
  ReportContext context;  // for the text report
  // --baseline-python: the ratio wall / wall of the baseline build (same machine, same case),
  // pair by pair; baseline_of maps a build to the build it is compared with.
  std::string baseline_python;
  std::map<std::string, std::string> baseline_of;
  std::map<std::pair<std::string, std::string>, RatioStat> vs_baseline;
  std::vector<std::string> notes;

  const BuildInfo* build(const std::string& label) const;
  bool multi_host() const { return machines.size() > 1; }
  // The measured run of a cell with the median wall time (ok runs first), or nullptr.
  const nlohmann::json* median_run(const std::string& case_name, const std::string& interpreter) const;
  std::string profile() const;
};

struct ReportModel {
  std::vector<std::string> files;
  std::vector<Section> sections;  // first-seen order of experiments
  std::vector<std::string> relabeled;
  int malformed_lines = 0;
  std::string baseline_python;
};

ReportModel build_report_model(const MergedResults& merged, const ReportOptions& options);

// The terminal report: render_report per section, plus the "vs BASELINE" grid when asked for.
std::string render_text(const ReportModel& model);

// Shared by the formats.
std::string verdict_mark(const Cell& cell);       // ✓ / ✗ / ""
std::string vs_baseline_text(const Section& s, const std::string& case_name, const std::string& interpreter);
std::string machine_summary(const nlohmann::json& machine);  // "AMD EPYC · 2 cores · Linux 6.1 · x86_64"
// Skips grouped by reason: {reason, cases, builds}.
struct SkipGroup {
  std::string reason;
  std::vector<std::string> cases, builds;
};
std::vector<SkipGroup> group_skips(const std::vector<nlohmann::json>& skips);

}  // namespace gilhost
