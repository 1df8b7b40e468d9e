#include "load/percentile.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gilhost::load {

std::optional<std::int64_t> percentile_sorted(const std::vector<std::int64_t>& sorted, unsigned p) {
  if (p < 1 || p > 100) throw std::invalid_argument("percentile must be in 1..100, not " + std::to_string(p));
  if (sorted.empty()) return std::nullopt;
  const std::size_t rank = (static_cast<std::size_t>(p) * sorted.size() + 99) / 100;  // ceil(p * n / 100) >= 1
  return sorted[rank - 1];
}

LatencySummary summarize(std::vector<std::int64_t> samples_ns) {
  std::sort(samples_ns.begin(), samples_ns.end());
  LatencySummary s;
  s.count = samples_ns.size();
  s.p50 = percentile_sorted(samples_ns, 50);
  s.p95 = percentile_sorted(samples_ns, 95);
  s.p99 = percentile_sorted(samples_ns, 99);
  s.max = percentile_sorted(samples_ns, 100);
  return s;
}

}  // namespace gilhost::load
