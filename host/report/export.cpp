#include "report/export.hpp"

#include <fmt/format.h>

#include <functional>
#include <type_traits>
#include <utility>

#include "report/metrics.hpp"
#include "results/record_json.hpp"
#include "util/strings.hpp"

namespace gilhost {

using nlohmann::json;

namespace {

// A figure's n and interval: "ci95": [lo, hi], null where there is no 95 % interval; then "ci" gives the
// interval there is with the level it reaches (n = 3: the range, 0.75), null for one run.
void add_interval(json& j, const Estimate& e) {
  j["n"] = e.n;
  j["ci95"] = e.interval && e.interval->at_95() ? json::array({e.interval->lo, e.interval->hi}) : json();
  if (e.interval && !e.interval->at_95()) j["ci"] = {{"lo", e.interval->lo}, {"hi", e.interval->hi}, {"level", e.interval->level}};
  else if (!e.interval) j["ci"] = nullptr;
}

json estimate_json(const Estimate& e) {
  json j = {{"value", e.point}};
  add_interval(j, e);
  return j;
}

json stats_json(const Stats& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}, {"mean", s.mean}, {"stdev", s.stdev}};
}

// Stats with the median's interval (median_estimate of the same values).
json stats_json(const Stats& s, const Estimate& median) {
  json j = stats_json(s);
  if (!j.is_null()) add_interval(j, median);
  return j;
}

json stability_json(const Stability& st) {
  return {{"unstable", st.unstable()}, {"wide_spread", st.wide}, {"spread", st.spread}, {"outlier_runs", st.outlier_runs},
          {"two_modes", st.two_modes}, {"load_avg", st.load_avg ? json(*st.load_avg) : json()},
          {"why", st.why.empty() ? json() : json(st.why)}};
}

json precision_json(const CellPrecision& p) {
  return {{"target", p.target ? json(*p.target) : json()}, {"achieved", p.achieved ? json(*p.achieved) : json()},
          {"stopped_by", p.stopped_by}};
}

json build_json(const BuildInfo& b) {
  return {{"label", b.label}, {"original_label", b.original_label.value_or(b.label)}, {"host", b.host}, {"version", b.version},
          {"free_threaded", b.free_threaded}, {"gil_forced", b.gil_forced}, {"mode", b.mode}, {"compiler", b.compiler}, {"source", b.source},
          {"executable", b.executable}, {"libpython", b.libpython}, {"build_flags", b.build_flags}};
}

// Where the cell's Python threads' time went: each state's median share, null without thread states.
json thread_shares_json(const std::optional<ThreadShares>& shares) {
  if (!shares) return nullptr;
  json median = json::object();
  for (ThreadState st : kThreadStates) median[thread_state_name(st)] = shares->share(st);
  json gil = shares->gil_wait_estimate ? estimate_json(*shares->gil_wait_estimate) : json();
  return {{"runs", shares->runs}, {"gil_told_apart", shares->gil_told_apart()}, {"no_gil", shares->no_gil},
          {"python_threads", shares->python_threads}, {"median_share", median}, {"gil_wait", gil},
          {"gil_wait_unknown_why", shares->gil_unknown_why.empty() ? json() : json(shares->gil_unknown_why)},
          {"coverage", shares->coverage ? json(*shares->coverage) : json()}};
}

// The ratio to the baseline case: the paired ratios' stats, with the Hodges-Lehmann ratio and its interval.
json ratio_case_json(const Stats& ratios, const Estimate& e) {
  json j = stats_json(ratios);
  j["estimate"] = e.point;
  add_interval(j, e);
  j["direction"] = direction_name(ratio_direction(e));
  return j;
}

json cell_json(const Section& s, const Cell& cell) {
  json j = {{"case", cell.case_name},
            {"interpreter", cell.interpreter},
            {"runs", cell.runs.size()},
            {"wall_s", stats_json(cell.wall_s, cell.wall)},
            {"cpu_per_wall", stats_json(cell.cpu_per_wall, cell.cpu_wall)},
            {"init_s", stats_json(cell.init_s)},
            {"peak_tree_rss_bytes", cell.peak_tree_rss_bytes},
            {"max_rss_bytes", cell.max_rss_bytes},
            {"peak_threads", cell.peak_threads},
            {"peak_processes", cell.peak_processes},
            {"voluntary_switches", stats_json(cell.voluntary_switches)},
            {"involuntary_switches", stats_json(cell.involuntary_switches)},
            {"statuses", cell.statuses},
            {"result", cell.result_text},
            {"expectations_ok", cell.expectations_ok()},
            {"runs_failed_expectations", cell.runs_failed_expectations},
            {"failures", cell.failures},
            {"ratio_to_baseline_case", cell.ratio && cell.ratio_estimate ? ratio_case_json(*cell.ratio, *cell.ratio_estimate) : json()},
            {"gil_enabled", cell.gil_enabled ? json(*cell.gil_enabled) : json()},
            {"gil_forced", cell.gil_forced},
            {"gil_reenabled_by", cell.gil_reenabled_by},
            {"free_threaded", cell.free_threaded},
            {"mode", cell.mode},
            {"gil_wait_share", cell.threads && cell.threads->gil_wait ? json(*cell.threads->gil_wait) : json()},
            {"thread_states", thread_shares_json(cell.threads)},
            {"stability", stability_json(cell.stability)},
            {"precision", precision_json(cell.precision)}};
  // The scripts' metrics (gilhost.metric, [case.extract]) over the cell's ok runs.
  json metrics = json::object();
  for (const auto& name : metric_names(cell.runs)) {
    const auto values = metric_values(cell.runs, name);
    metrics[name] = stats_json(compute_stats(values), median_estimate(values));
  }
  j["metrics"] = metrics;
  if (!s.baseline_python.empty()) {
    const auto ratio = s.vs_baseline.find({cell.case_name, cell.interpreter});
    const auto base = s.baseline_of.find(cell.interpreter);
    j.update({{"vs_baseline_python", ratio == s.vs_baseline.end() ? json() : to_json(ratio->second)},
              {"baseline_build", base == s.baseline_of.end() ? json() : json(base->second)}});
  }
  return j;
}

json scaling_json(const Scaling& sc) {
  json lines = json::array();
  for (const auto& line : sc.lines) {
    json points = json::array();
    for (const auto& p : line.points)
      points.push_back({{"n", p.n}, {"case", p.case_name}, {"speedup", to_json(p.speedup)}, {"ideal", p.ideal},
                        {"efficiency", p.efficiency ? json(*p.efficiency) : json()}});
    lines.push_back({{"build", line.build}, {"points", points}});
  }
  return {{"case", sc.base_case}, {"key", sc.key}, {"fixed", sc.fixed}, {"counts", sc.counts},
          {"cores", sc.cores > 0 ? json(sc.cores) : json()}, {"builds", lines}};
}

json headline_json(const Headline& h) {
  json values = json::array();
  for (const auto& v : h.values) {
    json value = {{"build", v.build}, {"value", v.value ? json(*v.value) : json()}, {"text", v.text}, {"supported", v.supported}};
    if (v.estimate) add_interval(value, *v.estimate);
    else value.update({{"n", 0}, {"ci95", nullptr}, {"ci", nullptr}});
    values.push_back(std::move(value));
  }
  json j = view_to_json(h.spec);
  j.update({{"unit", h.unit}, {"how", h.how}, {"values", values}, {"article", h.spec.article ? json(*h.spec.article) : json()}});
  return j;
}

json section_json(const Section& s) {
  const Summary& sum = s.summary;
  json cells = json::array(), builds = json::array(), machines = json::array(), skips = json::array(), article = json::object();
  for (const auto& c : sum.cases)
    for (const auto& i : sum.interpreters)
      if (const Cell* cell = sum.cell(c, i)) cells.push_back(cell_json(s, *cell));
  for (const auto& b : s.builds) builds.push_back(build_json(b));
  for (const auto& m : s.machines) machines.push_back(to_json(m));
  for (const auto& k : sum.skips) skips.push_back(to_json(k));
  for (const auto& [name, text] : s.experiment_meta.article) article.emplace(name, text);
  json views = json::array(), scaling = json::array();
  for (const auto& h : s.headlines) views.push_back(headline_json(h));
  for (const auto& sc : s.scaling) scaling.push_back(scaling_json(sc));
  json readings = json::array();
  for (const auto& r : s.readings)
    readings.push_back({{"case", r.case_name}, {"interpreter", r.build}, {"rule", reading_rule_name(r.rule)}, {"text", r.text},
                        {"n", r.n},
                        {"ci95", r.interval && r.interval->at_95() ? json::array({r.interval->lo, r.interval->hi}) : json()},
                        {"ci", r.interval && !r.interval->at_95()
                                   ? json{{"lo", r.interval->lo}, {"hi", r.interval->hi}, {"level", r.interval->level}}
                                   : json()}});
  json ex = {{"experiment", s.experiment},
             {"description", s.description},
             {"profile", s.profile()},
             {"baseline_case", sum.baseline},
             {"sources", s.sources},
             {"machines", machines},
             {"builds", builds},
             {"cases", sum.cases},
             {"interpreters", sum.interpreters},
             {"cells", cells},
             {"skips", skips},
             {"expectation_failures", sum.expectation_failures},
             {"article", article},
             {"views", views},
             {"scaling", scaling},
             {"readings", readings},
             {"failures", failures_json(s.failed_cells)}};
  if (!s.baseline_python.empty()) ex.emplace("baseline_python", s.baseline_python);
  if (!s.notes.empty()) ex.emplace("notes", s.notes);
  ex.emplace("unstable", s.unstable);
  ex.emplace("precision_notes", s.precision_notes);
  ex.emplace("precision_target", s.experiment_meta.precision ? json(*s.experiment_meta.precision) : json());
  return ex;
}

}  // namespace

json to_json(const RatioStat& r) {
  if (!r.valid()) return nullptr;
  json j = {{"value", r.value}, {"min", r.lo}, {"max", r.hi}, {"pairs", r.pairs}, {"paired", r.paired},
            {"estimate", r.estimate.point}, {"direction", direction_name(ratio_direction(r.estimate))}};
  if (r.paired) j.emplace("mad", r.mad);
  add_interval(j, r.estimate);
  return j;
}

json summary_json(const ReportModel& model) {
  json experiments = json::array();
  for (const auto& s : model.sections) experiments.push_back(section_json(s));
  return {{"format", "gilhost-summary"}, {"version", 1}, {"files", model.files}, {"relabeled", model.relabeled},
          {"experiments", experiments}};
}

json comparison_json(const Comparison& c) {
  auto stats = [](const Stats& s) { return json{{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}}; };
  auto machines = [](const std::vector<MachineRecord>& list) {
    json out = json::array();
    for (const auto& m : list) out.push_back(to_json(m));
    return out;
  };
  auto sessions = [](const std::vector<SessionStamp>& list) {
    json out = json::array();
    for (const auto& s : list) out.push_back({{"hostname", s.hostname}, {"started_unix_ns", s.started_unix_ns}});
    return out;
  };
  json rows = json::array();
  for (const auto& r : c.rows) {
    json test = nullptr;
    if (r.verdict != Verdict::no_runs)
      test = {{"test", "mann-whitney-u"}, {"u", r.test.u}, {"p_value", r.test.p_value}, {"exact", r.test.exact},
              {"smallest_p", r.smallest_p}};
    rows.push_back({{"experiment", r.experiment}, {"case", r.case_name}, {"key", r.key}, {"label_a", r.label_a},
                    {"label_b", r.label_b}, {"wall_s_a", stats(r.wall_a)}, {"wall_s_b", stats(r.wall_b)},
                    {"ratio_b_over_a", to_json(r.ratio)}, {"change", format_change(r.ratio)},
                    {"p_value", r.verdict == Verdict::no_runs ? json(nullptr) : json(r.test.p_value)},
                    {"significance", test}, {"beyond_threshold", r.beyond_threshold},
                    {"verdict", verdict_name(r.verdict)}, {"verdict_text", verdict_text(r, c.options)},
                    {"flagged", r.changed()}, {"noisy", r.noisy},
                    {"gil_wait_share_a", r.gil_a ? json(*r.gil_a) : json()},
                    {"gil_wait_share_b", r.gil_b ? json(*r.gil_b) : json()},
                    {"gil_wait_change_points", r.gil_a && r.gil_b ? json(100 * (*r.gil_b - *r.gil_a)) : json()}});
  }
  json metrics = json::array();
  for (const auto& m : c.metric_rows)
    metrics.push_back({{"experiment", m.experiment}, {"case", m.case_name}, {"key", m.key}, {"metric", m.metric},
                       {"label_a", m.label_a}, {"label_b", m.label_b}, {"a", stats(m.a)}, {"b", stats(m.b)},
                       {"ratio_b_over_a", m.ratio > 0 ? json(m.ratio) : json(nullptr)},
                       {"p_value", m.a.n && m.b.n ? json(m.test.p_value) : json(nullptr)}});
  const std::string note = comparison_session_note(c);
  return {{"a", c.path_a}, {"b", c.path_b}, {"machines_a", machines(c.machines_a)}, {"machines_b", machines(c.machines_b)},
          {"sessions_a", sessions(c.sessions_a)}, {"sessions_b", sessions(c.sessions_b)},
          {"different_sessions", c.different_sessions()}, {"note", note.empty() ? json(nullptr) : json(note)},
          {"by", c.options.by}, {"threshold_pct", c.options.threshold_pct}, {"alpha", c.options.alpha},
          {"runs_needed_per_side", runs_needed_per_side(c.options.alpha)}, {"rows", rows}, {"changed", c.changed()},
          {"flagged", c.changed()}, {"beyond_threshold", c.beyond_threshold()},
          {"too_few_runs", c.count(Verdict::too_few_runs)}, {"only_in_a", c.only_a}, {"only_in_b", c.only_b},
          {"ambiguous", c.ambiguous}, {"metrics", metrics}};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

namespace {

using CsvValue = std::function<std::string(const RunRecord&)>;

std::string number(std::int64_t v) { return std::to_string(v); }
std::string number(double v) { return json(v).dump(); }  // the shortest form that reads back the same
std::string flag(bool v) { return v ? "true" : "false"; }
std::string flag(const std::optional<bool>& v) { return v ? flag(*v) : ""; }

// A field of the record itself.
template <typename T>
CsvValue field(T RunRecord::*member) {
  return [member](const RunRecord& r) {
    const T& v = r.*member;
    if constexpr (std::is_same_v<T, std::string>) return v;
    else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) return flag(v);
    else if constexpr (std::is_same_v<T, double>) return number(v);
    else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) return v ? number(*v) : std::string();
    else return number(static_cast<std::int64_t>(v));
  };
}
// A field of the case's CPU use, or "" when the case never reported.
CsvValue cpu_field(std::int64_t CaseCpu::*member) {
  return [member](const RunRecord& r) { return r.cpu ? number((*r.cpu).*member) : ""; };
}
// A field of the sampler's summary, or "" without one.
template <typename T>
CsvValue rss_field(T TreeSummary::*member) {
  return [member](const RunRecord& r) { return r.rss ? number(static_cast<std::int64_t>((*r.rss).*member)) : ""; };
}

// The columns, in order, and how each reads a run.
const std::vector<std::pair<std::string, CsvValue>>& csv_layout() {
  using R = RunRecord;
  static const std::vector<std::pair<std::string, CsvValue>> layout{
      {"experiment", field(&R::experiment)}, {"case", field(&R::case_name)}, {"base_case", field(&R::base_case)},
      {"interpreter", field(&R::interpreter)}, {"python", field(&R::python)}, {"free_threaded", field(&R::free_threaded)},
      {"mode", field(&R::mode)},
      {"host", [](const R& r) { return r.origin.host; }},
      {"source", [](const R& r) { return r.origin.source; }},
      {"round", field(&R::round)}, {"repeat", field(&R::repeat)}, {"warmup", field(&R::warmup)},
      {"status", [](const R& r) { return std::string(status_name(r.status)); }},
      {"exit_code", field(&R::exit_code)}, {"signal", field(&R::signal)},
      {"wall_s", [](const R& r) { return fmt::format("{:.9f}", static_cast<double>(r.wall_ns) / 1e9); }},
      {"wall_ns", field(&R::wall_ns)}, {"parent_wall_ns", field(&R::parent_wall_ns)}, {"init_ns", field(&R::init_ns)},
      {"prepare_ns", field(&R::prepare_ns)}, {"import_ns", field(&R::import_ns)}, {"finalize_ns", field(&R::finalize_ns)},
      {"cpu_ns", cpu_field(&CaseCpu::cpu_ns)}, {"user_ns", cpu_field(&CaseCpu::user_ns)}, {"sys_ns", cpu_field(&CaseCpu::sys_ns)},
      {"children_user_ns", cpu_field(&CaseCpu::children_user_ns)}, {"children_sys_ns", cpu_field(&CaseCpu::children_sys_ns)},
      {"cpu_per_wall", field(&R::cpu_per_wall)}, {"tree_cpu_ns", field(&R::tree_cpu_ns)}, {"max_rss_kb", field(&R::max_rss_kb)},
      {"peak_tree_rss_bytes", rss_field(&TreeSummary::peak_tree_rss_bytes)},
      {"peak_root_rss_bytes", rss_field(&TreeSummary::peak_root_rss_bytes)},
      {"peak_threads", rss_field(&TreeSummary::peak_threads)}, {"peak_processes", rss_field(&TreeSummary::peak_processes)},
      {"samples", rss_field(&TreeSummary::samples)},
      {"voluntary_switches", cpu_field(&CaseCpu::voluntary_switches)},
      {"involuntary_switches", cpu_field(&CaseCpu::involuntary_switches)},
      {"gil_enabled", field(&R::gil_enabled)}, {"gil_forced", field(&R::gil_forced)},
      // Module names hold no spaces.
      {"gil_reenabled_by", [](const R& r) { return join(r.gil_reenabled_by, " "); }},
      // Empty where the run has no thread states, or they could not tell GIL waits from lock waits.
      {"gil_wait_share", [](const R& r) {
         return r.thread_states && gil_told_apart(*r.thread_states) ? number(r.thread_states->gil_wait_share()) : std::string();
       }},
      {"expect_ok", field(&R::expect_ok)},
      {"error_type", [](const R& r) { return r.error ? r.error->type : ""; }},
      {"result", [](const R& r) {
         return r.has_result ? r.result.dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
       }},
      {"metrics", [](const R& r) {
         return r.metrics.empty() ? std::string() : r.metrics.dump(-1, ' ', false, json::error_handler_t::replace);
       }}};
  return layout;
}

}  // namespace

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, value] : csv_layout()) out.push_back(name);
    return out;
  }();
  return names;
}

void write_runs_csv(const ReportModel& model, const std::function<void(std::string_view)>& out) {
  out(join(csv_columns(), ",") + "\r\n");
  for (const auto& s : model.sections)
    for (const auto& r : s.runs) {
      std::vector<std::string> row;
      for (const auto& [name, value] : csv_layout()) row.push_back(csv_field(value(r)));
      out(join(row, ",") + "\r\n");
    }
}

std::string runs_csv(const ReportModel& model) {
  std::string out;
  write_runs_csv(model, [&](std::string_view text) { out.append(text); });
  return out;
}

}  // namespace gilhost
