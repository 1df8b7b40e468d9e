#include "report/significance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gilhost {

namespace {

// Mid-ranks (1-based) of the pooled values: tied values share the mean of their ranks.
std::vector<double> mid_ranks(const std::vector<double>& pooled) {
  std::vector<std::size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return pooled[i] < pooled[j]; });
  std::vector<double> rank(pooled.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const double mid = (static_cast<double>(i + j) / 2.0) + 1.0;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = mid;
    i = j + 1;
  }
  return rank;
}

double binomial(std::size_t n, std::size_t k) {
  double r = 1;
  for (std::size_t i = 1; i <= k; ++i) r = r * static_cast<double>(n - k + i) / static_cast<double>(i);
  return r;
}

constexpr double kMaxExactSplits = 300000;

}  // namespace

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney out;
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return out;
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::vector<double> rank = mid_ranks(pooled);
  const double offset = static_cast<double>(n1 * (n1 + 1)) / 2.0;
  const double rank_sum = std::accumulate(rank.begin(), rank.begin() + static_cast<long>(n1), 0.0);
  out.u = rank_sum - offset;
  const double mean_u = static_cast<double>(n1 * n2) / 2.0;
  const double observed = std::abs(out.u - mean_u);
  constexpr double kEps = 1e-9;  // rank sums are multiples of 0.5: compare with slack

  if (binomial(n, n1) <= kMaxExactSplits) {
    // Every way to choose which n1 of the pooled runs are "a": the permutation distribution of U.
    std::vector<double> deviations;
    std::vector<std::size_t> pick(n1);
    std::iota(pick.begin(), pick.end(), 0);
    for (;;) {
      double sum = 0;
      for (std::size_t i : pick) sum += rank[i];
      deviations.push_back(std::abs(sum - offset - mean_u));
      std::size_t i = n1;  // the next combination, in lexicographic order
      while (i > 0 && pick[i - 1] == n - n1 + i - 1) --i;
      if (i == 0) break;
      ++pick[i - 1];
      for (std::size_t k = i; k < n1; ++k) pick[k] = pick[k - 1] + 1;
    }
    const double total = static_cast<double>(deviations.size());
    const double largest = *std::max_element(deviations.begin(), deviations.end());
    auto share_at_least = [&](double d) {
      return static_cast<double>(std::count_if(deviations.begin(), deviations.end(),
                                               [&](double x) { return x >= d - kEps; })) / total;
    };
    out.p_value = share_at_least(observed);
    out.smallest_p = share_at_least(largest);
    out.exact = true;
    return out;
  }

  // Normal approximation, variance corrected for ties, with a continuity correction.
  std::vector<double> sorted(pooled);
  std::sort(sorted.begin(), sorted.end());
  double tie_term = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  const double nn = static_cast<double>(n);
  const double variance = static_cast<double>(n1 * n2) / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  if (variance <= 0) return out;
  const double z = std::max(0.0, observed - 0.5) / std::sqrt(variance);
  out.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return out;
}

double smallest_p_value(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1;
  return std::min(1.0, 2.0 / binomial(n1 + n2, n1));
}

int runs_needed_per_side(double alpha) {
  int n = 1;
  while (n < 1000 && smallest_p_value(static_cast<std::size_t>(n), static_cast<std::size_t>(n)) >= alpha) ++n;
  return n;
}

}  // namespace gilhost
