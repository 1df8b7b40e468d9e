#pragma once
// The metrics scripts report (gilhost.metric, and the numbers [case.extract] reads from their stdout):
// one row per case and metric, builds across, each cell the median of its measured ok runs ± MAD.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/stats.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

namespace gilhost {

// A metric's value as a number (tagged NaN and infinities decoded; true/false as 1/0), if it is one.
std::optional<double> metric_number(const nlohmann::json& value);

// The numbers of metric `name` over `runs`' measured ok runs: infinities kept, NaN left out.
std::vector<double> metric_values(const std::vector<RunRecord>& runs, const std::string& name);

// The metrics table's cell: format_metric of metric_values, "nan" when every value is NaN.
std::string metric_cell(const std::vector<RunRecord>& runs, const std::string& name);

// Every metric name `runs` report, in first-seen order.
std::vector<std::string> metric_names(const std::vector<RunRecord>& runs);

// A script's figure as reports name it: a timer it kept itself (a name with "wall" or "elapsed") is
// labelled "wall_s (the script's own timer)", so no reader takes it for the host's case time.
std::string figure_label(const std::string& key);

// "1.52 ±3.1%", "1.5" for one run, "inf" (no spread) for an infinite median, "-" for none.
std::string format_metric(const Stats& s);

// Rows (case, metric), a column per build: a case's [case.extract] names first (one that
// never matched shows as "-"), then what its runs report besides; empty when there is none. A timer the
// script kept of the call (wall_s) within 10 % of the case time in every cell is left out: the grid has it.
Table build_metrics_table(const Summary& sum, const ExperimentInfo& ex);

// Where each extracted metric came from: "pyfunction: stdout, '^pyfunction\s+([0-9.]+)x'", one per
// (metric, regex), for the lines under the table.
std::vector<std::string> extract_sources(const ExperimentInfo& ex);

}  // namespace gilhost
