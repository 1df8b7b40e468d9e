#pragma once
// Ratios of wall times between two sets of runs, by one pairing rule: the baseline case's ratio
// (`ratio`), build against build (`report --baseline-python`) and file against file (`compare`).
#include <string>
#include <vector>

#include "report/stats.hpp"
#include "results/record.hpp"

namespace gilhost {

// The rule every ratio pairs runs by: measured ok runs of the same session (file and meta) and the same
// repeat index, made side by side; where no run pairs so (sessions from different files), the same
// repeat index. Returns num / den of each pair, in the order of `num`; empty when nothing pairs.
std::vector<double> paired_wall_ratios(const std::vector<RunRecord>& num, const std::vector<RunRecord>& den);

// A ratio num / den of wall times. Paired: the median of the ratios of paired runs ± their MAD.
// Unpaired (no repeat index in common): the ratio of the medians, with lo and hi the extremes of the
// ratios of every run of one side with every run of the other.
struct RatioStat {
  double value = 0;
  double lo = 0, hi = 0;   // the smallest and largest ratio behind `value`
  double mad = 0;          // paired: MAD of the ratios
  double mad_inverse = 0;  // paired: MAD of den / num (the spread of "x faster")
  int pairs = 0;           // ratios behind it
  bool paired = false;
  bool valid() const { return pairs > 0 && value > 0; }
  // The ratios disagree on the direction: some pairs say slower, some faster.
  bool straddles_one() const { return lo < 1 && hi > 1; }
};

// Only measured runs with status ok count.
RatioStat wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs);
// The same rule for a metric the runs recorded (a run without it, or with a value <= 0, does not count):
// timeit's time per loop, where its loop count makes the wall time meaningless.
RatioStat metric_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs,
                       const std::string& metric);

// "1.23 ± 0.04x" (paired, ± MAD; just "1.23x" from one pair), "1.23x (1.10–1.40)" (unpaired), "-".
std::string format_ratio(const RatioStat& r);
// B/A as a change: "1.23 ± 0.04 x slower", "1.10 ± 0.02 x faster" (the factor is >= 1),
// "1.00 ± 0.01 x (same)"; unpaired "1.23 x slower (1.10–1.40)".
std::string format_change(const RatioStat& r);

}  // namespace gilhost
