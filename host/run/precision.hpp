#pragma once
// The precision target (issue 24): once a cell has had its `repeat` measured runs, it gets another round
// until its median is known to within the target (the half-width of the median's 95 % interval over the
// median, report/interval), its time budget is spent, or it has had kMaxPrecisionRounds runs. The rounds
// added stay interleaved across builds: each holds every cell still short of the target, in plan order.
#include <string>
#include <vector>

#include "run/cell_stop.hpp"
#include "run/plan.hpp"

namespace gilhost {

// The most measured runs a cell gets for a target (more when `repeat` asks for more): a cell whose spread
// never narrows must not run for ever when it has no time budget.
constexpr int kMaxPrecisionRounds = 50;

// The fewest ok runs whose median has a 95 % interval (6): below that no target is met.
int runs_for_an_interval();

// Why the cell stops now that it has had its `planned` measured runs ("" to give it another round):
// "target: ..." (met), "budget: ..." (its time budget spent short of it), "rounds: ..." (the cap).
std::string precision_stop(const CellTally& t, int planned, double target, double budget_s);

// The runs of round `round` (0-based over warm-up and measured rounds) for the cells `stops` has not
// stopped, in the plan's order; none without a target, or once every cell has stopped.
std::vector<PlannedRun> precision_round(const Plan& plan, const CellStops& stops, int round, int warmup, int repeat);

}  // namespace gilhost
