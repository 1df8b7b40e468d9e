#pragma once
// The scaling view: a case swept over a count (workers, threads, loops, subinterpreters: any integer sweep
// key), per build, the speedup of each N over the smallest N on the same build and the efficiency against
// the cores the machine has. Built once here; the renderers only emit it.
#include <optional>
#include <string>
#include <vector>

#include "report/ratio.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "results/record.hpp"

namespace gilhost {

struct ScalingPoint {
  std::int64_t n = 0;
  std::string case_name;  // the expanded case: "threads[workers=4]"
  RatioStat speedup;      // wall(smallest N) / wall(N), paired by round; invalid where either is missing
  double ideal = 0;       // min(N, cores) / min(N0, cores): linear up to the cores, flat after
  std::optional<double> efficiency;  // speedup / ideal
};

struct ScalingLine {
  std::string build;
  std::vector<ScalingPoint> points;  // one per N, ascending
};

struct Scaling {
  std::string base_case;  // "threads"
  std::string key;        // the swept count: "workers"
  std::string fixed;      // the other sweep values of the group: "size=10" ("" for none)
  std::vector<std::int64_t> counts;  // ascending
  int cores = 0;                     // of the section's machine; 0: unknown (ideal = N / N0)
  std::vector<ScalingLine> lines;    // one per build that has the smallest N measured
  Table table;                       // builds down, N across: "1.85x · 93%"

  std::string title() const { return base_case + " over " + key + (fixed.empty() ? "" : " (" + fixed + ")"); }
};

// How the numbers are computed, one line: "speedup = wall at workers=1 / wall at N ... efficiency ...".
std::string scaling_caption(const Scaling& scaling);

// Every (case, integer sweep key, other sweep values) group with at least two counts; `cores` from the meta.
std::vector<Scaling> build_scaling(const Summary& summary, const std::vector<CaseInfo>& cases, int cores);

}  // namespace gilhost
