#pragma once
// Ratios of wall times between two sets of runs, by one pairing rule: the baseline case's ratio
// (`ratio`), build against build (`report --baseline-python`) and file against file (`compare`).
#include <string>
#include <vector>

#include "report/interval.hpp"
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
  // What the ratio may claim: paired, the Hodges-Lehmann ratio with its signed-rank interval; unpaired, the
  // two-sample Hodges-Lehmann ratio with its Mann-Whitney interval (report/interval). Its n is the pairs
  // (paired) or the smaller side's runs (unpaired).
  Estimate estimate;
  bool valid() const { return pairs > 0 && value > 0; }
  // The ratios disagree on the direction: some pairs say slower, some faster.
  bool straddles_one() const { return lo < 1 && hi > 1; }
};

// Only measured runs with status ok count.
RatioStat wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs);
// The unpaired ratio whatever the repeat indices: two sessions' runs share no round (compare of two files).
RatioStat unpaired_wall_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs);
// The same rule for a metric the runs recorded (a run without it, or with a value <= 0, does not count):
// timeit's time per loop, where its loop count makes the wall time meaningless.
RatioStat metric_ratio(const std::vector<RunRecord>& num_runs, const std::vector<RunRecord>& den_runs,
                       const std::string& metric);

// A table cell: "1.23x (1.10–1.40)" where the interval excludes 1 at 95 %, "no difference (0.9–1.4, n=3)"
// where it does not (report/evidence's ratio_cell), "-".
std::string format_ratio(const RatioStat& r);
// B/A as a change: "1.23x slower (1.10–1.40, n=6)", "1.10x faster (1.05–1.15, n=6)" (the factor is >= 1);
// "no measurable difference (0.95–1.08, n=6)" where the 95 % interval holds 1; "2.00x? (one pair, no
// interval: n=1)" where there is none.
std::string format_change(const RatioStat& r);

}  // namespace gilhost
