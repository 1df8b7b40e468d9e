#include "run/cell_stop.hpp"

#include <fmt/format.h>

#include "run/precision.hpp"

namespace gilhost {

std::string budget_spent(const CellTally& t, int planned, double budget_s) {
  if (budget_s <= 0 || t.measured < 1 || t.measured >= planned || t.spent_s < budget_s) return "";
  return fmt::format("budget: {} of {} runs: the cell's time budget of {:g} s was spent ({:.1f} s; --max-cell-time)",
                     t.measured, planned, budget_s, t.spent_s);
}

std::string failed_first_round(const CellTally& t) {
  if (t.measured < 1 || t.failed < t.runs) return "";
  return "not repeated: failed in every run of the first round (--repeat-failures to repeat)";
}

std::string CellStops::after(const RunRecord& r, int planned) {
  const auto key = std::make_pair(r.case_name, r.interpreter);
  CellTally& t = tallies_[key];
  t.spent_s += static_cast<double>(r.parent_wall_ns) / 1e9;
  ++t.runs;
  if (!r.warmup) ++t.measured;
  if (!r.is_ok()) ++t.failed;
  if (!r.warmup && r.is_ok()) t.ok_wall_s.push_back(static_cast<double>(r.wall_ns) / 1e9);
  if (t.measured >= planned && target_ <= 0) return "";
  std::string why = repeat_failures_ ? "" : failed_first_round(t);
  if (why.empty() && t.measured >= planned) why = precision_stop(t, planned, target_, budget_s_);
  else if (why.empty()) why = budget_spent(t, planned, budget_s_);
  if (!why.empty()) stopped_.insert(key);
  return why;
}

bool CellStops::wants_more(const std::string& case_name, const std::string& build) const {
  const auto key = std::make_pair(case_name, build);
  return tallies_.count(key) > 0 && stopped_.count(key) == 0;
}

bool CellStops::skip(const std::string& case_name, const std::string& build, bool warmup) const {
  const auto key = std::make_pair(case_name, build);
  if (stopped_.count(key) > 0) return true;
  const auto t = tallies_.find(key);
  return warmup && t != tallies_.end() && over_budget(t->second);
}

}  // namespace gilhost
