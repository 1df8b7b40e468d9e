#pragma once
// How sure a figure is: a point estimate, the runs it rests on, and an interval that is honest at small n.
//
// Both intervals are distribution-free and exact (no bootstrap, nothing random, so a report is the same
// each time it is made from the same file):
// - the median's: order statistics (the sign test inverted). With n runs the interval [x_(k), x_(n+1-k)]
//   covers the true median with probability 1 - 2 P(Binomial(n, 1/2) < k), whatever the distribution.
// - a paired ratio's (a_i / b_i from the same round): Hodges-Lehmann on the log ratios, the pseudo-median
//   of the Walsh averages, with the interval of the Wilcoxon signed-rank test inverted (exact distribution).
// Below 6 runs no distribution-free interval reaches 95 %: the widest one there is (the range) is given,
// with the level it does reach (n = 3: 75 %), and `at_95()` says it is not a 95 % interval.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace gilhost {

struct Interval {
  double lo = 0, hi = 0;
  double level = 0;  // the probability it covers the true value: 0.95 or more when at_95()
  bool at_95() const { return level >= 0.95 - 1e-9; }
  bool contains(double x) const { return lo <= x && x <= hi; }
};

struct Estimate {
  std::size_t n = 0;
  double point = 0;
  std::optional<Interval> interval;  // nullopt for n < 2: one run says nothing of its spread

  // Half the interval's width over the point: 0.03 is "known to within 3 %". nullopt without an interval
  // or a 95 % one (a target is met only by a 95 % interval), or when the point is 0.
  std::optional<double> relative_precision() const;
  // The interval excludes `x` at 95 %: a ratio whose interval holds 1 is no measurable difference.
  bool excludes(double x) const { return interval && interval->at_95() && !interval->contains(x); }
};

// The median of `values` with its order-statistics interval.
Estimate median_estimate(std::vector<double> values);

// The ratio a/b of paired values (each pair from one round; pairs with a value <= 0 are left out):
// exp of the Hodges-Lehmann estimate of the log ratios, with its signed-rank interval.
Estimate paired_ratio_estimate(const std::vector<std::pair<double, double>>& pairs);

// The ratio a/b of unpaired samples (runs of two sessions that share no round): exp of the two-sample
// Hodges-Lehmann estimate (the median of every log(a_i) - log(b_j)), with the interval of the Mann-Whitney
// test inverted (exact distribution up to 50 runs a side, normal above). Values <= 0 are left out; n is
// the smaller side's count (what the interval's width rests on).
Estimate unpaired_ratio_estimate(const std::vector<double>& a, const std::vector<double>& b);

// The 1-based rank k of the lower end of the median's interval for n values, and the level it reaches:
// the largest k with 2 P(Binomial(n, 1/2) < k) <= 0.05, or k = 1 when none (n < 6).
std::pair<std::size_t, double> median_interval_rank(std::size_t n);

}  // namespace gilhost
