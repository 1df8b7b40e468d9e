#include "report/metrics.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/strings.hpp"
#include "util/tagged_number.hpp"

namespace gilhost {

std::optional<double> metric_number(const nlohmann::json& value) {
  const nlohmann::json v = decode_tagged_number(value);
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

namespace {

// Metric `name` as each measured ok run recorded it.
std::vector<nlohmann::json> metric_raw(const std::vector<RunRecord>& runs, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& r : runs) {
    if (r.warmup || !r.is_ok() || !r.metrics.is_object()) continue;
    if (auto it = r.metrics.find(name); it != r.metrics.end()) out.push_back(*it);
  }
  return out;
}

}  // namespace

std::vector<double> metric_values(const std::vector<RunRecord>& runs, const std::string& name) {
  std::vector<double> out;
  // NaN has no place in an order (a median); infinities do: 1, 2, inf has the median 2.
  for (const auto& raw : metric_raw(runs, name))
    if (auto x = metric_number(raw); x && !std::isnan(*x)) out.push_back(*x);
  return out;
}

std::string metric_cell(const std::vector<RunRecord>& runs, const std::string& name) {
  // The same nan, inf or big integer in every run is shown as written (1.0e400 is no double).
  const std::vector<nlohmann::json> raw = metric_raw(runs, name);
  if (!raw.empty() && tagged_number_text(raw.front()) &&
      std::all_of(raw.begin(), raw.end(), [&](const nlohmann::json& v) { return v == raw.front(); }))
    return display_json(raw.front());
  return format_metric(compute_stats(metric_values(runs, name)));
}

std::vector<std::string> metric_names(const std::vector<RunRecord>& runs) {
  std::vector<std::string> names;
  for (const auto& r : runs)
    if (r.metrics.is_object())
      for (const auto& [k, v] : r.metrics.items()) add_unique(names, k);
  return names;
}

std::string figure_label(const std::string& key) {
  const bool timer = key.find("wall") != std::string::npos || key.find("elapsed") != std::string::npos;
  return timer ? key + " (the script's own timer)" : key;
}

std::string format_metric(const Stats& s) {
  if (s.n == 0) return "-";
  std::string out = fmt::format("{:.6g}", s.median);
  // An infinite value has no relative spread: "inf", or the finite median alone.
  if (s.n > 1 && std::isfinite(s.median) && std::isfinite(s.mad)) out += fmt::format(" ±{:.1f}%", 100 * std::abs(s.relative_spread()));
  return out;
}

namespace {

// A timer the script kept of the call itself (cpu_bound's wall_s) repeats the case time the grid shows:
// true where its median is within 10 % of the cell's median case time in every cell that has both.
bool repeats_case_time(const Summary& sum, const std::string& case_name, const std::string& name) {
  if (figure_label(name) == name) return false;  // not a timer
  bool compared = false;
  for (const auto& i : sum.interpreters) {
    const Cell* cell = sum.cell(case_name, i);
    if (!cell || cell->wall_s.n == 0) continue;
    const Stats m = compute_stats(metric_values(cell->runs, name));
    if (m.n == 0) continue;
    if (std::abs(m.median - cell->wall_s.median) > 0.1 * cell->wall_s.median) return false;
    compared = true;
  }
  return compared;
}

}  // namespace

Table build_metrics_table(const Summary& sum, const ExperimentInfo& ex) {
  Table t;
  t.columns.emplace_back("case");
  t.columns.emplace_back("metric");
  for (const auto& i : sum.interpreters) t.columns.emplace_back(i, Align::right);
  for (const auto& c : sum.cases) {
    std::vector<RunRecord> runs;
    for (const auto& i : sum.interpreters)
      if (const Cell* cell = sum.cell(c, i)) runs.insert(runs.end(), cell->runs.begin(), cell->runs.end());
    std::vector<std::string> names;
    for (const auto& info : ex.cases)
      if (info.name == c)
        for (const auto& [name, regex] : info.extract) add_unique(names, name);
    for (const auto& name : metric_names(runs)) add_unique(names, name);
    for (const auto& name : names) {
      if (repeats_case_time(sum, c, name)) continue;  // the grid has it
      std::vector<std::string> row{c, figure_label(name)};
      for (const auto& i : sum.interpreters) {
        const Cell* cell = sum.cell(c, i);
        row.push_back(cell ? metric_cell(cell->runs, name) : "skipped");
      }
      t.add_row(row);
    }
  }
  return t;
}

std::vector<std::string> extract_sources(const ExperimentInfo& ex) {
  std::vector<std::string> out;
  for (const auto& c : ex.cases)
    for (const auto& [name, regex] : c.extract) add_unique(out, name + ": the first line of stdout matching '" + regex + "'");
  return out;
}

}  // namespace gilhost
