#pragma once
// Whether two samples of timings differ beyond what chance gives: the Mann-Whitney U test (rank-sum), as
// asv compares benchmark runs. No normality assumed, robust to the odd slow run. Exact (every split of
// the pooled runs, ties handled by mid-ranks) up to a few hundred thousand splits; the normal
// approximation with tie correction above that.
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

}  // namespace gilhost
