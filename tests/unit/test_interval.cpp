// report/interval: the median's order-statistics interval and the paired ratio's signed-rank interval,
// against levels worked out by hand from the binomial and signed-rank distributions.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "report/interval.hpp"
#include "report/stats.hpp"

using gilhost::median_estimate;
using gilhost::median_interval_rank;
using gilhost::paired_ratio_estimate;

TEST_CASE("interval: the median's order-statistics interval", "[interval]") {
  // One run: a point, no interval.
  auto one = median_estimate({2.0});
  CHECK(one.n == 1);
  CHECK(one.point == 2.0);
  CHECK_FALSE(one.interval);
  CHECK_FALSE(one.relative_precision());

  // Three runs: the range, covering the median with 1 - 2/8 = 75 %: not a 95 % interval.
  auto three = median_estimate({3.0, 1.0, 2.0});
  REQUIRE(three.interval);
  CHECK(three.point == 2.0);
  CHECK(three.interval->lo == 1.0);
  CHECK(three.interval->hi == 3.0);
  CHECK(three.interval->level == Approx(0.75));
  CHECK_FALSE(three.interval->at_95());
  CHECK_FALSE(three.relative_precision());  // a target is met by a 95 % interval only

  // Six runs: the range reaches 1 - 2/64 = 96.9 %.
  CHECK(median_interval_rank(6).first == 1);
  CHECK(median_interval_rank(6).second == Approx(1 - 2.0 / 64));
  // Twenty: k = 6 (P(B < 6) = 21700/2^20 = 0.0207 <= 0.025; P(B < 7) = 0.0577 > 0.025).
  CHECK(median_interval_rank(20).first == 6);
  CHECK(median_interval_rank(20).second == Approx(1 - 2 * 21700.0 / 1048576.0));

  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(100.0 + i);
  auto twenty = median_estimate(v);
  REQUIRE(twenty.interval);
  CHECK(twenty.interval->lo == 106.0);
  CHECK(twenty.interval->hi == 115.0);
  CHECK(twenty.interval->at_95());
  REQUIRE(twenty.relative_precision());
  CHECK(*twenty.relative_precision() == Approx(4.5 / 110.5));
}

TEST_CASE("interval: a paired ratio's signed-rank interval", "[interval]") {
  // b twice a in every round: the ratio is 0.5 exactly, and its interval too.
  std::vector<std::pair<double, double>> halves;
  for (int i = 1; i <= 8; ++i) halves.emplace_back(i, 2.0 * i);
  auto half = paired_ratio_estimate(halves);
  CHECK(half.n == 8);
  CHECK(half.point == Approx(0.5));
  REQUIRE(half.interval);
  CHECK(half.interval->lo == Approx(0.5));
  CHECK(half.interval->hi == Approx(0.5));
  CHECK(half.excludes(1.0));

  // Ratios spread on both sides of 1: the interval holds 1, so no difference is stated.
  auto mixed = paired_ratio_estimate({{1.0, 1.1}, {1.1, 1.0}, {0.95, 1.0}, {1.05, 1.0}, {1.0, 1.02}, {1.02, 1.0}});
  REQUIRE(mixed.interval);
  CHECK(mixed.interval->at_95());  // n = 6: 1 - 2/64
  CHECK(mixed.interval->contains(1.0));
  CHECK_FALSE(mixed.excludes(1.0));

  // Five pairs all above 1 still reach only 1 - 2/32 = 93.75 %: not stated as a difference.
  auto five = paired_ratio_estimate({{2, 1}, {2.1, 1}, {1.9, 1}, {2.2, 1}, {2.05, 1}});
  REQUIRE(five.interval);
  CHECK(five.interval->level == Approx(1 - 2.0 / 32));
  CHECK_FALSE(five.excludes(1.0));

  // Pairs that hold no time are left out rather than taken as a ratio of 0 or infinity.
  auto some = paired_ratio_estimate({{0.0, 1.0}, {1.0, 2.0}});
  CHECK(some.n == 1);
  CHECK_FALSE(some.interval);
}

TEST_CASE("interval: the median of two values near the largest double is theirs, not infinity", "[interval]") {
  const double big = 1e308;
  CHECK(gilhost::median_of({big, big}) == big);
  CHECK(gilhost::median_estimate({big, big}).point == big);
  CHECK(gilhost::median_of({-big, big}) == 0);
  CHECK(gilhost::median_of({1, 2, 3, 4}) == 2.5);
}
