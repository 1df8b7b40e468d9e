#pragma once
// Robust summary statistics for a handful of runs.
#include <vector>

namespace gilhost {

struct Stats {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0;
  double mad = 0;  // median absolute deviation from the median
  double mean = 0, stdev = 0;
  // MAD relative to the median: the "±" shown in tables (robust to one slow outlier, unlike stdev).
  double relative_spread() const { return median != 0 ? mad / median : 0; }
};

Stats compute_stats(std::vector<double> values);
double median_of(std::vector<double> values);
// The same of values already in order (0 for none).
double median_of_sorted(const std::vector<double>& sorted);

}  // namespace gilhost
