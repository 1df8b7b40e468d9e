#pragma once
// Ratios of wall times between two sets of runs: build against build (`report --baseline-python`) and
// results file against results file (`gilhost compare A B`).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/stats.hpp"

namespace gilhost {

// A ratio num / den of wall times. Paired: the median of the ratios of runs paired by repeat index
// (within one session when both sides share one), ± their MAD. Unpaired (no repeat index in common):
// the ratio of the medians, with lo and hi the extremes of the ratios of every run of one side with
// every run of the other.
struct RatioStat {
  double value = 0;
  double lo = 0, hi = 0;    // the smallest and largest ratio behind `value`
  double mad = 0;           // paired: MAD of the ratios
  double mad_inverse = 0;   // paired: MAD of den / num (the spread of "x faster")
  int pairs = 0;            // ratios behind it
  bool paired = false;
  bool valid() const { return pairs > 0 && value > 0; }
  // The ratios disagree on the direction: some pairs say slower, some faster.
  bool straddles_one() const { return lo < 1 && hi > 1; }
  nlohmann::json to_json() const;
};

// Only measured runs with status "ok" count.
RatioStat wall_ratio(const std::vector<nlohmann::json>& num_runs, const std::vector<nlohmann::json>& den_runs);

// "1.23 ± 0.04x" (paired, ± MAD; just "1.23x" from one pair), "1.23x (1.10–1.40)" (unpaired), "-".
std::string format_ratio(const RatioStat& r);
// B/A as a change: "1.23 ± 0.04 x slower", "1.10 ± 0.02 x faster" (the factor is >= 1),
// "1.00 ± 0.01 x (same)"; unpaired "1.23 x slower (1.10–1.40)".
std::string format_change(const RatioStat& r);

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
  std::vector<nlohmann::json> machines_a, machines_b;
  std::vector<CompareRow> rows;
  std::vector<std::string> only_a, only_b;  // "experiment: case @ key"
  std::vector<std::string> ambiguous;      // keys that name several builds on one side
  CompareOptions options;
  int flagged() const;
};

// Lines as from merge_results (metas and records of one or more files).
Comparison compare_runs(const std::vector<nlohmann::json>& a, const std::vector<nlohmann::json>& b,
                        const CompareOptions& options);
std::string render_comparison_text(const Comparison& c);
std::string render_comparison_markdown(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);

// The key a run is matched by under `by` ("label", "python", "minor").
std::string match_key(const nlohmann::json& run, const std::string& by);

}  // namespace gilhost
