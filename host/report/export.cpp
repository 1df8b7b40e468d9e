#include "report/export.hpp"

#include <fmt/format.h>

#include "util/strings.hpp"

namespace gilhost {

namespace {

nlohmann::json stats_json(const Stats& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"mad", s.mad}, {"mean", s.mean}, {"stdev", s.stdev}};
}

nlohmann::json build_json(const BuildInfo& b) {
  return {{"label", b.label}, {"original_label", b.original_label}, {"host", b.host}, {"version", b.version},
          {"free_threaded", b.free_threaded}, {"gil_forced", b.gil_forced}, {"mode", b.mode}, {"compiler", b.compiler}, {"source", b.source},
          {"executable", b.executable}, {"libpython", b.libpython}, {"build_flags", b.build_flags}};
}

}  // namespace

nlohmann::json summary_json(const ReportModel& model) {
  nlohmann::json experiments = nlohmann::json::array();
  for (const auto& s : model.sections) {
    const Summary& sum = s.summary;
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& c : sum.cases)
      for (const auto& i : sum.interpreters) {
        const Cell* cell = sum.cell(c, i);
        if (!cell) continue;
        nlohmann::json j = {{"case", c},
                            {"interpreter", i},
                            {"runs", cell->runs.size()},
                            {"wall_s", stats_json(cell->wall_s)},
                            {"cpu_per_wall", stats_json(cell->cpu_per_wall)},
                            {"init_s", stats_json(cell->init_s)},
                            {"peak_tree_rss_bytes", cell->peak_tree_rss_bytes},
                            {"max_rss_bytes", cell->max_rss_bytes},
                            {"peak_threads", cell->peak_threads},
                            {"peak_processes", cell->peak_processes},
                            {"voluntary_switches", stats_json(cell->voluntary_switches)},
                            {"involuntary_switches", stats_json(cell->involuntary_switches)},
                            {"statuses", cell->statuses},
                            {"result", cell->result_text},
                            {"expectations_ok", cell->expectations_ok()},
                            {"runs_failed_expectations", cell->runs_failed_expectations},
                            {"failures", cell->failures},
                            {"ratio_to_baseline_case", cell->ratio ? stats_json(*cell->ratio) : nlohmann::json()},
                            {"gil_enabled", cell->gil_enabled ? nlohmann::json(*cell->gil_enabled) : nlohmann::json()},
                            {"gil_forced", cell->gil_forced},
                            {"gil_reenabled_by", cell->gil_reenabled_by},
                            {"free_threaded", cell->free_threaded},
                            {"mode", cell->mode}};
        if (!s.baseline_python.empty()) {
          auto it = s.vs_baseline.find({c, i});
          auto base = s.baseline_of.find(i);
          j["vs_baseline_python"] = it == s.vs_baseline.end() ? nlohmann::json() : it->second.to_json();
          j["baseline_build"] = base == s.baseline_of.end() ? nlohmann::json() : nlohmann::json(base->second);
        }
        cells.push_back(j);
      }
    nlohmann::json builds = nlohmann::json::array();
    for (const auto& b : s.builds) builds.push_back(build_json(b));
    nlohmann::json ex = {{"experiment", s.experiment},
                         {"description", s.context.description},
                         {"profile", s.profile()},
                         {"baseline_case", sum.baseline},
                         {"sources", s.sources},
                         {"machines", s.machines},
                         {"builds", builds},
                         {"cases", sum.cases},
                         {"interpreters", sum.interpreters},
                         {"cells", cells},
                         {"skips", sum.skips},
                         {"expectation_failures", sum.expectation_failures},
                         {"article", s.context.article}};
    if (!s.baseline_python.empty()) ex["baseline_python"] = s.baseline_python;
    if (!s.notes.empty()) ex["notes"] = s.notes;
    experiments.push_back(ex);
  }
  return {{"format", "gilhost-summary"}, {"version", 1}, {"files", model.files}, {"relabeled", model.relabeled},
          {"experiments", experiments}};
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

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> cols{
      "experiment", "case", "base_case", "interpreter", "python", "free_threaded", "mode", "host", "source", "round", "repeat",
      "warmup", "status", "exit_code", "signal", "wall_s", "wall_ns", "parent_wall_ns", "init_ns", "prepare_ns", "finalize_ns",
      "cpu_ns", "user_ns", "sys_ns", "children_user_ns", "children_sys_ns", "cpu_per_wall", "tree_cpu_ns", "max_rss_kb",
      "peak_tree_rss_bytes", "peak_root_rss_bytes", "peak_threads", "peak_processes", "samples", "voluntary_switches",
      "involuntary_switches", "gil_enabled", "gil_forced", "gil_reenabled_by", "expect_ok", "error_type", "result"};
  return cols;
}

namespace {

std::string scalar(const nlohmann::json& j) {
  if (j.is_null()) return "";
  if (j.is_string()) return j.get<std::string>();
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  return j.dump();  // numbers: shortest form that reads back the same
}

std::string field(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(key);
  return it == obj.end() ? "" : scalar(*it);
}

// The strings of a JSON list, space-separated (module names hold no spaces).
std::string words(const nlohmann::json& list) {
  std::vector<std::string> out;
  if (list.is_array())
    for (const auto& x : list)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return join(out, " ");
}

}  // namespace

std::string runs_csv(const ReportModel& model) {
  std::string out;
  const auto& cols = csv_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + cols[i];
  out += "\r\n";
  for (const auto& s : model.sections)
    for (const auto& r : s.records) {
      if (r.value("type", "") != "run") continue;
      const nlohmann::json cpu = r.value("cpu", nlohmann::json::object());
      const nlohmann::json rss = r.contains("rss") && r["rss"].is_object() ? r["rss"] : nlohmann::json::object();
      const nlohmann::json err = r.value("error", nlohmann::json());
      std::vector<std::string> row;
      for (const auto& c : cols) {
        if (c == "wall_s") row.push_back(r.contains("wall_ns") ? fmt::format("{:.9f}", static_cast<double>(r.value("wall_ns", std::int64_t{0})) / 1e9) : "");
        else if (c == "cpu_ns" || c == "user_ns" || c == "sys_ns" || c == "children_user_ns" || c == "children_sys_ns" ||
                 c == "voluntary_switches" || c == "involuntary_switches")
          row.push_back(field(cpu, c.c_str()));
        else if (c == "peak_tree_rss_bytes" || c == "peak_root_rss_bytes" || c == "peak_threads" || c == "peak_processes" || c == "samples")
          row.push_back(field(rss, c.c_str()));
        else if (c == "error_type") row.push_back(field(err, "type"));
        else if (c == "gil_reenabled_by") row.push_back(words(r.value("gil_reenabled_by", nlohmann::json::array())));
        else if (c == "result") row.push_back(r.value("has_result", false) && r.contains("result") ? r["result"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) : "");
        else row.push_back(field(r, c.c_str()));
      }
      for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_field(row[i]);
      out += "\r\n";
    }
  return out;
}

}  // namespace gilhost
