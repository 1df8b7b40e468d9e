#include "run/precision.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/precision.hpp"
#include "report/interval.hpp"

namespace gilhost {

int runs_for_an_interval() {
  std::size_t n = 1;
  while (n < 1000 && median_interval_rank(n).second < 0.95 - 1e-9) ++n;
  return static_cast<int>(n);
}

namespace {

int round_cap(int planned) { return std::max(kMaxPrecisionRounds, planned); }

// "±4.2 % after 9 runs", or why there is no figure yet.
std::string achieved_text(const CellTally& t, const std::optional<double>& achieved) {
  if (achieved) return fmt::format("{} after {} runs", precision_text(*achieved), t.measured);
  return fmt::format("no 95 % interval after {} runs ({} of them ok; {} needed)", t.measured, t.ok_wall_s.size(),
                     runs_for_an_interval());
}

}  // namespace

std::string precision_stop(const CellTally& t, int planned, double target, double budget_s) {
  const std::optional<double> achieved = median_estimate(t.ok_wall_s).relative_precision();
  if (achieved && *achieved <= target)
    return fmt::format("target: {} reached after {} runs (target {})", precision_text(*achieved), t.measured,
                       precision_text(target));
  const std::string short_of = achieved_text(t, achieved) + ", short of the " + precision_text(target) + " target";
  if (budget_s > 0 && t.spent_s >= budget_s)
    return fmt::format("budget: {}: the cell's time budget of {:g} s was spent ({:.1f} s; --max-cell-time)", short_of,
                       budget_s, t.spent_s);
  if (t.measured >= round_cap(planned))
    return fmt::format("rounds: {}: a target gets a cell at most {} runs", short_of, round_cap(planned));
  return "";
}

std::vector<PlannedRun> precision_round(const Plan& plan, const CellStops& stops, int round, int warmup, int repeat) {
  std::vector<PlannedRun> runs;
  if (stops.target() <= 0 || plan.runs.empty() || round - warmup >= round_cap(repeat)) return runs;
  const int first = plan.runs.front().round;  // every cell has a run in each planned round
  for (const PlannedRun& p : plan.runs) {
    if (p.round != first || !stops.wants_more(p.c->name, p.interp->label)) continue;
    PlannedRun more = p;
    more.round = round;
    more.warmup = false;
    more.repeat = round - warmup;
    runs.push_back(more);
  }
  return runs;
}

}  // namespace gilhost
