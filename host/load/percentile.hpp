#pragma once
// Latency percentiles of one load round (nearest rank: the smallest sample with at least p % at or below it).
#include <cstdint>
#include <optional>
#include <vector>

namespace gilhost::load {

// The nearest-rank p-th percentile (p in 1..100) of samples sorted ascending; nullopt when there are none.
// Integer rank arithmetic: ceil(p * n / 100), so p95 of 200 samples is the 190th, never off by float error.
std::optional<std::int64_t> percentile_sorted(const std::vector<std::int64_t>& sorted, unsigned p);

struct LatencySummary {
  std::size_t count = 0;
  // Nanoseconds; all unset when there are no samples.
  std::optional<std::int64_t> p50, p95, p99, max;
};

LatencySummary summarize(std::vector<std::int64_t> samples_ns);

}  // namespace gilhost::load
