#pragma once
// Whether two samples of timings differ beyond what chance gives: the Mann-Whitney U test (rank-sum), as
// asv compares benchmark runs. No normality assumed, robust to the odd slow run. Exact (every split of
// the pooled runs, ties handled by mid-ranks) up to a few hundred thousand splits; the normal
// approximation with tie correction above that.
#include <cstddef>
#include <vector>

namespace gilhost {

struct MannWhitney {
  double u = 0;          // U of the first sample: how often one of its values beats one of the second's
  double p_value = 1;    // two-sided
  bool exact = false;    // p from the full permutation distribution
  // The smallest two-sided p these sample sizes can give at all (exact tests only): with 3 runs a side
  // it is 0.1, so no difference can be significant at 0.05 there, however large.
  double smallest_p = 0;
};

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// The threshold gilhost uses, and the fewest runs per side that can reach it (4: smallest p 0.029).
constexpr double kSignificanceLevel = 0.05;

// The smallest two-sided p an exact test of n1 against n2 distinct values can give: 2 / C(n1 + n2, n1)
// (1 when a side is empty). Ties can only raise it.
double smallest_p_value(std::size_t n1, std::size_t n2);

// The fewest runs a side (both sides alike) whose smallest p is below alpha: 4 for 0.05, 5 for 0.01.
int runs_needed_per_side(double alpha);

}  // namespace gilhost
