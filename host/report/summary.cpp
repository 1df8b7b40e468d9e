#include "report/summary.hpp"

#include "report/failures.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "config/expect.hpp"
#include "report/ratio.hpp"
#include "util/tagged_number.hpp"
#include "util/strings.hpp"

namespace gilhost {

const Cell* Summary::cell(const std::string& c, const std::string& i) const {
  auto it = cells.find({c, i});
  return it == cells.end() ? nullptr : &it->second;
}

namespace {

// A list as a reader takes it in: "8 values, all 799998", "8 values, 799990–799998" for numbers, else
// "8 values" (the JSON keeps them all).
std::string list_summary(const nlohmann::json& list) {
  std::string count = std::to_string(list.size()) + (list.size() == 1 ? " value" : " values");
  if (list.empty()) return "no values";
  if (list.size() == 1) return list.front().is_string() ? list.front().get<std::string>() : display_json(list.front());
  if (std::all_of(list.begin(), list.end(), [&](const nlohmann::json& x) { return x == list.front(); }))
    return count + ", all " + (list.front().is_string() ? list.front().get<std::string>() : display_json(list.front()));
  if (std::all_of(list.begin(), list.end(), [](const nlohmann::json& x) { return x.is_number(); })) {
    const auto [lo, hi] = std::minmax_element(list.begin(), list.end(),
                                              [](const auto& a, const auto& b) { return a.template get<double>() < b.template get<double>(); });
    return count + ", " + display_json(*lo) + "–" + display_json(*hi);
  }
  return count;
}

}  // namespace

std::string result_display(const nlohmann::json& v, std::size_t width) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "-" : v.is_array() ? list_summary(v) : display_json(v);
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
    s = buf;
  }
  if (display_width(s) > width) {
    // Keep width - 1 characters (not bytes: never cut inside a UTF-8 sequence), then the ellipsis.
    std::size_t end = 0, kept = 0;
    while (end < s.size() && (kept < width - 1 || (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80)) {
      if ((static_cast<unsigned char>(s[end]) & 0xC0) != 0x80) ++kept;
      ++end;
    }
    s = s.substr(0, end) + "…";
  }
  return s;
}

std::string gil_text(const Cell& cell) {
  if (!cell.gil_enabled.has_value()) return "-";
  if (!*cell.gil_enabled) return "off";
  if (!cell.free_threaded) return "on";
  if (cell.gil_forced) return "on (forced)";
  if (!cell.gil_reenabled_by.empty()) return "GIL re-enabled by " + join(cell.gil_reenabled_by, ", ");
  return "ON (re-enabled)";
}

namespace {

nlohmann::json shown_value(const RunRecord& run, const std::string& show) {
  if (!run.has_result) return nullptr;
  const nlohmann::json& result = run.result;
  if (show.empty()) return result;
  nlohmann::json out;
  if (lookup_key(result, show, out)) return out;
  if (result.is_array()) {
    // Subinterpreter cases return one result per interpreter: show the key of each.
    out = nlohmann::json::array();
    for (const auto& item : result) {
      nlohmann::json v;
      lookup_key(item, show, v);
      out.push_back(v);
    }
  }
  return out;
}

}  // namespace

std::optional<double> result_number(const RunRecord& run, const std::string& dotted) {
  nlohmann::json v;
  if (!run.has_result || !lookup_key(run.result, dotted, v)) return std::nullopt;
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

namespace {

std::string describe_results(const std::vector<nlohmann::json>& values, bool any_error, const std::string& error_type) {
  if (values.empty()) return any_error ? (error_type.empty() ? "error" : error_type) : "-";
  bool all_same = std::all_of(values.begin(), values.end(), [&](const nlohmann::json& v) { return v == values[0]; });
  if (all_same) return result_display(values[0]);
  bool numeric = std::all_of(values.begin(), values.end(), [](const nlohmann::json& v) { return v.is_number(); });
  if (numeric) {
    std::vector<double> xs;
    for (const auto& v : values) xs.push_back(v.get<double>());
    auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    // Whole numbers print as integers (counters), others with four significant digits.
    auto fmt = [](double x) {
      const bool whole = std::fabs(x) < 9.0e15 && std::floor(x) == x;
      return result_display(whole ? nlohmann::json(static_cast<long long>(x)) : nlohmann::json(x));
    };
    return fmt(*lo) + "–" + fmt(*hi);
  }
  return result_display(values[0], 18) + " (varies)";
}

// "t=0.02, n=5": the params of `p` whose values are not the same in every one of `sets`.
std::string differing_params(const nlohmann::json& p, const std::vector<nlohmann::json>& sets) {
  std::vector<std::string> parts;
  if (!p.is_object()) return display_json(p);
  for (const auto& [k, v] : p.items()) {
    const bool same = std::all_of(sets.begin(), sets.end(), [&, &key = k, &value = v](const nlohmann::json& other) {
      return other.is_object() && other.contains(key) && other[key] == value;
    });
    if (!same) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : display_json(v)));
  }
  return parts.empty() ? display_json(p) : join(parts, ", ");
}

}  // namespace

std::vector<RunRecord> distinguish_params(std::vector<RunRecord> runs) {
  // (experiment, case) -> its param sets, first seen first
  std::map<std::pair<std::string, std::string>, std::vector<nlohmann::json>> sets;
  for (const auto& r : runs) {
    auto& seen = sets[{r.experiment, r.case_name}];
    if (std::find(seen.begin(), seen.end(), r.params) == seen.end()) seen.push_back(r.params);
  }
  for (auto& r : runs)
    if (const auto& seen = sets[{r.experiment, r.case_name}]; seen.size() > 1)
      r.case_name += " (" + differing_params(r.params, seen) + ")";
  return runs;
}

std::vector<std::string> leftover_notes(const Summary& s) {
  std::vector<std::string> out;
  for (const auto& c : s.cases)
    for (const auto& i : s.interpreters)
      if (const Cell* cell = s.cell(c, i); cell && cell->leftover_processes > 0)
        out.push_back(c + " @ " + i + ": " + std::to_string(cell->leftover_processes) + " leftover process" +
                      (cell->leftover_processes == 1 ? "" : "es") + " in " + std::to_string(cell->runs_with_leftovers) +
                      " of " + std::to_string(cell->runs.size()) +
                      " runs outlived their run and were killed (orphans the case left running)");
  return out;
}

std::string runs_text(std::size_t n) { return "n=" + std::to_string(n); }

std::string wall_cell_text(const Cell& cell) {
  // Every run failed before its case started (the failures say why): no time, not even the runner's.
  const bool none_started = !cell.runs.empty() && std::all_of(cell.runs.begin(), cell.runs.end(), case_never_started);
  if (cell.wall.n == 0) return none_started ? "did not run" : "-";
  return seconds_figure(cell.wall) + " " + runs_text(cell.wall.n) + (cell.stability.unstable() ? " !" : "");
}

std::vector<std::string> unstable_notes(const Summary& s) {
  std::vector<std::string> out;
  for (const auto& c : s.cases)
    for (const auto& i : s.interpreters)
      if (const Cell* cell = s.cell(c, i); cell && cell->stability.unstable())
        out.push_back(c + " @ " + i + " !: " + cell->stability.why);
  return out;
}

namespace {

// The runs as cells of case x build, cases and builds in the order they first ran (warm-ups kept out of
// the cells); returns each case's name in the table -> as the file names it.
std::map<std::string, std::string> group_cells(const std::vector<RunRecord>& all_runs, Summary& s) {
  // Runs of one case with different params are cells of their own, never pooled.
  const std::vector<RunRecord> runs = distinguish_params(all_runs);
  std::map<std::string, std::string> written_as;
  for (std::size_t n = 0; n < runs.size(); ++n) written_as[runs[n].case_name] = all_runs[n].case_name;
  std::set<std::string> seen_cases, seen_interps;
  for (const auto& r : runs) {
    if (s.experiment.empty()) s.experiment = r.experiment;
    const std::string& c = r.case_name;
    const std::string& i = r.interpreter;
    if (seen_cases.insert(c).second) s.cases.push_back(c);
    if (seen_interps.insert(i).second) s.interpreters.push_back(i);
    Cell& cell = s.cells[{c, i}];
    cell.case_name = c;
    cell.interpreter = i;
    cell.free_threaded = r.free_threaded;
    cell.mode = r.mode;
    if (!r.warmup) cell.runs.push_back(r);
  }
  return written_as;
}

// What one cell's runs hold, before any statistic: the series the statistics are taken of.
struct CellSeries {
  std::vector<double> wall, cpw, init, vol, invol;
  std::vector<nlohmann::json> values;
  std::map<std::string, int> status_count;
  std::string error_type;
  bool any_error = false;
};

// Peaks, GIL state, errors and failed expectations of one run into its cell; its figures into `series`.
void add_run(Cell& cell, const RunRecord& r, const std::string& show_key, CellSeries& series) {
  ++series.status_count[status_name(r.status)];
  // A case that never started (a subinterpreter that could not be created, a script that did not compile)
  // has no wall time to show: the runner timed nothing.
  if (r.is_ok() || (r.status == RunStatus::error && !case_never_started(r))) {
    series.wall.push_back(static_cast<double>(r.wall_ns) / 1e9);
    series.cpw.push_back(r.cpu_per_wall);
  }
  series.init.push_back(static_cast<double>(r.init_ns) / 1e9);
  const CaseCpu cpu = r.cpu.value_or(CaseCpu{});
  series.vol.push_back(static_cast<double>(cpu.voluntary_switches));
  series.invol.push_back(static_cast<double>(cpu.involuntary_switches));
  if (r.rss) {
    cell.peak_tree_rss_bytes = std::max(cell.peak_tree_rss_bytes, static_cast<double>(r.rss->peak_tree_rss_bytes));
    cell.peak_threads = std::max(cell.peak_threads, r.rss->peak_threads);
    cell.peak_processes = std::max(cell.peak_processes, r.rss->peak_processes);
  }
  cell.max_rss_bytes = std::max(cell.max_rss_bytes, static_cast<double>(r.max_rss_kb) * 1024.0);
  cell.leftover_processes += r.leftover_processes;
  cell.runs_with_leftovers += r.leftover_processes > 0;
  if (r.gil_enabled) cell.gil_enabled = cell.gil_enabled.has_value() ? (*cell.gil_enabled && *r.gil_enabled) : *r.gil_enabled;
  cell.gil_forced |= r.gil_forced;
  for (const auto& name : r.gil_reenabled_by) add_unique(cell.gil_reenabled_by, name);
  if (r.has_result) series.values.push_back(shown_value(r, show_key));
  if (r.error || !r.is_ok()) {
    series.any_error = true;
    series.error_type = r.error ? r.error->type : status_name(r.status);
  }
  if (!r.expect_ok) {
    ++cell.runs_failed_expectations;
    for (const auto& chk : r.expect)
      if (!chk.ok) add_unique(cell.failures, chk.expect + ": " + chk.detail);
  }
}

// A cell's statistics, each with its n and interval, from its measured runs.
void fill_cell(Cell& cell, const std::string& show_key, const ExperimentInfo& experiment) {
  CellSeries series;
  for (const auto& r : cell.runs) add_run(cell, r, show_key, series);
  cell.wall_s = compute_stats(series.wall);
  cell.wall = median_estimate(series.wall);
  cell.cpu_wall = median_estimate(series.cpw);
  cell.stability = assess_stability(cell.runs);
  cell.precision = cell_precision(cell.wall, cell.runs, experiment);
  cell.cpu_per_wall = compute_stats(series.cpw);
  cell.init_s = compute_stats(series.init);
  cell.voluntary_switches = compute_stats(series.vol);
  cell.involuntary_switches = compute_stats(series.invol);
  cell.threads = thread_shares(cell.runs);
  cell.result_text = describe_results(series.values, series.any_error, series.error_type);
  std::vector<std::string> parts;
  for (const auto& [st, n] : series.status_count)
    parts.push_back(series.status_count.size() == 1 ? st : st + " x" + std::to_string(n));
  cell.statuses = join(parts, ", ");
}

// Each cell's wall time over the baseline case's on the same build, paired by round.
void add_baseline_ratios(Summary& s, const std::string& baseline) {
  // The baseline may be named by its base name when it was swept: take the first expansion.
  std::string base_case;
  for (const auto& c : s.cases)
    if (c == baseline || (base_case.empty() && (starts_with(c, baseline + '[') || starts_with(c, baseline + " (")))) base_case = c;
  for (auto& [key, cell] : s.cells) {
    const Cell* b = s.cell(base_case, cell.interpreter);
    if (!b || base_case.empty()) continue;
    cell.baseline_case = cell.case_name == base_case;
    const auto ratios = paired_wall_ratios(cell.runs, b->runs);
    if (ratios.empty()) continue;
    cell.ratio = compute_stats(ratios);
    std::vector<std::pair<double, double>> pairs;
    for (double r : ratios) pairs.emplace_back(r, 1.0);
    cell.ratio_estimate = paired_ratio_estimate(pairs);
  }
}

}  // namespace

Summary summarize(const std::vector<RunRecord>& all_runs, const std::vector<SkipRecord>& skips, const std::string& baseline,
                  const std::map<std::string, std::string>& show, const ExperimentInfo& experiment) {
  Summary s;
  s.baseline = baseline;
  s.skips = skips;
  std::map<std::string, std::string> written_as = group_cells(all_runs, s);
  for (auto& [key, cell] : s.cells) {
    auto show_it = show.find(written_as[cell.case_name]);
    fill_cell(cell, show_it == show.end() ? "" : show_it->second, experiment);
    if (!cell.expectations_ok()) ++s.expectation_failures;
  }
  if (!baseline.empty()) add_baseline_ratios(s, baseline);
  return s;
}

}  // namespace gilhost
