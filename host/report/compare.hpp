#pragma once
// Results file against results file (`gilhost compare A B`): B / A of the wall times, cell by cell.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/ratio.hpp"
#include "report/significance.hpp"
#include "report/stats.hpp"
#include "results/record.hpp"

namespace gilhost {

struct CompareOptions {
  std::string by = "label";     // match cells by: "label", "python" (full version + t), "minor" (3.12, 3.13t)
  double threshold_pct = 10.0;  // a change must be beyond this factor (1.10x either way)...
  double alpha = kSignificanceLevel;  // ...and its p-value below this to count as changed
};

// What compare says of one cell. A cell has changed only when its ratio is beyond the threshold and the
// rank-sum test of its wall times says so (p < alpha); the rest says why not.
enum class Verdict {
  changed,           // beyond the threshold, p < alpha
  within_threshold,  // p < alpha, but the ratio within the threshold
  no_change,         // p >= alpha: no significant change
  too_few_runs,      // these run counts cannot reach p < alpha, whatever the times
  no_runs,           // no ok run on a side
};
// "changed", "within_threshold", "no_change", "too_few_runs", "no_runs" (JSON).
const char* verdict_name(Verdict v);

struct CompareRow {
  std::string experiment, case_name, key;
  std::string label_a, label_b;
  Stats wall_a, wall_b;  // seconds, ok runs
  RatioStat ratio;       // B / A
  MannWhitney test;      // A's wall times against B's
  double smallest_p = 1; // the smallest p these run counts allow (ties aside)
  bool beyond_threshold = false;
  bool noisy = false;    // the ratios behind it straddle 1
  Verdict verdict = Verdict::no_runs;
  // The GIL wait share of each side (report/threads): nullopt where its runs have no thread states.
  std::optional<double> gil_a, gil_b;
  bool changed() const { return verdict == Verdict::changed; }
};

// A metric the script reported (gilhost.metric, [case.extract]) in one cell, B against A. No verdict:
// gilhost knows of a wall time that less is better, of a script's number it knows nothing.
struct MetricCompareRow {
  std::string experiment, case_name, key, metric;
  std::string label_a, label_b;
  Stats a, b;           // the metric over each side's ok runs
  double ratio = 0;     // median B / median A; 0 where a side has none or A's is 0
  MannWhitney test;     // A's values against B's
};

// One session (a meta record) a side holds: its host and when it started.
struct SessionStamp {
  std::string hostname;
  std::int64_t started_unix_ns = 0;
  bool operator==(const SessionStamp& o) const { return hostname == o.hostname && started_unix_ns == o.started_unix_ns; }
};

struct Comparison {
  std::string path_a, path_b;
  std::vector<MachineRecord> machines_a, machines_b;
  std::vector<SessionStamp> sessions_a, sessions_b;
  std::vector<CompareRow> rows;
  std::vector<MetricCompareRow> metric_rows;  // the cells' metrics, in row order
  std::vector<std::string> only_a, only_b;  // "experiment: case @ key"
  std::vector<std::string> ambiguous;      // keys that name several builds on one side
  CompareOptions options;
  int changed() const;                     // the significant changes beyond the threshold
  int count(Verdict v) const;
  int beyond_threshold() const;            // by the ratio alone, significant or not
  // A and B share no session: their difference includes the drift between two sessions.
  bool different_sessions() const;
  bool has_gil_wait() const;  // a row has a GIL wait share on either side
};

// Lines as from merge_results (metas and records of one or more files).
Comparison compare_runs(const std::vector<ResultsLine>& a, const std::vector<ResultsLine>& b,
                        const CompareOptions& options);
// The text report; width > 0: fitted to that many columns (tables cut and columns left out as report/fit
// does, prose broken at spaces), 0: everything, unwrapped (--wide, a file).
std::string render_comparison_text(const Comparison& c, std::size_t width = 0);
std::string render_comparison_markdown(const Comparison& c);
// The verdict as the tables say it: "! changed", "no significant change", "too few runs to tell (3 a side;
// 4+ needed)", ...
std::string verdict_text(const CompareRow& row, const CompareOptions& options);
// "<0.001", "0.008", "1.000"; "-" without ok runs
std::string format_p(const CompareRow& row);
// "" when A and B share a session; else why two sessions' figures include their drift, and what to do.
std::string comparison_session_note(const Comparison& c);
// What --fail-on-change exits with: 1 when a cell changed significantly beyond the threshold, else 0.
int fail_on_change_status(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);

// The key a run is matched by under `by` ("label", "python", "minor").
std::string match_key(const RunRecord& run, const std::string& by);

}  // namespace gilhost
