#pragma once
// Results file against results file (`gilhost compare A B`): B / A of the wall times, cell by cell.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/ratio.hpp"
#include "report/stats.hpp"
#include "results/record.hpp"

namespace gilhost {

struct CompareOptions {
  std::string by = "label";     // match cells by: "label", "python" (full version + t), "minor" (3.12, 3.13t)
  double threshold_pct = 10.0;  // changes beyond this factor are flagged (1.10x either way)
};

struct CompareRow {
  std::string experiment, case_name, key;
  std::string label_a, label_b;
  Stats wall_a, wall_b;  // seconds, ok runs
  RatioStat ratio;       // B / A
  bool flagged = false;  // beyond the threshold
  bool noisy = false;    // the ratios behind it straddle 1
};

struct Comparison {
  std::string path_a, path_b;
  std::vector<MachineRecord> machines_a, machines_b;
  std::vector<CompareRow> rows;
  std::vector<std::string> only_a, only_b;  // "experiment: case @ key"
  std::vector<std::string> ambiguous;      // keys that name several builds on one side
  CompareOptions options;
  int flagged() const;
};

// Lines as from merge_results (metas and records of one or more files).
Comparison compare_runs(const std::vector<ResultsLine>& a, const std::vector<ResultsLine>& b,
                        const CompareOptions& options);
std::string render_comparison_text(const Comparison& c);
std::string render_comparison_markdown(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);

// The key a run is matched by under `by` ("label", "python", "minor").
std::string match_key(const RunRecord& run, const std::string& by);

}  // namespace gilhost
