#include "report/interval.hpp"

#include <algorithm>
#include <cmath>

#include "report/stats.hpp"

namespace gilhost {
namespace {

constexpr double kTail = 0.025;  // each side of a 95 % interval

// P(Binomial(n, 1/2) < k), in log space so that large n does not underflow.
double binomial_below(std::size_t n, std::size_t k) {
  double p = 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t i = 0; i < k; ++i) {
    const double log_choose = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                              std::lgamma(static_cast<double>(n - i) + 1);
    p += std::exp(log_choose + log_half_n);
  }
  return p;
}

// The signed-rank statistic's lower tail: for each c, P(T <= c - 1) for T the Wilcoxon statistic of n
// pairs under the null (exact, by counting the subsets of ranks with each sum).
std::vector<double> signed_rank_below(std::size_t n) {
  const std::size_t m = n * (n + 1) / 2;
  std::vector<double> count(m + 1, 0.0);
  count[0] = 1;
  for (std::size_t rank = 1; rank <= n; ++rank)
    for (std::size_t t = m; t >= rank; --t) count[t] += count[t - rank];
  std::vector<double> below(m + 2, 0.0);
  const double total = std::ldexp(1.0, static_cast<int>(n));
  for (std::size_t c = 1; c <= m + 1; ++c) below[c] = below[c - 1] + count[c - 1] / total;
  return below;
}

// The 1-based rank C of the Walsh averages' lower bound, and the level [W_C, W_(M+1-C)] reaches.
std::pair<std::size_t, double> signed_rank_interval_rank(std::size_t n) {
  const std::size_t m = n * (n + 1) / 2;
  if (n > 100) {  // the normal approximation is within a rank there
    const double sd = std::sqrt(static_cast<double>(n * (n + 1) * (2 * n + 1)) / 24.0);
    const double c = std::floor(static_cast<double>(m) / 2.0 - 1.959964 * sd);
    return {static_cast<std::size_t>(std::max(1.0, c)), 0.95};
  }
  const std::vector<double> below = signed_rank_below(n);
  std::size_t c = 1;
  while (c + 1 <= (m + 1) / 2 && below[c + 1] <= kTail) ++c;
  return {c, 1.0 - 2.0 * below[c]};
}

// P(U <= c - 1) for each c, U the Mann-Whitney statistic of n1 against n2 distinct values under the null
// (exact).
std::vector<double> mann_whitney_below(std::size_t n1, std::size_t n2) {
  const std::size_t m = n1 * n2;
  // The Gaussian binomial [n1 + n2 choose n1]_q counts the orderings by U. Row i holds [i + j choose i]_q
  // for each j, from row i - 1 by Pascal's q-rule: [i+j choose i] = [i+j-1 choose i-1] + q^i [i+j-1 choose i].
  using Poly = std::vector<double>;
  std::vector<Poly> row(n2 + 1, Poly{1.0});  // i = 0
  for (std::size_t i = 1; i <= n1; ++i) {
    std::vector<Poly> next(n2 + 1, Poly{1.0});
    for (std::size_t j = 1; j <= n2; ++j) {
      Poly poly(i * j + 1, 0.0);
      for (std::size_t u = 0; u < row[j].size(); ++u) poly[u] += row[j][u];
      for (std::size_t u = 0; u < next[j - 1].size(); ++u) poly[u + i] += next[j - 1][u];
      next[j] = std::move(poly);
    }
    row = std::move(next);
  }
  const Poly& counts = row[n2];
  double total = 0;
  for (double w : counts) total += w;
  std::vector<double> below(m + 2, 0.0);
  for (std::size_t u = 1; u <= m + 1; ++u) below[u] = below[u - 1] + counts[u - 1] / total;
  return below;
}

// The 1-based rank C of the lower bound among the n1 * n2 differences, and the level it reaches.
std::pair<std::size_t, double> mann_whitney_interval_rank(std::size_t n1, std::size_t n2) {
  const std::size_t m = n1 * n2;
  if (n1 > 50 || n2 > 50) {
    const double sd = std::sqrt(static_cast<double>(n1 * n2 * (n1 + n2 + 1)) / 12.0);
    const double c = std::floor(static_cast<double>(m) / 2.0 - 1.959964 * sd);
    return {static_cast<std::size_t>(std::max(1.0, c)), 0.95};
  }
  const std::vector<double> below = mann_whitney_below(n1, n2);
  std::size_t c = 1;
  while (c + 1 <= (m + 1) / 2 && below[c + 1] <= kTail) ++c;
  return {c, 1.0 - 2.0 * below[c]};
}

std::vector<double> positive_logs(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) out.push_back(std::log(v));
  return out;
}

}  // namespace

std::optional<double> Estimate::relative_precision() const {
  if (!interval || !interval->at_95() || point == 0) return std::nullopt;
  return std::max(interval->hi - point, point - interval->lo) / std::fabs(point);
}

std::pair<std::size_t, double> median_interval_rank(std::size_t n) {
  if (n == 0) return {0, 0.0};
  std::size_t k = 1;
  while (k + 1 <= (n + 1) / 2 && binomial_below(n, k + 1) <= kTail) ++k;
  return {k, 1.0 - 2.0 * binomial_below(n, k)};
}

Estimate median_estimate(std::vector<double> values) {
  Estimate e;
  e.n = values.size();
  if (values.empty()) return e;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  e.point = median_of_sorted(values);
  if (n < 2) return e;
  const auto [k, level] = median_interval_rank(n);
  e.interval = Interval{values[k - 1], values[n - k], level};
  return e;
}

Estimate paired_ratio_estimate(const std::vector<std::pair<double, double>>& pairs) {
  std::vector<double> logs;
  for (const auto& [a, b] : pairs)
    if (a > 0 && b > 0 && std::isfinite(a) && std::isfinite(b)) logs.push_back(std::log(a / b));
  Estimate e;
  e.n = logs.size();
  if (logs.empty()) return e;
  std::vector<double> walsh;
  walsh.reserve(logs.size() * (logs.size() + 1) / 2);
  for (std::size_t i = 0; i < logs.size(); ++i)
    for (std::size_t j = i; j < logs.size(); ++j) walsh.push_back((logs[i] + logs[j]) / 2);
  std::sort(walsh.begin(), walsh.end());
  const std::size_t m = walsh.size();
  e.point = std::exp(m % 2 ? walsh[m / 2] : (walsh[m / 2 - 1] + walsh[m / 2]) / 2);
  if (e.n < 2) return e;
  const auto [c, level] = signed_rank_interval_rank(e.n);
  e.interval = Interval{std::exp(walsh[c - 1]), std::exp(walsh[m - c]), level};
  return e;
}

Estimate unpaired_ratio_estimate(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double> la = positive_logs(a), lb = positive_logs(b);
  Estimate e;
  e.n = std::min(la.size(), lb.size());
  if (e.n == 0) return e;
  std::vector<double> diffs;
  diffs.reserve(la.size() * lb.size());
  for (double x : la)
    for (double y : lb) diffs.push_back(x - y);
  std::sort(diffs.begin(), diffs.end());
  const std::size_t m = diffs.size();
  e.point = std::exp(m % 2 ? diffs[m / 2] : (diffs[m / 2 - 1] + diffs[m / 2]) / 2);
  if (la.size() + lb.size() < 3) return e;  // one run against one: nothing of the spread
  const auto [c, level] = mann_whitney_interval_rank(la.size(), lb.size());
  e.interval = Interval{std::exp(diffs[c - 1]), std::exp(diffs[m - c]), level};
  return e;
}

}  // namespace gilhost
