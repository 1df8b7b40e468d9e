#pragma once
// What a cell's figures may claim, decided once for every format: a ratio's direction from its interval,
// a cell's stability from its runs (spread, outliers, two modes, the load beside them), and how near its
// median came to the experiment's precision target. The renderers only show what is decided here.
#include <optional>
#include <string>
#include <vector>

#include "report/interval.hpp"
#include "results/record.hpp"

namespace gilhost {

// --- ratios ---------------------------------------------------------------------------------------------

// What a ratio (a / b of times) may say: a direction only when its 95 % interval excludes 1.
enum class Direction { higher, lower, no_difference };
Direction ratio_direction(const Estimate& ratio);
const char* direction_name(Direction d);  // "higher", "lower", "no_difference" (JSON)
// Why a ratio says no direction: "n = 1", "n = 3: no 95 % interval below 6 runs", "the interval holds 1".
std::string no_difference_why(const Estimate& ratio);

// "1.83x (1.70–1.95)", "1.83x" without an interval: the figure and its interval, nothing claimed.
std::string ratio_figure(const Estimate& ratio);
// A ratio as a table cell: "1.83x (1.70–1.95)" where its direction holds, "no diff. (0.90–2.60) n=8" where
// its 95 % interval holds 1, "43.7x? (41.9–45.5) n=2" below 6 runs (no 95 % interval) and "32x? n=1" for one
// pair (no interval at all); without the n where the table has a runs column (`with_n` false).
std::string ratio_cell(const Estimate& ratio, bool with_n = true);

// "0.312 s (0.30–0.33)": a time in seconds (format_seconds) with its interval; "0.312 s" without one.
std::string seconds_figure(const Estimate& seconds);
// "(0.30–0.33)" in the point's precision, or "".
std::string interval_suffix(const Estimate& e, int decimals);

// --- stability ------------------------------------------------------------------------------------------

namespace stability {
constexpr std::size_t kMinRuns = 3;         // fewer runs: nothing to judge a spread by
constexpr double kWideSpread = 0.10;        // the median's interval wider than ± this share of it
constexpr std::size_t kMinOutlierRuns = 5;  // outliers need a median and MAD that one run cannot move
constexpr double kOutlierMads = 5.0;        // beyond median ± this many scaled MADs (1.4826 MAD ~ one sd)...
constexpr double kOutlierShare = 0.05;      // ...and this share of the median: jitter of 1 % is no outlier
constexpr std::size_t kMinModeRuns = 6;     // two modes need at least this many runs...
constexpr double kModeGapShare = 0.05;      // ...a gap between sorted times of at least this share of the median,
constexpr double kModeGapSpread = 2.0;      // ...and this many times the wider group's own range
}  // namespace stability

struct Stability {
  bool wide = false, outliers = false, two_modes = false;
  double spread = 0;                 // half the interval's width over the median (wide)
  std::vector<int> outlier_runs;     // their repeat indices, 1-based as the results file counts rounds
  std::vector<double> outlier_s;     // their times
  std::size_t low_mode = 0, high_mode = 0;  // runs in each mode
  double low_mode_s = 0, high_mode_s = 0;   // each mode's median
  std::optional<double> load_avg;    // the highest 1-minute load average as its runs ended (where recorded)
  std::optional<double> steal;       // the most of the machine's CPU time a virtual machine's host took in a run
  std::string why;                   // one line: "wide spread ±14 % (0.30–0.36 s); load average up to 5.2"
  bool unstable() const { return wide || outliers || two_modes; }
};

// The stability of a cell's measured ok runs, by their wall times.
Stability assess_stability(const std::vector<RunRecord>& runs);

// --- precision ------------------------------------------------------------------------------------------

struct CellPrecision {
  std::optional<double> target;    // the experiment's (ExperimentInfo.precision); nullopt: none set
  std::optional<double> achieved;  // Estimate::relative_precision of the wall median; nullopt: no 95 % interval
  std::string stopped_by;          // "target", "budget" (a run's `stopped`), "rounds", "repeat"
  bool short_of_target() const { return target && *target > 0 && (!achieved || *achieved > *target); }
};

CellPrecision cell_precision(const Estimate& wall, const std::vector<RunRecord>& runs, const ExperimentInfo& experiment);
// "fib @ 3.12.1: known to ±4.1 % against a target of 3 %: the cell's time budget stopped it", or "" when the
// target was met or none was set.
std::string precision_note(const std::string& cell, const CellPrecision& p);

}  // namespace gilhost
