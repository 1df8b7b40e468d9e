#include "load/percentile.hpp"

#include <algorithm>
#include <stdexcept>

namespace gilhost::load {

namespace {

// Index of the nearest-rank p-th percentile in n sorted samples (n > 0).
std::size_t rank_index(std::size_t n, unsigned p) {
  const std::size_t rank = (static_cast<std::size_t>(p) * n + 99) / 100;  // ceil(p * n / 100)
  return std::clamp<std::size_t>(rank, 1, n) - 1;
}

void check_p(unsigned p) {
  if (p < 1 || p > 100) throw std::invalid_argument("percentile must be in 1..100, not " + std::to_string(p));
}

}  // namespace

std::optional<std::int64_t> percentile(std::vector<std::int64_t> samples, unsigned p) {
  check_p(p);
  if (samples.empty()) return std::nullopt;
  const std::size_t i = rank_index(samples.size(), p);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(i), samples.end());
  return samples[i];
}

LatencySummary summarize(std::vector<std::int64_t> samples_ns) {
  LatencySummary s;
  s.count = samples_ns.size();
  if (samples_ns.empty()) return s;
  std::sort(samples_ns.begin(), samples_ns.end());
  const std::size_t n = samples_ns.size();
  s.p50 = samples_ns[rank_index(n, 50)];
  s.p95 = samples_ns[rank_index(n, 95)];
  s.p99 = samples_ns[rank_index(n, 99)];
  s.max = samples_ns.back();
  return s;
}

}  // namespace gilhost::load
