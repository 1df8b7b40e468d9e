// report/significance: the Mann-Whitney U test against values worked out by hand and by SciPy's
// definition (two-sided, exact permutation distribution).
#include <catch2/catch.hpp>

#include <vector>

#include "report/significance.hpp"

using gilhost::mann_whitney_u;

TEST_CASE("significance: exact p-values of the rank-sum test", "[significance]") {
  // Fully separated, 3 a side: only 2 of the C(6,3) = 20 splits are as extreme: p = 0.1, the floor.
  auto r = mann_whitney_u({1.0, 1.1, 1.2}, {2.0, 2.1, 2.2});
  CHECK(r.exact);
  CHECK(r.u == 0);
  CHECK(r.p_value == Approx(0.1));
  CHECK(r.smallest_p == Approx(0.1));
  CHECK(r.p_value >= gilhost::kSignificanceLevel);  // 3 runs a side can never be significant at 0.05

  // 5 a side, separated: 2 / C(10,5) = 2/252.
  r = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  CHECK(r.p_value == Approx(2.0 / 252.0));
  CHECK(r.u == 0);
  // Order does not matter; swapping the samples gives U' = n1 n2 - U and the same p.
  auto swapped = mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  CHECK(swapped.u == 25);
  CHECK(swapped.p_value == Approx(r.p_value));

  // Interleaved samples: nothing to see.
  r = mann_whitney_u({1, 3, 5, 7}, {2, 4, 6, 8});
  CHECK(r.p_value > 0.5);

  // Ties share mid-ranks: identical samples give U = n1 n2 / 2 and p = 1.
  r = mann_whitney_u({2, 2, 2}, {2, 2, 2});
  CHECK(r.u == Approx(4.5));
  CHECK(r.p_value == Approx(1.0));
}

TEST_CASE("significance: large samples use the normal approximation", "[significance]") {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(100 + i % 7);
    b.push_back(103 + i % 7);
  }
  const auto r = mann_whitney_u(a, b);
  CHECK_FALSE(r.exact);
  CHECK(r.p_value < 0.01);
  const auto same = mann_whitney_u(a, a);
  CHECK(same.p_value > 0.9);
  CHECK(mann_whitney_u({}, {1.0}).p_value == 1.0);
}
