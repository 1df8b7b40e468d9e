#include "report/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gilhost {

double median_of_sorted(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  // Halved before they are added: two values near the largest double sum to infinity.
  return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return median_of_sorted(v);
}

Stats compute_stats(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = median_of(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - s.median));
  s.mad = median_of(dev);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return s;
}

}  // namespace gilhost
