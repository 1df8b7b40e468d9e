#pragma once
// When to stop repeating a cell (a case on a build) before its planned runs are done: once its runs have
// spent the cell's time budget (warm-ups count), or when it failed in every run of its first round; and,
// with a precision target, when to stop adding rounds past them (run/precision).
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "results/record.hpp"

namespace gilhost {

// What a cell's runs so far came to.
struct CellTally {
  double spent_s = 0;    // every run's whole time, warm-ups included
  int measured = 0;      // measured runs done
  int failed = 0;        // runs (warm-ups included) that did not end ok
  int runs = 0;          // runs done
  std::vector<double> ok_wall_s;  // the measured runs that ended ok: their wall times (s)
};

// Why the cell's remaining runs are not run, or "" to go on; `planned`: its measured runs planned. The
// budget never stops a cell before its first measured run. Its text begins "budget: ".
std::string budget_spent(const CellTally& t, int planned, double budget_s);
std::string failed_first_round(const CellTally& t);

// The tallies of a session's cells, and the reason each stopped.
class CellStops {
 public:
  // `target`: the precision target (0: none), which gives a cell rounds past its planned ones.
  CellStops(double budget_s, bool repeat_failures, double target = 0)
      : budget_s_(budget_s), repeat_failures_(repeat_failures), target_(target) {}
  // Counts `r`, and returns why its cell stops now ("" if it goes on), given `planned` measured runs.
  std::string after(const RunRecord& r, int planned);
  double target() const { return target_; }
  // A cell that has run and has not stopped: with a target, one short of it that gets another round.
  bool wants_more(const std::string& case_name, const std::string& build) const;
  // Whether to skip the cell's next run: the cell stopped, or a warm-up once the budget is spent (the
  // first measured run still runs).
  bool skip(const std::string& case_name, const std::string& build, bool warmup) const;

 private:
  double budget_s_;
  bool repeat_failures_;
  double target_;
  std::map<std::pair<std::string, std::string>, CellTally> tallies_;
  std::set<std::pair<std::string, std::string>> stopped_;
  bool over_budget(const CellTally& t) const { return budget_s_ > 0 && t.spent_s >= budget_s_; }
};

}  // namespace gilhost
